"""A real single-node Slurm cluster for tests, started by hand in a temporary directory.

    with SlurmCluster() as cluster:
        job = cluster.sbatch("job.sbatch", args=["cfg.yaml"], env={...}, options=["--ntasks=4"])
        try:
            info = cluster.wait(job, states={"COMPLETED"}, watch=lambda: {"log": size(log)})
            print(info["ExitCode"], cluster.job_info(job)["Restarts"])
        finally:
            cluster.cancel([job])  # whatever happened: the job leaves the queue

Waits follow progress, not the clock: `wait` goes on while anything it watches changes (the
job's state, reason and restart count, plus what `watch()` returns: a log's size, a study's
trial count) and fails only when nothing has changed for `stall_s` seconds (STALL_S), or at a
backstop cap (`cap_s`, and the cluster's `deadline` for the whole run). Its error says what it
saw: every change with its time, the job as scontrol and squeue show it, `describe()`'s text
(the job's log, the study) and the daemons' logs. On a loaded machine everything is slower (a
batch script has been seen to start 69 s after slurmd launched it), but it still moves.

What it starts, as root, all of it inside one temporary directory (removed at the end):

* `munged` with its own key, socket, pid, seed and log files (the system's munged, if any, is
  neither used nor touched);
* `slurmctld` and `slurmd` in the foreground (`-D`), as children of this process, with a
  generated `slurm.conf` (free TCP ports picked at start, state and spool folders in the temporary
  directory, `AuthInfo=socket=...` pointing at our munged).

Client commands (`sbatch`, `scontrol`, `squeue`, `scancel`, and `srun` inside jobs) find the
cluster through `SLURM_CONF`, which `cluster.env` carries; `sbatch` propagates it into the jobs.

The node is this machine, named as `hostname -s` says (so Open MPI's `mpirun` inside a job sees
the allocated node as the local one), at 127.0.0.1, with `CPUs = max(cpus, os.cpu_count())`
declared and `SlurmdParameters=config_overrides`, so a job may ask for more tasks than the
machine has cores (4 tasks on a 2-core machine) and the node is not drained for it.

With `bed=` a test bed of network namespaces (tests/multinode/netns_testbed.py's TestBed), the
cluster has one node per host instead: a slurmd per host namespace (`slurmd -N HOST`, started
with nsenter under the host's name; NodeName=HOST NodeAddr=its address, SlurmdSpoolDir,
SlurmdPidFile and SlurmdLogFile per node through %n), slurmctld on the bed's switch at an address
of its own on the bridge (bed.switch_address()), so that no host's loss takes it away, and the
client commands run in the switch's namespace. munged stays in the machine's namespace: its
socket is a file every namespace reaches. `slurmd_timeout_s` sets SlurmdTimeout: how soon a node
that stopped answering is marked DOWN (its jobs then requeued or cancelled). The watchdog also
deletes the bed's namespaces, with every process in them, and its folders when the test is killed.

Behaviours worth knowing (measured with Debian 12's slurm-wlm 22.05.8; see test_slurm.py):

* A requeued batch job stays PENDING with Reason=BeginTime until now + cred_expire + 1 s
  (measured: EligibleTime = requeue time + 121 s with the default cred_expire of 120 s): Slurm
  will not start it again before the job credential of the last run has expired. It then starts
  at the main scheduler's next pass (every sched_interval seconds, default 60: up to ~3 minutes
  after the requeue on a default cluster). This cluster sets `AuthInfo=...,cred_expire=10` and
  `SchedulerParameters=sched_interval=1,batch_sched_delay=0`, so a requeued job starts again
  about 11 s later by itself, and a submitted one within a second (not up to 3 s later);
  `release_begin_time()` (`scontrol update jobid=N StartTime=now`) starts it at once.
* `scontrol requeue` of a running job ends the run like a cancel (SIGTERM to the batch shell and
  every process of the job, "CANCELLED ... DUE TO JOB REQUEUE" in the log) unless the batch
  script has already exited; the job keeps its id, Restarts and SLURM_RESTART_COUNT count up.
* `--signal=B:USR1@T` and `scancel --signal=USR1 --batch` signal the batch shell only, not its
  children (mpirun and the ranks), so the batch script must pass the signal on itself. A plain
  `scancel` sends SIGTERM to every process of the job, mpirun included.

Stopping (`stop()`, also run by `__exit__` when the test fails, on KeyboardInterrupt, and on
SIGTERM, which the context manager turns into KeyboardInterrupt): every job of this cluster is
cancelled, the daemons get SIGTERM (then SIGKILL), and any process left that belongs to this
cluster (a `slurmstepd` holding a file of our directory open, or a process whose environment
names our `SLURM_CONF`: the batch scripts, mpirun, the hpo ranks) is killed. No other process is
touched. SIGINT and SIGTERM are held back while `stop()` runs, so a second signal cannot cut the
clean-up short.

A test killed outright is cleaned up too. ctest (3.25 here) ends a test past its TIMEOUT by
SIGSTOP + SIGKILL of the test's whole process tree, children first, with no signal it could
catch; the jobs' processes are not in that tree (slurmd daemonizes each slurmstepd). So the
cluster starts a watchdog outside the tree (forked twice, in its own session): it polls this
process and, once it is gone without `stop()`, kills what is left of the cluster (the daemons,
the slurmstepd's and the jobs' processes) and removes the directory. The daemons are also
started with PR_SET_PDEATHSIG (SIGTERM when this process dies).
"""

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "scontrol", "squeue", "scancel", "munge")
# States after which a job will not run again by itself.
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                "BOOT_FAIL", "DEADLINE", "PREEMPTED"}
CRED_EXPIRE_S = 10  # how long a requeued job waits before it may start again (Slurm: 120)
# A wait fails when nothing it watches has changed for this long. Generous: on a loaded 2-core
# machine a batch script has been seen to start 69 s after slurmd launched it.
STALL_S = 240
# The backstop of one wait, whatever it sees (a job that keeps changing but never gets there).
CAP_S = 600


class SlurmError(RuntimeError):
    """The cluster did not come up, a command failed, or a job did not reach a state in time."""


def missing_requirements():
    """Why a SlurmCluster cannot start here (an empty list when it can): missing binaries, not root."""
    reasons = ["%s not found on PATH" % name for name in DAEMONS + CLIENTS
               if shutil.which(name) is None and shutil.which(name, path="/usr/sbin:/sbin") is None]
    if os.geteuid() != 0:
        reasons.append("not running as root (slurmd must run as root to start jobs)")
    return reasons


def _which(name):
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        raise SlurmError("%s not found" % name)
    return found


def _die_with_parent():
    """preexec_fn of the daemons: SIGTERM them when this process dies, even by SIGKILL (a test
    killed by its timeout), so no daemon outlives the test (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _netns(name):
    """argv prefix that runs a command in network namespace `name` (made by `ip netns add`)."""
    return ["nsenter", "--net=/run/netns/" + name]


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memory_mb():
    """This machine's memory in MB (declared as the node's RealMemory, so --mem requests fit)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return max(1, int(line.split()[1]) // 1024)
    except (OSError, ValueError, IndexError):
        pass
    return 1


def _tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as error:
        return "(cannot read %s: %s)\n" % (path, error)


def parse_scontrol(text):
    """`scontrol show job -o` output (KEY=VALUE pairs, values may hold spaces) as a dict."""
    fields = {}
    # A key is a word (letters, digits, ':', '/', '_', '.') followed by '=' and preceded by a space.
    pieces = re.split(r" (?=[A-Za-z][\w:/.]*=)", text.strip())
    for piece in pieces:
        key, sep, value = piece.partition("=")
        if sep:
            fields[key] = value
    return fields


def _environ(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        return f.read().split(b"\0")


def kill_leftovers(root, jobs=None):
    """Kills (SIGKILL) the processes of the cluster in `root` still alive: processes whose
    environment names its slurm.conf (the daemons, the batch scripts, mpirun, the ranks) and
    slurmstepd's holding a file of that directory open. With `jobs` (job ids), only the job
    processes of those jobs (SLURM_JOB_ID or SLURM_ARRAY_JOB_ID among them). Returns how many."""
    marker = ("SLURM_CONF=" + os.path.join(root, "slurm.conf")).encode()
    wanted = None if jobs is None else {str(job).encode() for job in jobs}
    killed = 0
    for pid_name in os.listdir("/proc"):
        if not pid_name.isdigit() or int(pid_name) == os.getpid():
            continue
        pid = int(pid_name)
        try:
            environ = _environ(pid)
            ours = marker in environ
            if ours and wanted is not None:
                ids = {entry.partition(b"=")[2] for entry in environ
                       if entry.startswith((b"SLURM_JOB_ID=", b"SLURM_ARRAY_JOB_ID="))}
                ours = bool(ids & wanted)
            elif not ours and wanted is None:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().strip() == "slurmstepd":
                        fds = "/proc/%d/fd" % pid
                        ours = any(os.readlink(os.path.join(fds, fd)).startswith(root + "/")
                                   for fd in os.listdir(fds))
            if ours:
                os.kill(pid, signal.SIGKILL)
                killed += 1
        except (OSError, ValueError):
            continue
    return killed


def _start_time(pid):
    """The start time of process `pid` (clock ticks after boot), None when there is none or it
    has exited (a zombie): with the pid it names one process for good (a pid may be reused)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rpartition(")")[2].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _delete_namespaces(names, folders=()):
    """Kills every process in the network namespaces `names` and deletes them, then removes
    `folders` and Open MPI's session folders named after them (a test bed's hosts, switch and
    folder, when its test was killed before it could)."""
    for name in names:
        for _ in range(3):
            pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True,
                                  text=True).stdout.split()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    for folder in list(folders) + [path for name in names for path in
                                   glob.glob(os.path.join(tempfile.gettempdir(),
                                                          "ompi.%s.*" % name))]:
        shutil.rmtree(folder, ignore_errors=True)


def _watchdog(root, parent, keep, namespaces=(), folders=()):
    """`python3 slurm_cluster.py --watchdog ROOT PARENT [--keep] [--netns NS]... [--rm DIR]...`,
    started by
    SlurmCluster.start(): forks into the background, outside the test's process tree (ctest kills
    a timed-out test's whole tree with SIGKILL), prints its pid and, once process PARENT is gone,
    kills what is left of the cluster in ROOT, removes ROOT (unless --keep) and deletes the
    network namespaces NS (a test bed's) with every process in them, and the folders DIR (the
    bed's). stop() ends it first with SIGKILL."""
    parent_start = _start_time(parent)
    if os.fork() > 0:
        os._exit(0)  # the child carries on, its parent gone: nobody's child in the test's tree
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(os.getpid(), flush=True)
    log = os.open(os.path.join(root, "log", "watchdog.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                  0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    # Hold none of the test's pipes open (ctest waits for the test's output to close).
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    while parent_start is not None and _start_time(parent) == parent_start:
        time.sleep(0.5)
    print("[%s] process %d is gone without stopping the cluster: cleaning up %s"
          % (time.strftime("%H:%M:%S"), parent, root), flush=True)
    for _ in range(3):  # a job process may fork while we kill: go round until none is left
        if kill_leftovers(root) == 0:
            break
        time.sleep(1)
    _delete_namespaces(namespaces, folders)
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    os._exit(0)


def _queue_lines(text, jobs):
    """The lines of `squeue -h -o "%F|%i|%T|%r"` that belong to `jobs` (ids as sbatch gave them:
    an array job's id covers its tasks, "N_I" names one task)."""
    jobs = {str(job) for job in jobs}
    found = []
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) >= 2 and (fields[0] in jobs or fields[1] in jobs
                                 or fields[1].split("_")[0] in jobs):
            found.append(line.strip())
    return found


class ProgressWait:
    """Keeps track of a wait that goes on while it sees progress.

        waiting = ProgressWait("job 3 COMPLETED", stall_s=240, cap_s=600)
        while not done():
            waiting.saw({"state": ..., "log bytes": ...})  # a dict of what shows progress
            waiting.check(describe)                         # raises SlurmError when stalled
            time.sleep(0.5)

    Fails when the snapshot has not changed for stall_s seconds, when cap_s seconds have passed
    in all, or at `deadline` (time.monotonic()). The error lists every change with its time
    and describe()'s text."""

    def __init__(self, what, stall_s=STALL_S, cap_s=CAP_S, deadline=None):
        self.what = what
        self.stall_s, self.cap_s, self.deadline = stall_s, cap_s, deadline
        self.start = self.last_change = time.monotonic()
        self.snapshot = None
        self.changes = []  # (seconds since the start, {key: new value})

    def saw(self, snapshot):
        if snapshot == self.snapshot:
            return
        now = time.monotonic()
        old = self.snapshot or {}
        changed = {key: value for key, value in snapshot.items() if old.get(key) != value}
        self.changes.append((now - self.start, changed))
        self.snapshot, self.last_change = dict(snapshot), now

    def elapsed(self):
        return time.monotonic() - self.start

    def check(self, describe=None):
        now = time.monotonic()
        why = None
        if now - self.last_change > self.stall_s:
            why = "no progress for %.0fs (the stall limit)" % (now - self.last_change)
        elif now - self.start > self.cap_s:
            why = "still not there after %.0fs (the cap of one wait), though it moved" \
                % (now - self.start)
        elif self.deadline is not None and now > self.deadline:
            why = "the run's time budget is spent (%.0fs into this wait)" % (now - self.start)
        if why:
            raise SlurmError(self.report(why, describe))

    def report(self, why, describe=None):
        lines = ["waited for %s: %s" % (self.what, why), "what it saw (seconds into the wait):"]
        changes = self.changes
        if len(changes) > 40:
            lines.append("  (%d earlier changes left out)" % (len(changes) - 40))
            changes = changes[-40:]
        for seconds, changed in changes:
            lines.append("  +%5.1fs %s" % (seconds, ", ".join(
                "%s=%s" % (key, value) for key, value in changed.items())))
        lines.append("  +%5.1fs now (last change %.0fs ago)"
                     % (self.elapsed(), time.monotonic() - self.last_change))
        if describe is not None:
            try:
                lines.append(describe())
            except Exception as error:  # the report must not hide the failure  # noqa: BLE001
                lines.append("(describing it failed: %r)" % (error,))
        return "\n".join(lines)


class SlurmCluster:
    """A single-node Slurm cluster (munged, slurmctld, slurmd) in a temporary directory.

    Not thread-safe. `start()`/`stop()` or use it as a context manager; `stop()` is idempotent.
    As a context manager it also turns SIGTERM into KeyboardInterrupt while it is open (unless
    SIGTERM already has a handler), so a terminated test stops its cluster.

    `deadline` (a time.monotonic() value, or None): no wait goes on past it (the run's backstop,
    set below the test runner's timeout so that a failure is reported, not killed).
    """

    def __init__(self, cpus=4, keep=False, prefix="hpo-slurm-", deadline=None, bed=None,
                 slurmd_timeout_s=60):
        self.cpus = max(int(cpus), os.cpu_count() or 1)
        self.keep = keep  # keep the temporary directory (for debugging)
        self.prefix = prefix
        self.deadline = deadline
        self.slurmd_timeout_s = slurmd_timeout_s
        self.root = None
        self.bed = bed
        if bed is None:
            # One node: this machine, under its own name, at 127.0.0.1; clients run here.
            self.node = socket.gethostname().split(".")[0]
            self.nodes = [(self.node, "127.0.0.1")]
            self.controller = (self.node, "127.0.0.1")
            self.client_prefix = []
        else:
            # One node per host of the test bed (its namespace, name and address); the
            # controller on the bed's switch (its own address on the bridge), which no host's
            # loss takes away; clients run in the switch's namespace, the only one that reaches it.
            self.nodes = list(zip(bed.names, bed.addresses))
            self.node = self.nodes[0][0]
            self.controller = (bed.switch, bed.switch_address())
            self.client_prefix = _netns(bed.switch)
        self.env = None
        self._procs = {}  # daemon name -> Popen
        self._watchdog = None  # (pid, start time): cleans up if this process dies without stop()
        self._log_files = []
        self._sigterm = None  # the SIGTERM handler __enter__ replaced

    # ----------------------------------------------------------------------------- start, stop
    def __enter__(self):
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            def terminated(signum, frame):
                signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the clean-up runs next
                raise KeyboardInterrupt("signal %d" % signum)
            self._sigterm = signal.signal(signal.SIGTERM, terminated)
        try:
            self.start()
        except BaseException:
            self._restore_sigterm()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.stop()
        finally:
            self._restore_sigterm()
        return False

    def _restore_sigterm(self):
        if self._sigterm is not None:
            signal.signal(signal.SIGTERM, self._sigterm)
            self._sigterm = None

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def start(self, timeout=180):
        missing = missing_requirements()
        if missing:
            raise SlurmError("cannot start a Slurm cluster: " + "; ".join(missing))
        self.root = tempfile.mkdtemp(prefix=self.prefix)
        try:
            # munged wants every folder on the socket's path searchable by all and the key
            # readable by its owner only.
            os.chmod(self.root, 0o755)
            for sub in ("munge", "state", "spool", "log", "jobs"):
                os.mkdir(self.path(sub), 0o755)
            for name, _ in self.nodes:
                os.mkdir(self.path("spool", name), 0o755)
            self._start_watchdog()
            self._start_munged()
            self._write_conf()
            self.env = dict(os.environ, SLURM_CONF=self.path("slurm.conf"))
            for name in list(self.env):  # nothing of an outer Slurm job may leak in
                if name.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and \
                        name != "SLURM_CONF":
                    del self.env[name]
            self._spawn("slurmctld", self._on(self.controller[0], [
                _which("slurmctld"), "-D", "-c", "-i", "-f", self.path("slurm.conf")]))
            for name, _ in self.nodes:
                self.start_slurmd(name)
            for name, _ in self.nodes:
                self._wait_for_idle_node(timeout, name)
        except BaseException:
            self.stop()
            raise
        return self

    def _on(self, host, argv):
        """argv run on `host` (a node's or the controller's name): as it is on a single-node
        cluster; on a test bed, in that host's network namespace under its host name."""
        if self.bed is None:
            return list(argv)
        # nsenter, not `ip netns exec`: that mounts a sysfs of the namespace over /sys, without
        # /sys/fs/cgroup, and slurmd will not start without it ("Unable to initialize cgroup
        # plugin") even with proctrack/linuxproc and task/none.
        return _netns(host) + ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
                               host] + list(argv)

    def start_slurmd(self, node):
        """Starts (or starts again, after kill_slurmd) the slurmd of node `node`."""
        self._spawn("slurmd" if self.bed is None else "slurmd-" + node, self._on(node, [
            _which("slurmd"), "-D", "-N", node, "-f", self.path("slurm.conf")]))

    def _slurmds(self):
        return [name for name in self._procs if name == "slurmd" or name.startswith("slurmd-")]

    def _start_watchdog(self):
        starter = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--watchdog", self.root, str(os.getpid())]
            + (["--keep"] if self.keep else [])
            + [arg for ns in ([] if self.bed is None else [self.bed.switch] + self.bed.names)
               for arg in ("--netns", ns)]
            + ([] if self.bed is None or not self.bed.workdir else ["--rm", self.bed.workdir]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            start_new_session=True)
        with starter.stdout:
            line = starter.stdout.readline()
        starter.wait()
        try:
            pid = int(line)
        except ValueError:
            raise SlurmError("the cluster's watchdog did not start (exit %s, said %r)"
                             % (starter.returncode, line))
        self._watchdog = (pid, _start_time(pid))

    def _stop_watchdog(self):
        if self._watchdog is None:
            return
        pid, started = self._watchdog
        self._watchdog = None
        if started is not None and _start_time(pid) == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def _start_munged(self):
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.munge_socket = self.path("munge", "munge.socket")
        self._spawn("munged", [_which("munged"), "--foreground", "--force",
                               "--socket=" + self.munge_socket, "--key-file=" + key,
                               "--log-file=" + self.path("log", "munged.log"),
                               "--pid-file=" + self.path("munge", "munged.pid"),
                               "--seed-file=" + self.path("munge", "munged.seed")])
        deadline = time.monotonic() + 20
        while not os.path.exists(self.munge_socket):
            self._check_alive()
            if time.monotonic() > deadline:
                raise SlurmError("munged did not create its socket\n" + self.logs())
            time.sleep(0.05)

    def _write_conf(self):
        conf = """\
# Generated by tests/deploy/slurm_cluster.py: a single-node test cluster.
ClusterName=hpotest
SlurmctldHost={ctl_name}({ctl_addr})
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge},cred_expire={cred_expire}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={root}/plugstack.conf
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
# The main scheduler also runs every sched_interval seconds (default 60): a requeued job whose
# BeginTime has passed starts at the next pass, no event wakes the scheduler for it. With
# batch_sched_delay=0 a submitted batch job is scheduled at once (by default up to 3 s later).
SchedulerParameters=sched_interval=1,batch_sched_delay=0
ReturnToService=2
JobRequeue=1
SlurmdParameters=config_overrides
# Short waits, so tests are quick: SIGTERM -> SIGKILL after KillWait, completed jobs kept for
# MinJobAge seconds (scontrol show job works on them).
KillWait=10
MinJobAge=600
InactiveLimit=0
SlurmdTimeout={slurmd_timeout}
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
{nodes}PartitionName=debug Nodes={names} Default=YES MaxTime=INFINITE State=UP
""".format(ctl_name=self.controller[0], ctl_addr=self.controller[1], ctld_port=_free_port(),
           slurmd_port=_free_port(), munge=self.munge_socket, cred_expire=CRED_EXPIRE_S,
           root=self.root, slurmd_timeout=self.slurmd_timeout_s, names=",".join(
               name for name, _ in self.nodes), nodes="".join(
               "NodeName={name} NodeAddr={addr} NodeHostname={name} CPUs={cpus} Sockets=1 "
               "CoresPerSocket={cpus} ThreadsPerCore=1 RealMemory={memory_mb} State=UNKNOWN\n"
               .format(name=name, addr=addr, cpus=self.cpus, memory_mb=_memory_mb())
               for name, addr in self.nodes))
        with open(self.path("slurm.conf"), "w") as f:
            f.write(conf)
        with open(self.path("plugstack.conf"), "w") as f:
            f.write("# no SPANK plugins\n")

    def _spawn(self, name, argv):
        log = open(self.path("log", name + ".out"), "wb")
        self._log_files.append(log)
        self._procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, cwd=self.root,
                                             env=dict(os.environ, SLURM_CONF=self.path("slurm.conf")),
                                             preexec_fn=_die_with_parent,
                                             # not in our process group: a Ctrl-C reaches this
                                             # process, which then stops them in order
                                             start_new_session=True)

    def _check_alive(self):
        for name, proc in self._procs.items():
            if proc.poll() is not None:
                raise SlurmError("%s exited with code %d while starting\n%s"
                                 % (name, proc.returncode, self.logs()))

    def _wait_for_idle_node(self, timeout, node):
        # Returns as soon as the node is IDLE; the timeout is a backstop (a loaded machine is
        # slow to start the daemons).
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            self._check_alive()
            done = subprocess.run(self.client_prefix + ["scontrol", "show", "node", "-o", node],
                                  capture_output=True, text=True, env=self.env)
            last = (done.stdout + done.stderr).strip()
            state = parse_scontrol(done.stdout).get("State", "") if done.returncode == 0 else ""
            if state.startswith("IDLE"):
                return
            time.sleep(0.2)
        raise SlurmError("the Slurm node %s did not become IDLE in %ds (last: %s)\n%s"
                         % (node, timeout, last, self.logs()))

    def logs(self, lines=40):
        """The tails of the daemons' logs, for error messages."""
        if self.root is None:
            return ""
        parts = []
        slurmds = sorted(os.path.basename(path) for path in
                         glob.glob(self.path("log", "slurmd*.log"))
                         + glob.glob(self.path("log", "slurmd*.out")))
        for name in ["munged.log", "munged.out", "slurmctld.log", "slurmctld.out"] + slurmds:
            path = self.path("log", name)
            if os.path.exists(path):
                parts.append("---- %s (last %d lines) ----\n%s" % (path, lines, _tail(path, lines)))
        return "".join(parts)

    def stop(self):
        """Cancels every job, stops the daemons we started, kills every process left of this
        cluster and removes the directory. SIGINT and SIGTERM wait until it is done."""
        if self.root is None:
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            self._stop()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _stop(self):
        try:
            if self._procs.get("slurmctld") and self._procs["slurmctld"].poll() is None:
                subprocess.run(self.client_prefix + ["scancel", "--full", "--user=root"],
                               env=self.env,
                               capture_output=True, timeout=30)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and self._active_jobs():
                    time.sleep(0.2)
        except (OSError, subprocess.SubprocessError):
            pass
        for name in self._slurmds() + ["slurmctld", "munged"]:
            proc = self._procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for _ in range(3):  # a job process may fork while we kill: go round until none is left
            if self._kill_leftovers() == 0:
                break
            time.sleep(0.5)
        self._stop_watchdog()
        for log in self._log_files:
            log.close()
        self._procs, self._log_files = {}, []
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def _active_jobs(self):
        done = subprocess.run(self.client_prefix + ["squeue", "-h", "-o", "%i %T"],
                              capture_output=True, text=True,
                              env=self.env, timeout=30)
        return done.returncode == 0 and done.stdout.strip() != ""

    def _kill_leftovers(self, jobs=None):
        return kill_leftovers(self.root, jobs)

    # ----------------------------------------------------------------------------- commands
    def run(self, argv, check=True, timeout=60):
        """Runs a Slurm client command against this cluster; returns its stdout."""
        done = subprocess.run(self.client_prefix + list(argv), capture_output=True, text=True,
                              env=self.env, timeout=timeout)
        if check and done.returncode != 0:
            raise SlurmError("%s failed (exit %d): %s" % (" ".join(argv), done.returncode,
                                                          (done.stdout + done.stderr).strip()))
        return done.stdout

    def sbatch(self, script, args=(), env=None, options=(), cwd=None):
        """Submits a batch script (`sbatch --parsable OPTIONS SCRIPT ARGS`) with this process's
        environment plus `env`, from `cwd` (the job's SLURM_SUBMIT_DIR). Returns the job id."""
        job_env = dict(self.env, **(env or {}))
        done = subprocess.run(self.client_prefix + ["sbatch", "--parsable"] + list(options)
                              + [script] + list(args),
                              capture_output=True, text=True, env=job_env, cwd=cwd or self.root,
                              timeout=60)
        if done.returncode != 0:
            raise SlurmError("sbatch %s failed (exit %d): %s\n%s"
                             % (script, done.returncode, (done.stdout + done.stderr).strip(),
                                self.logs(15)))
        return done.stdout.strip().split(";")[0]

    def job_info(self, job, attempts=5):
        """`scontrol show job JOB` as a dict (JobState, Restarts, ExitCode, StartTime, ...).
        Retries a few times: on a loaded machine slurmctld may answer late ("Socket timed out")."""
        for attempt in range(attempts):
            try:
                return parse_scontrol(self.run(["scontrol", "show", "job", "-o", str(job)]))
            except (SlurmError, subprocess.TimeoutExpired) as error:
                if attempt == attempts - 1 or "Invalid job id" in str(error):
                    raise
                time.sleep(1)

    def state(self, job):
        return self.job_info(job).get("JobState", "")

    def queue(self, jobs=None):
        """The queue's lines ("ARRAY_JOB_ID|JOB_ID|STATE|REASON": pending, running and completing
        jobs), only those of `jobs` when given. None when squeue does not answer."""
        try:
            done = subprocess.run(self.client_prefix + ["squeue", "-h", "-o", "%F|%i|%T|%r"],
                                  capture_output=True,
                                  text=True, env=self.env, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        if jobs is None:
            return [line.strip() for line in done.stdout.splitlines() if line.strip()]
        return _queue_lines(done.stdout, jobs)

    def describe(self, job, lines=15):
        """The job as scontrol and squeue show it, and the tails of the daemons' logs."""
        try:
            info = self.run(["scontrol", "show", "job", str(job)], check=False, timeout=30)
        except (OSError, subprocess.SubprocessError) as error:
            info = "(scontrol did not answer: %s)" % error
        queue = self.queue()
        return "---- scontrol show job %s ----\n%s\n---- squeue ----\n%s\n%s" % (
            job, info.strip(), "(squeue did not answer)" if queue is None else
            "\n".join(queue) or "(empty)", self.logs(lines))

    def wait(self, job, states=(), until=None, watch=None, describe=None, what=None,
             stall_s=STALL_S, cap_s=CAP_S, poll_s=0.5, release=False):
        """Polls the job until it is in one of `states` (e.g. {"RUNNING"} or {"COMPLETED"}),
        then returns its job_info; or, with `until`, until `until(job_info)` returns a true
        value, which it returns. Raises SlurmError when the job ends in a final state not in
        `states` (before `until` held), or when it stalls: nothing changed for stall_s seconds in
        the job's state, reason, restart count and what `watch()` returns (a dict: a log's size,
        a study's trial count...); cap_s and the cluster's deadline are backstops. The error
        shows what it saw, the job as Slurm shows it, the daemons' logs and describe()'s text.
        With release=True, a pending job held back by a BeginTime in the future (a requeued job)
        is released at once."""
        states = set(states)
        what = what or "job %s %s" % (job, "/".join(sorted(states)) or "(a condition)")
        waiting = ProgressWait(what, stall_s, cap_s, self.deadline)

        errors = []  # scontrol's failures (a busy slurmctld): no news, not progress

        def report():
            # The job's own account (its log) last: a report cut to its end keeps it.
            parts = [self.describe(job)]
            if errors:
                parts.append("scontrol failed %d time(s) while waiting, last: %s"
                             % (len(errors), errors[-1]))
            if describe is not None:
                parts.append(describe())
            return "\n".join(parts)

        while True:
            try:
                info = self.job_info(job, attempts=1)
            except (SlurmError, subprocess.SubprocessError) as failure:
                if "Invalid job id" in str(failure):
                    raise SlurmError("%s: Slurm does not know job %s: %s\n%s"
                                     % (what, job, failure, report()))
                info = None
                errors.append(str(failure).strip())
            if info is not None:
                state = info.get("JobState", "")
                snapshot = {"state": state, "reason": info.get("Reason"),
                            "restarts": info.get("Restarts")}
            else:
                snapshot = dict(waiting.snapshot or {})
            if watch is not None:
                snapshot.update(watch())
            waiting.saw(snapshot)
            if info is not None:
                if state in states:
                    return info
                if until is not None:
                    value = until(info)
                    if value:
                        return value
                if state in FINAL_STATES - states:
                    raise SlurmError(waiting.report("the job ended %s" % state, report))
                if release and state == "PENDING" and info.get("Reason") == "BeginTime":
                    self.release_begin_time(job)
            waiting.check(report)
            time.sleep(poll_s)

    def cancel(self, jobs, grace_s=45, timeout_s=120):
        """Cancels `jobs` (ids as sbatch gave them: an array job's id covers its tasks) and waits
        until they have left the queue (finished jobs: at once). A job still there after grace_s
        seconds has its processes killed (SIGKILL). Raises SlurmError, with the queue, when one
        is still there after timeout_s."""
        jobs = [str(job) for job in jobs]
        if not jobs:
            return
        start = time.monotonic()
        last_scancel, killed = None, False
        while True:
            now = time.monotonic()
            if last_scancel is None or now - last_scancel > 10:  # again: it may have been lost
                try:
                    self.run(["scancel"] + jobs, check=False, timeout=30)
                except (OSError, subprocess.SubprocessError):
                    pass
                last_scancel = now
            left = self.queue(jobs)
            if left == []:
                return
            if now - start > grace_s and not killed:
                killed = True
                count = self._kill_leftovers(jobs)
                print("slurm_cluster: jobs %s still queued %.0fs after scancel (%s): killed %d "
                      "of their processes" % (",".join(jobs), now - start,
                                              "; ".join(left or ["squeue did not answer"]), count),
                      file=sys.stderr, flush=True)
            if now - start > timeout_s:
                raise SlurmError("jobs %s still in the queue %.0fs after scancel: %s\n%s"
                                 % (",".join(jobs), now - start,
                                    "; ".join(left or ["squeue did not answer"]), self.logs(15)))
            time.sleep(0.5)

    def cancel_all(self, timeout_s=120):
        """Cancels every job in the queue and waits until it is empty (see cancel)."""
        left = self.queue()
        if left:
            self.cancel(sorted({line.split("|")[0] for line in left}), timeout_s=timeout_s)

    def signal(self, job, sig="USR1", batch=True):
        """`scancel --signal=SIG [--batch] JOB`: as Slurm's `--signal=B:SIG@T` does before the
        time limit (batch=True: the batch shell only)."""
        self.run(["scancel", "--signal=" + sig] + (["--batch"] if batch else []) + [str(job)])

    def release_begin_time(self, job):
        """Lets a pending job start now (a requeued job otherwise waits cred_expire + 1 s)."""
        self.run(["scontrol", "update", "jobid=%s" % job, "StartTime=now"])



if __name__ == "__main__":
    # python3 slurm_cluster.py --watchdog ROOT PARENT [--keep]: what SlurmCluster.start() runs.
    if len(sys.argv) >= 4 and sys.argv[1] == "--watchdog":
        rest = sys.argv[4:]
        _watchdog(sys.argv[2], int(sys.argv[3]), "--keep" in rest,
                  [rest[i + 1] for i, arg in enumerate(rest[:-1]) if arg == "--netns"],
                  [rest[i + 1] for i, arg in enumerate(rest[:-1]) if arg == "--rm"])
    sys.exit("usage: import slurm_cluster (this module is not a program)")
