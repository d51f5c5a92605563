"""What the Python tests that run `hpo` under mpirun share: the environment mpirun needs here, the
command line (`--hpo PATH` plus unittest's own arguments), a run that cleans up after itself, a
job's output read while it runs, the synthetic grid sweep of the lost-rank and lost-host tests, and
short timeouts scaled with the machine's measured speed."""

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

# Root in containers and CI, more ranks than cores, one thread per rank.
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMP_NUM_THREADS": "1",
}


def parse_command_line():
    """(absolute path of --hpo, argv for unittest.main) from sys.argv."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    args, rest = parser.parse_known_args()
    return os.path.abspath(args.hpo), [sys.argv[0]] + rest


def parse_command_line_with_faults():
    """(absolute paths of --hpo and --hpo-with-faults, argv for unittest.main) from sys.argv. The
    second is programs/hpo_with_faults.cpp: `hpo` with the fault HPO_INJECT_FAULT names injected
    into training, for the tests of failing trials (`hpo` itself reads no such variable)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--hpo-with-faults", required=True)
    args, rest = parser.parse_known_args()
    return os.path.abspath(args.hpo), os.path.abspath(args.hpo_with_faults), [sys.argv[0]] + rest


class RunResult:
    """What run_in_own_session saw: returncode (None when it timed out), output (stdout, and
    stderr with it unless asked apart), stderr (when asked apart, else ""), and on a time-out the
    processes it killed (`ps` lines)."""

    def __init__(self, returncode, output, killed="", stderr=""):
        self.returncode = returncode
        self.output = output
        self.killed = killed
        self.stderr = stderr

    def describe(self):
        if self.returncode is not None:
            return self.output
        return "timed out; killed:\n%s\noutput so far:\n%s" % (self.killed, self.output)


def run_in_own_session(argv, timeout, cwd=None, env=None, stderr_apart=False):
    """Runs argv (e.g. mpirun ...) in a session of its own and waits up to `timeout` seconds. On a
    time-out every process of that session is listed and killed, so no rank outlives the test."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE if stderr_apart else subprocess.STDOUT,
                               text=True, cwd=cwd, env=env, start_new_session=True)
    try:
        output, errors = process.communicate(timeout=timeout)
        return RunResult(process.returncode, output, stderr=errors or "")
    except subprocess.TimeoutExpired:
        listing = subprocess.run(["ps", "-s", str(process.pid), "-o", "pid,stat,wchan:24,etime,args"],
                                 capture_output=True, text=True).stdout
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        output, errors = process.communicate()
        return RunResult(None, output, listing, errors or "")


class JobOutput:
    """The output lines of `job` (a Popen in a session of its own, stdout and stderr together as
    text), read on a thread as it prints: `lines` grows meanwhile. As a context manager, on the way
    out the session is killed if the job still runs, and its output is closed."""

    def __init__(self, job, trials):
        """`trials`: how many `trial ` lines wait() waits for."""
        self.job = job
        self.lines = []
        self._reached = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(trials,), daemon=True)
        self._reader.start()

    def _read(self, trials):
        seen = 0
        for line in self.job.stdout:
            self.lines.append(line)
            if line.startswith("trial "):
                seen += 1
                if seen >= trials:
                    self._reached.set()
        self._reached.set()

    def wait(self, timeout):
        """Whether the job printed its `trials` trial lines (or ended its output) within `timeout`
        seconds."""
        return self._reached.wait(timeout)

    def text(self):
        return "".join(self.lines)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        if self.job.poll() is None:
            os.killpg(self.job.pid, signal.SIGKILL)
            self.job.wait()
        self._reader.join(10)
        self.job.stdout.close()


# A fixed piece of Python work (a million additions) takes about this much CPU time on the 2-vCPU
# VM of bench/RESULTS.md; its wall time now, against this, is how slow the machine runs a thread.
_REFERENCE_WORK_S = 0.03
_MOST_SLOWNESS = 8.0


def machine_slowness():
    """How many times slower than the reference this machine runs a thread now (1 at least, 8 at
    most): the median wall time of three runs of a fixed piece of work, over its reference time.
    A busy machine (load 20 on 2 cores) reads 2 to 4."""
    took = []
    for _ in range(3):
        started = time.monotonic()
        total = 0
        for i in range(1000000):
            total += i
        took.append(time.monotonic() - started)
    return min(_MOST_SLOWNESS, max(1.0, statistics.median(took) / _REFERENCE_WORK_S))


def scaled_timeout(seconds):
    """`seconds` (a timeout a test makes short on purpose, such as peer_timeout_s) times
    machine_slowness(), rounded up to whole seconds."""
    return int(math.ceil(seconds * machine_slowness()))


def synthetic_grid_config(trials, ranks_per_trial, peer_timeout_s, grace_period_s=None, epochs=30):
    """A grid sweep of `trials` synthetic trials (lr 0.001, 0.002, ...) of `epochs` epochs (30: a
    few seconds), checkpointing every epoch, with checkpoint.grace_period_s when one is given."""
    checkpoint = "{interval: 1}" if grace_period_s is None else (
        "{interval: 1, grace_period_s: %d}" % grace_period_s)
    return ("sweep:\n"
            "  method: grid\n"
            "  metric: {name: val_loss, goal: minimize}\n"
            "  parameters:\n"
            "    lr: {values: [%s]}\n"
            "    width: {value: 64}\n"
            "    optimizer: {value: sgd}\n"
            "task: synthetic\n"
            "synthetic: {train_samples: 30000, val_samples: 256, test_samples: 256, features: 32,"
            " classes: 4, noise: 0.5}\n"
            "epochs: %d\n"
            "checkpoint: %s\n"
            "ranks_per_trial: %d\n"
            "peer_timeout_s: %d\n"
            "seed: 3\n") % (", ".join("%g" % (0.001 * (i + 1)) for i in range(trials)),
                            epochs, checkpoint, ranks_per_trial, peer_timeout_s)


def _fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def published_record(f):
    """The valid /published record with the larger sequence of an open h5py.File, as a dict, or
    None for a file without /published (every row is the study then). A study being written or
    left by a crash has rows past record["trials"] / record["curves"] (study_writer.cpp)."""
    import struct
    if "published" not in f:
        return None
    names = ("sequence", "trials", "curves", "state_offset", "state_size", "state_checksum")
    best = None
    for row in f["published"][:]:
        fields = [int(row[name]) for name in names]
        if _fnv1a64(struct.pack("<qqqqqQ", *fields)) != int(row["checksum"]):
            continue
        if best is None or fields[0] > best[0]:
            best = fields
    return None if best is None else dict(zip(names, best))


def published_rows(f, name):
    """The published rows of /trials or /curves of an open h5py.File."""
    record = published_record(f)
    return f[name][:] if record is None else f[name][:record[name]]


def process_environment(pid):
    """The environment of process `pid` as {name: value} (bytes); OSError when it cannot be read
    (the process has exited)."""
    with open("/proc/%d/environ" % pid, "rb") as f:
        return dict(entry.partition(b"=")[::2] for entry in f.read().split(b"\0") if entry)


def study_attributes(f):
    """The root attributes of an open h5py.File with the published state over them (names to
    values; the state's strings as bytes)."""
    attributes = dict(f.attrs)
    record = published_record(f)
    if record and record["state_size"] > 0:
        start = record["state_offset"]
        text = bytes(f["state"][start:start + record["state_size"]]).decode()
        for line in text.splitlines():
            kind, name, value = line.split("\t", 2)
            attributes[name] = (int(value) if kind == "i" else float.fromhex(value) if kind == "f"
                                else bytes.fromhex(value))
    return attributes

