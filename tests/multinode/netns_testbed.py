"""A multi-node test bed on one machine: each "host" is a network namespace with its own hostname
(a UTS namespace per command started in it), all on a private /24 joined by a bridge that lives in
a "switch" namespace of its own, so the machine's own network is never touched. Open MPI treats
each namespace as a node when its daemons start there, through an rsh agent that runs the daemon's
command inside the host's namespaces.

    with TestBed(hosts=2, slots=2) as bed:
        done = bed.mpirun([HPO, "sweep", ...], np=4, timeout=300)

Everything it makes (namespaces, veth pairs, the bridge, processes inside the namespaces, the agent
script and the hostfile) is removed when the `with` block ends, at interpreter exit and on SIGTERM,
whether the test passed or not. `unavailable()` says why a machine cannot host it (not root, no
CAP_NET_ADMIN, no `ip` or `unshare`), for the test to exit with SKIP (77).
"""

import atexit
import glob
import ipaddress
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from hpo_test_support import MPI_ENV, run_in_own_session  # noqa: E402

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests
_LIVE = []  # beds not closed yet, for atexit and SIGTERM


def _ip(*args, check=True):
    done = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), done.stderr.strip()))
    return done


def unavailable():
    """Why network namespaces cannot be made here (a message), or None when they can."""
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return "`%s` is not installed (iproute2 / util-linux)" % tool
    with open("/proc/self/status") as f:
        caps = dict(line.split(":", 1) for line in f if ":" in line)
    effective = int(caps.get("CapEff", "0").strip(), 16)
    for bit, name in ((12, "CAP_NET_ADMIN"), (21, "CAP_SYS_ADMIN")):
        if not effective & (1 << bit):
            return "no %s (run as root, or grant it): cannot make network namespaces" % name
    probe = "hpotb%dprobe" % os.getpid()
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return "`ip netns add` failed: " + made.stderr.strip()
    try:
        for step in (["-n", probe, "link", "set", "lo", "up"],
                     ["-n", probe, "link", "add", "p0", "type", "veth", "peer", "name", "p1"],
                     ["-n", probe, "link", "add", "br0", "type", "bridge"],
                     ["netns", "exec", probe, "unshare", "--uts", "hostname", "x"]):
            done = _ip(*step, check=False)
            if done.returncode != 0:
                return "`ip %s` failed: %s" % (" ".join(step), done.stderr.strip())
    finally:
        _ip("netns", "del", probe, check=False)
    return None


def _leftover_files(tag):
    """Under /tmp: the bed's folder (TAG-*) and Open MPI's session folders, which are named after
    the host (ompi.TAGh0...); tag "hpotb[0-9]*" gives those of every bed."""
    tmp = tempfile.gettempdir()
    return (glob.glob(os.path.join(tmp, tag + "-*")) +
            glob.glob(os.path.join(tmp, "ompi.%sh[0-9]*" % tag)))


def _kill_and_delete(ns):
    """Kills every process in namespace `ns` (kill -9), then deletes it with its links."""
    for _ in range(3):
        pids = _ip("netns", "pids", ns, check=False).stdout.split()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    _ip("netns", "del", ns, check=False)


def reap_stale():
    """Removes what a test bed of a process no longer alive left behind (a test killed with
    SIGKILL, e.g. by ctest's time-out, cannot clean up after itself)."""
    listing = _ip("netns", "list", check=False).stdout.split("\n")
    names = [line.split()[0] for line in listing if line.strip()]
    if os.path.isdir("/etc/netns"):
        names += os.listdir("/etc/netns")
    for name in set(names):
        match = re.fullmatch(r"hpotb(\d+)(sw|h\d+|probe)", name)
        if not match or os.path.exists("/proc/" + match.group(1)):
            continue
        _kill_and_delete(name)
        shutil.rmtree("/etc/netns/" + name, ignore_errors=True)
    for path in _leftover_files("hpotb[0-9]*"):
        match = re.match(r"(?:ompi\.)?hpotb(\d+)", os.path.basename(path))
        if match and not os.path.exists("/proc/" + match.group(1)):
            shutil.rmtree(path, ignore_errors=True)
    try:
        os.rmdir("/etc/netns")  # only when empty: a folder with no files does nothing
    except OSError:
        pass


def _free_subnet():
    """A 10.213.N.0/24 that no address or route of this namespace uses."""
    used = _ip("-o", "addr").stdout + _ip("route").stdout + _ip("-o", "-4", "route", "show",
                                                                 "table", "all").stdout
    for offset in range(254):
        n = (os.getpid() + offset) % 254 + 1
        if "10.213.%d." % n not in used:
            return ipaddress.ip_network("10.213.%d.0/24" % n)
    raise RuntimeError("no free 10.213.N.0/24 subnet")


class TestBed:
    """`hosts` namespaces with `slots` MPI slots each (an int, or one per host).

    resolve_names=True writes /etc/netns/NS/hosts for every host (`ip netns exec` mounts it over
    /etc/hosts there), so each host name resolves to its subnet address on every host, as a
    cluster's DNS would do; by default names resolve nowhere and only addresses work.
    own_hostnames=False leaves every host the machine's hostname (as containers that keep their
    node's name would): Open MPI still sees one node per namespace, names no longer tell them apart.

    Attributes: names (host names, also each namespace's name), addresses (each host's IP on the
    subnet), subnet, hostfile, agent, workdir (a temporary folder for the test's files)."""

    def __init__(self, hosts=2, slots=2, resolve_names=False, own_hostnames=True):
        self.tag = "hpotb%d" % os.getpid()
        self.slots = list(slots) if isinstance(slots, (list, tuple)) else [slots] * hosts
        assert len(self.slots) == hosts
        self.switch = self.tag + "sw"
        self.names = ["%sh%d" % (self.tag, i) for i in range(hosts)]
        self.subnet = None
        self.addresses = []
        self.workdir = None
        self.resolve_names = resolve_names
        self.own_hostnames = own_hostnames
        self.made = []  # namespaces made so far, removed in reverse
        self.etc_made = []  # /etc/netns folders made, removed on close

    # --- life cycle -------------------------------------------------------------------------
    def __enter__(self):
        _LIVE.append(self)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _build(self):
        reap_stale()
        self.workdir = tempfile.mkdtemp(prefix=self.tag + "-")
        self.subnet = _free_subnet()
        hosts = list(self.subnet.hosts())
        self.addresses = [str(hosts[i]) for i in range(len(self.names))]
        for ns in [self.switch] + self.names:
            _ip("netns", "add", ns)
            self.made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, (ns, address) in enumerate(zip(self.names, self.addresses)):
            port = "p%d" % i  # the switch's end of the veth pair; eth0 is the host's end
            _ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0",
                "netns", ns)
            _ip("-n", self.switch, "link", "set", port, "master", "br0")
            _ip("-n", self.switch, "link", "set", port, "up")
            _ip("-n", ns, "addr", "add", "%s/%d" % (address, self.subnet.prefixlen), "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
        if self.resolve_names:
            hosts_text = "127.0.0.1 localhost\n" + "".join(
                "%s %s\n" % (a, n) for a, n in zip(self.addresses, self.names))
            for folder in ["/etc/netns"] + ["/etc/netns/" + n for n in self.names]:
                if not os.path.isdir(folder):
                    os.mkdir(folder)
                    self.etc_made.append(folder)
            for n in self.names:
                with open("/etc/netns/%s/hosts" % n, "w") as f:
                    f.write(hosts_text)
        self.hostfile = os.path.join(self.workdir, "hostfile")
        with open(self.hostfile, "w") as f:
            for address, slots in zip(self.addresses, self.slots):
                f.write("%s slots=%d\n" % (address, slots))
        # Open MPI's rsh launcher runs `AGENT HOST COMMAND...`; HOST is an address of the hostfile.
        self.agent = os.path.join(self.workdir, "agent.sh")
        cases = "".join("  %s) ns=%s ;;\n" % (a, n) for a, n in zip(self.addresses, self.names))
        with open(self.agent, "w") as f:
            f.write("#!/bin/sh\n"
                    "host=\"$1\"; shift\n"
                    "case \"$host\" in\n%s"
                    "  *) echo \"agent: unknown host $host\" >&2; exit 1 ;;\n"
                    "esac\n"
                    "exec %s\n" % (cases, (
                        "ip netns exec \"$ns\" unshare --uts sh -c "
                        "'hostname \"$0\" && exec sh -c \"$1\"' \"$ns\" \"$*\""
                        if self.own_hostnames else "ip netns exec \"$ns\" sh -c \"$*\"")))
        os.chmod(self.agent, 0o755)

    def enter(self, ns):
        """argv prefix that runs a command in namespace `ns`, under the hostname `ns` unless the
        bed keeps the machine's."""
        if not self.own_hostnames:
            return ["ip", "netns", "exec", ns]
        return ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', ns]

    def close(self):
        """Kills every process in the namespaces, removes them (their veths and the bridge go
        with them) and the files. Safe to call more than once."""
        for ns in reversed(self.made):
            _kill_and_delete(ns)
        self.made = []
        for folder in reversed(self.etc_made):
            if folder != "/etc/netns":
                shutil.rmtree(folder, ignore_errors=True)
            else:
                try:
                    os.rmdir(folder)  # only when no one else put files there
                except OSError:
                    pass
        self.etc_made = []
        if self.workdir:
            for path in _leftover_files(self.tag):  # Open MPI's, when its processes were killed
                shutil.rmtree(path, ignore_errors=True)
            self.workdir = None
        if self in _LIVE:
            _LIVE.remove(self)

    # --- running ----------------------------------------------------------------------------
    def exec_argv(self, host, argv):
        """argv that runs `argv` on host index `host`."""
        return self.enter(self.names[host]) + list(argv)

    def hostfile_for(self, hosts):
        """A hostfile of the given host indices only (a job on fewer hosts, e.g. after one is
        lost)."""
        path = os.path.join(self.workdir, "hostfile-" + "-".join(str(h) for h in hosts))
        with open(path, "w") as f:
            for h in hosts:
                f.write("%s slots=%d\n" % (self.addresses[h], self.slots[h]))
        return path

    def mpirun_argv(self, command, np, extra_mca=(), hosts=None, launcher="mpirun"):
        """The whole argv: mpirun started on host 0 (a host like the others), its daemons on the
        other hosts through the agent, TCP only over the test subnet. `hosts`: the host indices
        to use (default: all); `launcher`: what runs mpirun's arguments (e.g. hpo-mpirun)."""
        subnet = str(self.subnet)
        hostfile = self.hostfile if hosts is None else self.hostfile_for(hosts)
        mpirun = [launcher, "--oversubscribe", "--hostfile", hostfile, "-np", str(np),
                  "--mca", "plm_rsh_agent", self.agent,
                  "--mca", "plm_rsh_no_tree_spawn", "1",
                  "--mca", "oob_tcp_if_include", subnet,
                  "--mca", "btl_tcp_if_include", subnet,
                  "--mca", "btl", "self,vader,tcp", "--mca", "pml", "ob1",
                  "--mca", "btl_vader_single_copy_mechanism", "none"]
        for name, value in extra_mca:
            mpirun += ["--mca", name, value]
        return self.exec_argv(0, mpirun + list(command))

    def environment(self):
        env = dict(os.environ, **MPI_ENV)
        env.setdefault("OMP_WAIT_POLICY", "passive")
        # Nothing from an outer mpirun/ctest may steer this one.
        for key in list(env):
            if key.startswith(("OMPI_MCA_", "PMIX_")):
                del env[key]
        return env

    def start(self, command, np, cwd=None, hosts=None, launcher="mpirun", env=None):
        """Starts the command under mpirun (or `launcher`) across the hosts, in a session of its
        own, and returns the Popen (stdout and stderr together, text) without waiting: for tests
        that act on the hosts while the job runs. `env`: variables added to the environment. The
        caller waits for it; close() kills what is left."""
        return subprocess.Popen(self.mpirun_argv(command, np, hosts=hosts, launcher=launcher),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                cwd=cwd or self.workdir, env=dict(self.environment(), **(env or {})),
                                start_new_session=True)

    def cut(self, host):
        """Loses host index `host` as a broken link does: its port on the bridge goes down, so
        its processes keep running but nothing reaches them or comes from them."""
        _ip("-n", self.switch, "link", "set", "p%d" % host, "down")

    def switch_address(self):
        """Gives the switch namespace an address on the subnet (the last one, .254, on its
        bridge) and returns it: a host outside the hosts that every host reaches as long as its
        link is up, for a service that must outlive any one host (a Slurm controller). Cutting a
        host's link cuts it off from this address too."""
        address = str(list(self.subnet.hosts())[-1])
        shown = _ip("-n", self.switch, "-o", "addr", "show", "dev", "br0").stdout
        if address + "/" not in shown:
            _ip("-n", self.switch, "addr", "add", "%s/%d" % (address, self.subnet.prefixlen),
                "dev", "br0")
        return address

    def kill_all(self, host):
        """Loses host index `host` as a crashed node does: kill -9 of every process on it."""
        for pid in _ip("netns", "pids", self.names[host], check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass

    def processes(self, host):
        """The command lines of the processes running on host index `host`."""
        lines = []
        for pid in _ip("netns", "pids", self.names[host], check=False).stdout.split():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    lines.append(f.read().replace(b"\0", b" ").decode(errors="replace").strip())
            except OSError:
                pass
        return lines

    def mpirun(self, command, np, timeout, cwd=None, extra_mca=(), hosts=None):
        """Runs the command under mpirun across the hosts in a session of its own (killed with
        everything it started after `timeout` seconds); returns hpo_test_support's RunResult. On
        a time-out, what was still running on each host (daemons started through the agent are
        in sessions of their own) is added to its `ps` listing and killed too."""
        done = run_in_own_session(self.mpirun_argv(command, np, extra_mca, hosts), timeout=timeout,
                                  cwd=cwd or self.workdir, env=self.environment())
        if done.returncode is None:
            for ns in self.names:
                pids = _ip("netns", "pids", ns, check=False).stdout.split()
                if pids:
                    listing = subprocess.run(["ps", "-o", "pid,stat,wchan:24,etime,args", "-p",
                                              ",".join(pids)], capture_output=True, text=True)
                    done.killed += "left on %s:\n%s" % (ns, listing.stdout)
                for pid in pids:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
        return done


def _close_all():
    for bed in list(_LIVE):
        bed.close()


def _on_sigterm(signum, frame):
    # Clean up, then die of the signal (an exception here would only fail the current test).
    _close_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


atexit.register(_close_all)
signal.signal(signal.SIGTERM, _on_sigterm)
