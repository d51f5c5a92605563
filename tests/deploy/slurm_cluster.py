"""A real single-node Slurm cluster for tests, started by hand in a temporary directory.

    with SlurmCluster() as cluster:
        job = cluster.sbatch("job.sbatch", args=["cfg.yaml"], env={...}, options=["--ntasks=4"])
        info = cluster.wait(job, states={"COMPLETED"}, timeout=120)
        print(info["ExitCode"], cluster.job_info(job)["Restarts"])

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

Behaviours worth knowing (measured with Debian 12's slurm-wlm 22.05.8; see test_slurm.py):

* A requeued batch job stays PENDING with Reason=BeginTime until now + cred_expire + 1 s
  (measured: EligibleTime = requeue time + 121 s with the default cred_expire of 120 s): Slurm
  will not start it again before the job credential of the last run has expired. It then starts
  at the main scheduler's next pass (every sched_interval seconds, default 60: up to ~3 minutes
  after the requeue on a default cluster). This cluster sets `AuthInfo=...,cred_expire=10` and
  `SchedulerParameters=sched_interval=2`, so a requeued job starts again about 12 s later by
  itself; `release_begin_time()` (`scontrol update jobid=N StartTime=now`) starts it at once.
* `scontrol requeue` of a running job ends the run like a cancel (SIGTERM to the batch shell and
  every process of the job, "CANCELLED ... DUE TO JOB REQUEUE" in the log) unless the batch
  script has already exited; the job keeps its id, Restarts and SLURM_RESTART_COUNT count up.
* `--signal=B:USR1@T` and `scancel --signal=USR1 --batch` signal the batch shell only, not its
  children (mpirun and the ranks), so the batch script must pass the signal on itself. A plain
  `scancel` sends SIGTERM to every process of the job, mpirun included.

Stopping (`stop()`, also run by `__exit__` when the test fails): every job of this cluster is
cancelled, the daemons get SIGTERM (then SIGKILL), and any process left that belongs to this
cluster (a `slurmstepd` holding our log file open, or a process whose environment names our
`SLURM_CONF`) is killed. No other process is touched. The daemons are also started with
PR_SET_PDEATHSIG, so they stop when this process is killed outright (SIGKILL by a test timeout);
a job still running then ends by itself.
"""

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


def kill_leftovers(root):
    """Kills the processes of the cluster in `root` still alive: slurmstepd's holding a file of
    that directory open, and job processes whose environment names its slurm.conf."""
    marker = ("SLURM_CONF=" + os.path.join(root, "slurm.conf")).encode()
    for pid_name in os.listdir("/proc"):
        if not pid_name.isdigit() or int(pid_name) == os.getpid():
            continue
        pid = int(pid_name)
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                ours = marker in f.read().split(b"\0")
            if not ours:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().strip() == "slurmstepd":
                        fds = "/proc/%d/fd" % pid
                        ours = any(os.readlink(os.path.join(fds, fd)).startswith(root + "/")
                                   for fd in os.listdir(fds))
            if ours:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            continue


def _watchdog(root, keep):
    """Runs in a child process started with PR_SET_PDEATHSIG: when the test process dies
    without stopping the cluster (SIGKILL), cleans up what the daemons' own death leaves: the
    jobs' processes, their slurmstepd's and the directory. stop() ends it with SIGKILL first."""
    def cleanup(signum, frame):
        time.sleep(2)  # the daemons got SIGTERM too: let them go first
        kill_leftovers(root)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
        os._exit(0)
    signal.signal(signal.SIGTERM, cleanup)
    if os.getppid() == 1:  # the parent is already gone
        cleanup(0, None)
    while True:
        signal.pause()


class SlurmCluster:
    """A single-node Slurm cluster (munged, slurmctld, slurmd) in a temporary directory.

    Not thread-safe. `start()`/`stop()` or use it as a context manager; `stop()` is idempotent.
    """

    def __init__(self, cpus=4, keep=False, prefix="hpo-slurm-"):
        self.cpus = max(int(cpus), os.cpu_count() or 1)
        self.keep = keep  # keep the temporary directory (for debugging)
        self.prefix = prefix
        self.root = None
        self.node = socket.gethostname().split(".")[0]
        self.env = None
        self._procs = {}  # daemon name -> Popen
        self._watchdog = None  # cleans up if this process dies without stop()
        self._log_files = []

    # ----------------------------------------------------------------------------- start, stop
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def start(self, timeout=60):
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
            self._watchdog = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--watchdog", self.root]
                + (["--keep"] if self.keep else []), preexec_fn=_die_with_parent,
                stdin=subprocess.DEVNULL)
            self._start_munged()
            self._write_conf()
            self.env = dict(os.environ, SLURM_CONF=self.path("slurm.conf"))
            for name in list(self.env):  # nothing of an outer Slurm job may leak in
                if name.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and \
                        name != "SLURM_CONF":
                    del self.env[name]
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-c", "-i",
                                      "-f", self.path("slurm.conf")])
            self._spawn("slurmd", [_which("slurmd"), "-D", "-N", self.node,
                                   "-f", self.path("slurm.conf")])
            self._wait_for_idle_node(timeout)
        except BaseException:
            self.stop()
            raise
        return self

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
SlurmctldHost={node}(127.0.0.1)
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
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
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
# BeginTime has passed starts at the next pass, no event wakes the scheduler for it.
SchedulerParameters=sched_interval=2
ReturnToService=2
JobRequeue=1
SlurmdParameters=config_overrides
# Short waits, so tests are quick: SIGTERM -> SIGKILL after KillWait, completed jobs kept for
# MinJobAge seconds (scontrol show job works on them).
KillWait=10
MinJobAge=600
InactiveLimit=0
SlurmdTimeout=60
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={node} NodeAddr=127.0.0.1 NodeHostname={node} CPUs={cpus} Sockets=1 CoresPerSocket={cpus} ThreadsPerCore=1 RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
""".format(node=self.node, ctld_port=_free_port(), slurmd_port=_free_port(),
           munge=self.munge_socket, cred_expire=CRED_EXPIRE_S, root=self.root, cpus=self.cpus,
           memory_mb=_memory_mb())
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
                                             preexec_fn=_die_with_parent)

    def _check_alive(self):
        for name, proc in self._procs.items():
            if proc.poll() is not None:
                raise SlurmError("%s exited with code %d while starting\n%s"
                                 % (name, proc.returncode, self.logs()))

    def _wait_for_idle_node(self, timeout):
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            self._check_alive()
            done = subprocess.run(["scontrol", "show", "node", "-o", self.node],
                                  capture_output=True, text=True, env=self.env)
            last = (done.stdout + done.stderr).strip()
            state = parse_scontrol(done.stdout).get("State", "") if done.returncode == 0 else ""
            if state.startswith("IDLE"):
                return
            time.sleep(0.2)
        raise SlurmError("the Slurm node did not become IDLE in %ds (last: %s)\n%s"
                         % (timeout, last, self.logs()))

    def logs(self, lines=40):
        """The tails of the daemons' logs, for error messages."""
        if self.root is None:
            return ""
        parts = []
        for name in ("munged.log", "munged.out", "slurmctld.log", "slurmctld.out", "slurmd.log",
                     "slurmd.out"):
            path = self.path("log", name)
            if os.path.exists(path):
                parts.append("---- %s (last %d lines) ----\n%s" % (path, lines, _tail(path, lines)))
        return "".join(parts)

    def stop(self):
        """Cancels every job, stops the daemons we started and removes the directory."""
        if self.root is None:
            return
        try:
            if self._procs.get("slurmctld") and self._procs["slurmctld"].poll() is None:
                subprocess.run(["scancel", "--full", "--user=root"], env=self.env,
                               capture_output=True, timeout=30)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and self._active_jobs():
                    time.sleep(0.2)
        except (OSError, subprocess.SubprocessError):
            pass
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self._procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._kill_leftovers()
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None
        for log in self._log_files:
            log.close()
        self._procs, self._log_files = {}, []
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def _active_jobs(self):
        done = subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True,
                              env=self.env, timeout=30)
        return done.returncode == 0 and done.stdout.strip() != ""

    def _kill_leftovers(self):
        kill_leftovers(self.root)

    # ----------------------------------------------------------------------------- commands
    def run(self, argv, check=True, timeout=60):
        """Runs a Slurm client command against this cluster; returns its stdout."""
        done = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and done.returncode != 0:
            raise SlurmError("%s failed (exit %d): %s" % (" ".join(argv), done.returncode,
                                                          (done.stdout + done.stderr).strip()))
        return done.stdout

    def sbatch(self, script, args=(), env=None, options=(), cwd=None):
        """Submits a batch script (`sbatch --parsable OPTIONS SCRIPT ARGS`) with this process's
        environment plus `env`, from `cwd` (the job's SLURM_SUBMIT_DIR). Returns the job id."""
        job_env = dict(self.env, **(env or {}))
        done = subprocess.run(["sbatch", "--parsable"] + list(options) + [script] + list(args),
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

    def wait(self, job, states, timeout=120, poll_s=0.25, release=False):
        """Polls until the job is in one of `states` (e.g. {"RUNNING"} or {"COMPLETED"}); returns
        its job_info. Raises SlurmError, with the job and the daemons' logs, on a timeout or when
        the job ends in a final state not asked for. With release=True, a pending job held back
        by a BeginTime in the future (a requeued job) is released at once."""
        states = set(states)
        deadline = time.monotonic() + timeout
        info = {}
        while time.monotonic() < deadline:
            info = self.job_info(job)
            state = info.get("JobState", "")
            if state in states:
                return info
            if state in FINAL_STATES - states:
                raise SlurmError("job %s ended %s, not %s: %s\n%s"
                                 % (job, state, "/".join(sorted(states)), info, self.logs(15)))
            if release and state == "PENDING" and info.get("Reason") == "BeginTime":
                self.release_begin_time(job)
            time.sleep(poll_s)
        raise SlurmError("job %s not %s after %ds: %s\n%s"
                         % (job, "/".join(sorted(states)), timeout, info, self.logs(15)))

    def signal(self, job, sig="USR1", batch=True):
        """`scancel --signal=SIG [--batch] JOB`: as Slurm's `--signal=B:SIG@T` does before the
        time limit (batch=True: the batch shell only)."""
        self.run(["scancel", "--signal=" + sig] + (["--batch"] if batch else []) + [str(job)])

    def release_begin_time(self, job):
        """Lets a pending job start now (a requeued job otherwise waits cred_expire + 1 s)."""
        self.run(["scontrol", "update", "jobid=%s" % job, "StartTime=now"])

    def cancel(self, job):
        self.run(["scancel", str(job)], check=False)


if __name__ == "__main__":
    # python3 slurm_cluster.py --watchdog ROOT [--keep]: the watchdog SlurmCluster.start() runs.
    if len(sys.argv) >= 3 and sys.argv[1] == "--watchdog":
        _watchdog(sys.argv[2], "--keep" in sys.argv[3:])
    sys.exit("usage: import slurm_cluster (this module is not a program)")
