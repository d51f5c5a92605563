#!/usr/bin/env python3
"""Deployment test: the container image of k8s-mpi/Dockerfile, built and run here.

Usage: test_image.py [--image NAME] [unittest arguments, -k ...]

Builds the CPU image with scripts/build-image.sh (buildah, from a Debian 12 made with mmdebstrap
when no registry image can be pulled) into a container store of its own, then runs in it:

* `hpo --version`: a CPU build;
* the quickstart sweep (/opt/hpo/configs/quickstart.yaml, its budget shrunk as
  test_manifests.shrink_config shrinks it) on 2 ranks, then `hpo report` to its leaderboard;
* a command sweep of a Python program (a bare W&B sweep file, 2 ranks, 1 rank per trial);
* the launcher's start-up path of k8s-mpi/mpijob-cpu.yaml: two worker containers running the
  image's default command (hpo-worker, sshd) on a network of their own, a launcher container with
  the manifest's own command (hpo-mpirun --hostfile /etc/mpi/hostfile ...), the operator's hostfile
  of the two workers' names, a generated ssh key at /root/.ssh as the operator mounts it, the
  ConfigMap's sweep (shrunk) at /etc/hpo/sweep.yaml and one shared /study: 4 ranks over ssh.

How containers run here: `podman --runtime runc` with --ulimit nofile/nproc no higher than this
process's hard limits. podman's defaults (1048576) are above them, and raising a hard limit needs
CAP_SYS_RESOURCE, which this machine's root lacks (crun and runc then fail on setrlimit); crun 1.8
also refuses this machine's hybrid cgroup layout, runc does not.

Not run by default: it takes about 16 minutes on 2 cores, nearly all of it building the image
(bench/RESULTS.md), beyond what CI has left. HPO_IMAGE_TEST=1 runs it:
    HPO_IMAGE_TEST=1 ctest --test-dir build -L image --output-on-failure
Exit 77 (ctest's skip) with the reason when it is not asked for, not root, or buildah, podman,
runc or mmdebstrap (without a cached root file system) are missing.

Everything it makes goes when it ends, passed or failed (also on SIGTERM): its containers, its
network, its store (the images and layers) and its temporary files; a run that was killed
(SIGKILL) is cleaned up by the next one. HPO_IMAGE_TEST_KEEP=1 keeps the store (the path of its
storage.conf is printed) to look into, and HPO_IMAGE_TEST_STORE=THAT_PATH runs the checks again on
its image without building it.
"""

import argparse
import atexit
import os
import pathlib
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import yaml

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_manifests import (POD_CONFIG, POD_HOSTFILE, check_mpijob_contract,  # noqa: E402
                            launcher_container, load_documents, shrink_config)

SKIP = 77
REPO = HERE.parents[1]
TAG = "hpo-image-test-%d" % os.getpid()  # names this run's containers, network and image
ARGS = None
STORE = None  # the run's own container store (Store), made by main()


def unavailable():
    """Why the test cannot run here (a message), or None."""
    if os.environ.get("HPO_IMAGE_TEST") != "1":
        return ("builds the image (about 16 minutes on 2 cores): set HPO_IMAGE_TEST=1 to run it "
                "(HPO_IMAGE_TEST=1 ctest --test-dir build -L image)")
    if os.geteuid() != 0:
        return "needs root (buildah and podman store and run images as root here)"
    for tool in ("buildah", "podman", "runc"):
        if shutil.which(tool) is None:
            return (f"`{tool}` is not installed "
                    "(Debian 12: apt-get install buildah podman runc mmdebstrap)")
    cache = pathlib.Path(os.environ.get("HPO_IMAGE_CACHE") or
                         pathlib.Path(os.environ.get("XDG_CACHE_HOME") or
                                      pathlib.Path.home() / ".cache") / "hpo-mpi")
    if shutil.which("mmdebstrap") is None and not (cache / "debian-12-rootfs.tar").is_file():
        return ("`mmdebstrap` is not installed (apt-get install mmdebstrap): no Debian 12 to "
                "build from")
    return None


def run(argv, timeout, check=True, env=None):
    """Runs argv to its end; returns its CompletedProcess (output and errors together)."""
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, env=env or STORE.env)
    if check and done.returncode != 0:
        raise AssertionError("%s: exit %d\n%s" % (" ".join(map(str, argv)), done.returncode,
                                                  done.stdout[-6000:]))
    return done


class Store:
    """A container store of the test's own (graph root and run root under one temporary folder),
    named to buildah and podman by CONTAINERS_STORAGE_CONF, so that removing it removes every
    image and layer the test made, and nothing of anyone else's store is touched."""

    def __init__(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix=TAG + "-", dir="/var/tmp"))
        conf = self.root / "storage.conf"
        conf.write_text('[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n'
                        % (self.root / "graph", self.root / "run"))
        (self.root / "tmp").mkdir()
        # buildah's temporary build folders go under the store too.
        self.env = dict(os.environ, CONTAINERS_STORAGE_CONF=str(conf),
                        TMPDIR=str(self.root / "tmp"))
        self.closed = False

    def podman(self, *args):
        return ["podman", "--runtime", "runc"] + list(args)

    def close(self):
        """Removes the containers, the network, the images and the folder, whatever failed."""
        if self.closed:
            return
        self.closed = True
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
        subprocess.run(self.podman("rm", "--force", "--all", "--time", "0"), **quiet)
        subprocess.run(["podman", "network", "rm", "--force", TAG], **quiet)
        subprocess.run(["buildah", "rm", "--all"], **quiet)
        if os.environ.get("HPO_IMAGE_TEST_KEEP") == "1":
            (self.root / "kept").touch()  # not stale: reap_stale leaves it
            print(f"kept the test's container store: CONTAINERS_STORAGE_CONF="
                  f"{self.root / 'storage.conf'}", file=sys.stderr)
            return
        subprocess.run(["podman", "rmi", "--all", "--force"], **quiet)
        unmount_and_remove(self.root)


def unmount_and_remove(folder):
    """Unmounts whatever is mounted under `folder` (overlays of a store), deepest first, and
    removes it."""
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts
                  if line.split()[1].startswith(str(folder) + "/")]
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    shutil.rmtree(folder, ignore_errors=True)


def reap_stale():
    """Removes what earlier runs that were killed left (SIGKILL leaves no time to clean up): for
    each /var/tmp/hpo-image-test-PID-* whose PID is gone, the containers still running from its
    store, its network and the store."""
    for folder in pathlib.Path("/var/tmp").glob("hpo-image-test-*-*"):
        pid = folder.name.split("-")[3]
        if (not pid.isdigit() or pathlib.Path(f"/proc/{pid}").exists() or
                (folder / "kept").exists()):
            continue
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     env=dict(os.environ, CONTAINERS_STORAGE_CONF=str(folder / "storage.conf")))
        subprocess.run(["podman", "--runtime", "runc", "rm", "--force", "--all", "--time", "0"],
                       **quiet)
        subprocess.run(["podman", "network", "rm", "--force", f"hpo-image-test-{pid}"], **quiet)
        unmount_and_remove(folder)


def on_sigterm(signum, frame):
    if STORE is not None:
        STORE.close()
    sys.exit(128 + signum)


def container_limits():
    """--ulimit arguments at this process's hard limits (nproc also at most kernel.pid_max, which
    podman caps its own at)."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    pid_max = int(pathlib.Path("/proc/sys/kernel/pid_max").read_text())
    nproc = pid_max if nproc == resource.RLIM_INFINITY else min(nproc, pid_max)
    nofile = 1048576 if nofile == resource.RLIM_INFINITY else nofile
    return ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]


def container_options(mounts=(), env=None):
    """podman run's options for the image's containers: the test's label, /dev/shm large enough
    for Open MPI's shared-memory transport, the limits, the host folders `mounts` ((host,
    container) pairs) and the variables `env`."""
    options = ["--label", TAG, "--shm-size", "1g"] + container_limits()
    for host, inside in mounts:
        options += ["--volume", f"{host}:{inside}"]
    for name, value in (env or {}).items():
        options += ["--env", f"{name}={value}"]
    return options


def in_image(command, mounts=(), env=None, timeout=900):
    """Runs `command` (a list) to its end in a new container of the image, without network, in
    /work when a folder is mounted there; returns its CompletedProcess."""
    workdir = "/work" if any(inside == "/work" for _, inside in mounts) else "/root"
    argv = STORE.podman("run", "--rm", "--network", "none", "--workdir", workdir)
    argv += container_options(mounts, env)
    return run(argv + [ARGS.image] + command, timeout=timeout, check=False)


COMMAND_PROGRAM = """\
import argparse, json
parser = argparse.ArgumentParser()
parser.add_argument("--x", type=float, required=True)
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()
for step in range(1, args.steps + 1):
    print(json.dumps({"step": step, "loss": (args.x - 0.3) ** 2 + 1.0 / step}), flush=True)
"""

COMMAND_SWEEP = """\
program: quadratic.py
method: random
metric: {name: loss, goal: minimize}
parameters:
  x: {distribution: uniform, min: -1.0, max: 1.0}
  steps: {value: 3}
"""


# As scripts/quickstart.sh runs it: one torch and OpenBLAS thread per rank.
SWEEP_ENV = {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"]


# What the MPI operator (v2beta1) adds to an Open MPI job's pods: the names in its hostfile are
# the workers' names in the job's headless service, which Open MPI must keep whole (it would pass
# the short pod names on to the daemons it starts from other workers), the hostfile itself, and
# ssh retries while the workers' sshd start.
OPERATOR_OPEN_MPI_ENV = {"OMPI_MCA_orte_keep_fqdn_hostnames": "true",
                         "OMPI_MCA_orte_default_hostfile": POD_HOSTFILE,
                         "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10"}


def study_trials(path):
    """The trials table of the study file at `path`."""
    with h5py.File(path, "r") as study:
        return study["trials"][:]


class ImageRuns(unittest.TestCase):
    """The image's checks; the image is built once, by setUpClass."""

    @classmethod
    def setUpClass(cls):
        existing = run(["podman", "image", "exists", ARGS.image], timeout=60, check=False)
        if existing.returncode == 0 and os.environ.get("HPO_IMAGE_TEST_STORE"):
            return  # a kept store's image (HPO_IMAGE_TEST_STORE): checks only
        began = time.monotonic()
        built = run([str(REPO / "scripts" / "build-image.sh"), "--tag", ARGS.image],
                    timeout=7200, check=False)
        print(f"\n  image built in {time.monotonic() - began:.0f} s", file=sys.stderr)
        if built.returncode != 0:
            raise AssertionError("scripts/build-image.sh failed:\n" + built.stdout[-8000:])
        size = run(["podman", "image", "inspect", "--format", "{{.Size}}", ARGS.image],
                   timeout=60).stdout.strip()
        print(f"  image size: {int(size) / 1e6:.0f} MB", file=sys.stderr)

    def setUp(self):
        self.work = pathlib.Path(tempfile.mkdtemp(prefix=TAG + "-work-"))
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def test_version_says_cpu_build(self):
        done = in_image(["hpo", "--version"], timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertRegex(done.stdout, r"hpo-mpi \S+ \(CPU build\)")

    def test_quickstart_on_two_ranks_to_its_leaderboard(self):
        """The image's own quickstart config, its budget shrunk, on one 2-rank trial group."""
        shown = in_image(["cat", "/opt/hpo/configs/quickstart.yaml"], timeout=300)
        self.assertEqual(shown.returncode, 0, shown.stdout)
        text = shown.stdout
        (self.work / "quickstart.yaml").write_text(shrink_config(text))
        done = in_image(["sh", "-c",
                         " ".join(MPIRUN) + " hpo sweep --config quickstart.yaml --output out"
                         " && hpo report out/study.h5 --top 5"],
                        mounts=[(self.work, "/work")], env=SWEEP_ENV)
        self.assertEqual(done.returncode, 0, done.stdout[-6000:])
        trials = study_trials(self.work / "out" / "study.h5")
        run_cap = yaml.safe_load(shrink_config(text))["sweep"]["run_cap"]
        self.assertEqual(len(trials), run_cap)
        self.assertTrue(all(status == b"completed" for status in trials["status"]), trials)
        # The report: the study's heading, then the leaderboard, one row per trial.
        self.assertRegex(done.stdout, rf"Study: val_accuracy \(maximize\), {run_cap} trials: "
                                      rf"{run_cap} completed")
        self.assertRegex(done.stdout, r"(?m)^rank +trial +status +objective")
        self.assertRegex(done.stdout, r"(?m)^ +2 +\d+ +completed ")

    def test_command_sweep_of_a_python_program(self):
        """A bare W&B sweep file whose program is a Python script, run with the image's python3;
        its metric lines are read from its output."""
        (self.work / "quadratic.py").write_text(COMMAND_PROGRAM)
        (self.work / "sweep.yaml").write_text(COMMAND_SWEEP)
        done = in_image(MPIRUN + ["hpo", "sweep", "--config", "sweep.yaml", "--run-cap", "3",
                                  "--ranks-per-trial", "1", "--output", "out"],
                        mounts=[(self.work, "/work")], env=SWEEP_ENV)
        self.assertEqual(done.returncode, 0, done.stdout[-6000:])
        trials = study_trials(self.work / "out" / "study.h5")
        self.assertEqual(len(trials), 3)
        self.assertTrue(all(status == b"completed" for status in trials["status"]), trials)

    def start_worker(self, name, mounts, env):
        """Starts a worker container named `name` (as its pod: the image's default command,
        hpo-worker) on the test's network; returns its address there once sshd listens."""
        argv = STORE.podman("run", "--detach", "--name", f"{TAG}-{name}", "--hostname", name,
                            "--network", TAG) + container_options(mounts, env)
        run(argv + [ARGS.image], timeout=120)
        self.addCleanup(run, STORE.podman("rm", "--force", "--time", "0", f"{TAG}-{name}"),
                        timeout=120, check=False)
        deadline = time.monotonic() + 180
        while "Server listening" not in run(["podman", "logs", f"{TAG}-{name}"],
                                            timeout=60).stdout:
            self.assertLess(time.monotonic(), deadline, f"{name}: no sshd within 180 s")
            time.sleep(0.5)
        return run(["podman", "inspect", "--format",
                    "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", f"{TAG}-{name}"],
                   timeout=60).stdout.strip()

    def test_mpijob_launcher_over_ssh_to_two_worker_containers(self):
        """k8s-mpi/mpijob-cpu.yaml's pods as containers: what the MPI operator gives them (the
        hostfile, the ssh key pair, the ConfigMap, the claim) and the manifest's commands."""
        documents = load_documents((REPO / "k8s-mpi" / "mpijob-cpu.yaml").read_text())
        job, config_map, ranks, _ = check_mpijob_contract(documents)
        name = job["metadata"]["name"]
        workers = job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
        slots = job["spec"]["slotsPerWorker"]
        for folder in ("ssh", "etc-hpo", "study"):
            (self.work / folder).mkdir()
        shrunk = shrink_config(config_map["data"]["sweep.yaml"])
        (self.work / "etc-hpo" / "sweep.yaml").write_text(shrunk)
        # The operator's Secret: one key pair, the public key also as authorized_keys.
        made = in_image(["ssh-keygen", "-q", "-t", "ecdsa", "-N", "", "-f", "/work/id_rsa"],
                        mounts=[(self.work / "ssh", "/work")], timeout=120)
        self.assertEqual(made.returncode, 0, made.stdout)
        shutil.copy(self.work / "ssh" / "id_rsa.pub", self.work / "ssh" / "authorized_keys")
        mounts = [(self.work / "ssh", "/root/.ssh"), (self.work / "etc-hpo", "/etc/hpo"),
                  (self.work / "study", "/study")]
        # A network of their own, with no route off this machine.
        run(["podman", "network", "create", "--internal", TAG], timeout=120)
        self.addCleanup(run, ["podman", "network", "rm", "--force", TAG], timeout=120,
                        check=False)
        worker_spec = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        worker_env = {variable["name"]: variable.get("value", "")
                      for variable in worker_spec["containers"][0].get("env", [])}
        hosts, hostfile = [], ""
        for index in range(workers):
            pod = f"{name}-worker-{index}"
            address = self.start_worker(pod, mounts, worker_env)
            # As the operator writes it: the worker's name in the job's headless service.
            fqdn = f"{pod}.{name}.default.svc"
            hosts += ["--add-host", f"{fqdn}:{address}"]
            hostfile += f"{fqdn} slots={slots}\n"
        (self.work / "hostfile").write_text(hostfile)
        launcher = launcher_container(job)
        env = dict(OPERATOR_OPEN_MPI_ENV)
        env.update({v["name"]: v.get("value", "") for v in launcher.get("env", [])})
        argv = STORE.podman("run", "--rm", "--name", f"{TAG}-launcher", "--network", TAG) + hosts
        argv += container_options(mounts + [(self.work / "hostfile", POD_HOSTFILE)], env)
        self.addCleanup(run, STORE.podman("rm", "--force", "--time", "0", f"{TAG}-launcher"),
                        timeout=120, check=False)
        self.assertIn(POD_CONFIG, launcher["command"])
        began = time.monotonic()
        done = run(argv + [ARGS.image] + launcher["command"], timeout=1200, check=False)
        print(f"\n  launcher: exit {done.returncode} in {time.monotonic() - began:.0f} s "
              f"({ranks} ranks on {workers} worker containers)", file=sys.stderr)
        self.assertEqual(done.returncode, 0, done.stdout[-6000:])
        trials = study_trials(self.work / "study" / name / "study.h5")
        self.assertEqual(len(trials), yaml.safe_load(shrunk)["sweep"]["run_cap"])
        self.assertTrue(all(status == b"completed" for status in trials["status"]), trials)


def main():
    global ARGS, STORE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="localhost/hpo-mpi-test:cpu",
                        help="the tag the test builds (in its own store)")
    ARGS, rest = parser.parse_known_args()
    reason = unavailable()
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    reap_stale()
    STORE = Store()
    kept = os.environ.get("HPO_IMAGE_TEST_STORE")
    if kept:  # a store kept by an earlier run (HPO_IMAGE_TEST_KEEP=1): used, not removed
        STORE.env["CONTAINERS_STORAGE_CONF"] = kept
        STORE.env["TMPDIR"] = tempfile.gettempdir()
        shutil.rmtree(STORE.root, ignore_errors=True)
        STORE.closed = True
    atexit.register(STORE.close)
    signal.signal(signal.SIGTERM, on_sigterm)
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    STORE.close()
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
