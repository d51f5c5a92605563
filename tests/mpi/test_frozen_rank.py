"""A rank that stops answering (SIGSTOP: a hung node, a process frozen by its host) on one
machine: rank 0's heartbeat (peer_timeout_s) ends the job with exit code 4 and a message naming
the rank, the study keeps every finished trial, and --resume without the frozen rank finishes the
sweep. Run by ctest as: python3 test_frozen_rank.py --hpo PATH.

And the converse: every rank frozen at once for longer than peer_timeout_s (a machine or VM that
stalls, a heartbeat thread starved that long) is no loss: once they run again, the sweep
completes (PeerSilence counts a watcher's own stall against its peers for one period at most).

And rank 0 on the same machine as the other rank (issue 52): its heartbeat thread alone held still
for twice the timeout at the start of a --resume, as a thread starved of CPU is (the rest of rank
0 runs on), is no loss, where it ended the job with exit 4 before; rank 0's whole process stopped
still ends it. These set a peer_timeout_s scaled with the machine's measured speed.

The multi-host cases (a cut link, a host whose processes die) are tests/multinode/test_lost_host.py.
"""

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from hpo_test_support import (MPI_ENV, JobOutput, parse_command_line, process_environment,
                              run_in_own_session, scaled_timeout, synthetic_grid_config)

HPO = None  # set from the command line
PEER_TIMEOUT_S = 3
# Six trials over three groups: a group that has finished a trial by the freeze (just after the
# first result) has been handed another, so rank 2 is training when it is frozen, even should the
# three first results come in together; the resume has five at most left.
TRIALS = 6
EPOCHS = 15  # FrozenRank's and FrozenJob's trials: far longer than from a result to the freeze
TRAIN_SAMPLES = 15000  # FrozenRank's (half synthetic_grid_config's): a trial still lasts seconds
EXIT_PEER_LOST = 4
EXIT_MARGIN_S = 45  # a busy 2-core machine: beyond the peer timeout, to the job's exit

FROZEN_JOB_TRIALS = 2  # the freeze falls in the second, which then completes
FROZEN_JOB_S = 3 * PEER_TIMEOUT_S
# A fifth of the training set: a DDP group pays an allreduce a step, and its 15 epochs of 6000
# samples still last seconds, far longer than from a result to the freeze.
FROZEN_JOB_TRAIN_SAMPLES = 6000

STARVED_ROOT_TRIALS = 8
WATCH_THREAD = "hpo-peer-watch"  # PeerWatch's thread name
EXIT_INTERRUPTED = 3
PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17
WAIT_ALL = 0x40000000  # __WALL: waitpid on a thread of another process that this one traces


def world_rank_of(pid):
    """The MPI world rank of process `pid` (from its environment), or None."""
    try:
        rank = process_environment(pid).get(b"OMPI_COMM_WORLD_RANK")
    except OSError:
        return None
    return None if rank is None else int(rank)


def session_processes(session):
    """(pid, command line) of the live processes of a session (exited ones not yet reaped by
    init are left out)."""
    listing = subprocess.run(["ps", "-s", str(session), "-o", "pid=,args="], capture_output=True,
                             text=True).stdout
    return [(int(line.split(None, 1)[0]), line.split(None, 1)[1])
            for line in listing.splitlines() if line.strip() and "<defunct>" not in line]


def read_trials(path):
    import h5py
    with h5py.File(path, "r") as f:
        return {int(row["trial_id"]): row["status"].decode() for row in f["trials"][:]
                  if row["trial_id"] >= 0}  # fill rows past the published ones


def thread_named(pid, name):
    """The id of process `pid`'s thread called `name`, or None."""
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() == name:
                    return int(tid)
    except OSError:
        pass
    return None


@contextlib.contextmanager
def thread_held(tid):
    """Holds thread `tid` alone still (a ptrace stop; the other threads of its process run on)
    inside the block, and lets it go on the way out. PermissionError where ptrace is not allowed."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
        raise PermissionError(ctypes.get_errno(), "ptrace(PTRACE_SEIZE) of thread %d" % tid)
    try:
        libc.ptrace(PTRACE_INTERRUPT, tid, None, None)
        os.waitpid(tid, WAIT_ALL)
        yield
    finally:
        libc.ptrace(PTRACE_DETACH, tid, None, None)


@contextlib.contextmanager
def sweep_past_its_first_trial(command, env):
    """Starts the sweep `command` in a session of its own and waits (300 s at most) for its first
    trial's line; yields (job, lines), `lines` growing as the job prints. On the way out the
    session is killed if the job still runs, and its output is closed."""
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=env, start_new_session=True)
    with JobOutput(job, trials=1) as output:
        if not output.wait(300):
            raise AssertionError("no trial finished:\n" + output.text())
        if job.poll() is not None:
            raise AssertionError("the sweep ended too soon:\n" + output.text())
        yield job, output.lines


class FrozenSweepCase(unittest.TestCase):
    """A sweep of `trials` trials of EPOCHS epochs and `ranks_per_trial` ranks each, on
    `train_samples` training samples (None: synthetic_grid_config's), in a folder of its own."""
    prefix = trials = ranks_per_trial = train_samples = None  # set by each suite

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix=self.prefix)
        self.config = os.path.join(self.tmp, "sweep.yaml")
        config = synthetic_grid_config(self.trials, self.ranks_per_trial, PEER_TIMEOUT_S,
                                       epochs=EPOCHS)
        if self.train_samples is not None:
            self.assertIn("train_samples: 30000,", config)
            config = config.replace("train_samples: 30000,",
                                    "train_samples: %d," % self.train_samples)
        with open(self.config, "w") as f:
            f.write(config)
        self.output = os.path.join(self.tmp, "out")
        self.env = dict(os.environ, **MPI_ENV)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class FrozenRank(FrozenSweepCase):
    prefix, trials, ranks_per_trial = "hpo-frozen-rank-", TRIALS, 1
    train_samples = TRAIN_SAMPLES

    def test_a_frozen_rank_ends_the_job_and_resume_finishes(self):
        command = ["mpirun", "--oversubscribe", "-np", "3", HPO, "sweep", "--config", self.config,
                   "--output", self.output]
        with sweep_past_its_first_trial(command, self.env) as (job, lines):
            ranks = {world_rank_of(pid): pid for pid, args in session_processes(job.pid)
                     if "sweep --config" in args and not args.startswith("mpirun")}
            self.assertIn(2, ranks, ranks)
            os.kill(ranks[2], signal.SIGSTOP)
            frozen_at = time.monotonic()
            try:
                job.wait(PEER_TIMEOUT_S + EXIT_MARGIN_S + 60)
            except subprocess.TimeoutExpired:
                pass
            ended_after = time.monotonic() - frozen_at
        output = "".join(lines)
        self.assertEqual(job.returncode, EXIT_PEER_LOST, output)
        self.assertIn("lost contact with rank 2 on ", output)
        self.assertLess(ended_after, PEER_TIMEOUT_S + EXIT_MARGIN_S, output)
        # Killed ranks can take a moment to finish exiting (freeing their memory) after mpirun.
        deadline = time.monotonic() + 30
        while session_processes(job.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertEqual(session_processes(job.pid), [], "processes left after the job")
        finished = read_trials(os.path.join(self.output, "study.h5"))
        self.assertGreaterEqual(len(finished), 1, output)

        done = run_in_own_session(["mpirun", "--oversubscribe", "-np", "2", HPO, "sweep",
                                   "--config", self.config, "--output", self.output, "--resume"],
                                  timeout=300, cwd=self.tmp, env=self.env)
        self.assertEqual(done.returncode, 0, done.describe())
        trials = read_trials(os.path.join(self.output, "study.h5"))
        self.assertEqual(len(trials), TRIALS, trials)
        self.assertTrue(all(status == "completed" for status in trials.values()), trials)


class FrozenJob(FrozenSweepCase):
    prefix, trials, ranks_per_trial = "hpo-frozen-job-", FROZEN_JOB_TRIALS, 2
    train_samples = FROZEN_JOB_TRAIN_SAMPLES

    def test_every_rank_frozen_longer_than_the_timeout_is_no_loss(self):
        """Both ranks of a DDP group stopped together for three peer timeouts, then continued:
        neither takes the other for lost, and the sweep completes."""
        command = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", HPO, "sweep",
                   "--config", self.config, "--output", self.output]
        with sweep_past_its_first_trial(command, self.env) as (job, lines):
            ranks = [pid for pid, args in session_processes(job.pid)
                     if "sweep --config" in args and not args.startswith("mpirun")]
            self.assertEqual(len(ranks), 2, "%s\n%s" % (ranks, "".join(lines)))
            for pid in ranks:
                os.kill(pid, signal.SIGSTOP)
            time.sleep(FROZEN_JOB_S)
            for pid in ranks:
                os.kill(pid, signal.SIGCONT)
            job.wait(300)
        output = "".join(lines)
        self.assertEqual(job.returncode, 0, output)
        self.assertNotIn("lost contact", output)
        trials = read_trials(os.path.join(self.output, "study.h5"))
        self.assertEqual(len(trials), FROZEN_JOB_TRIALS, trials)
        self.assertTrue(all(status == "completed" for status in trials.values()), trials)


class StarvedRoot(unittest.TestCase):
    """Both ranks on this machine, one per trial; a sweep interrupted after its first trial (once
    for the suite), then resumed, each test on a copy of it, with rank 0 held one way or another."""

    @staticmethod
    def write_config(path):
        """Writes the sweep's config, with a peer_timeout_s scaled with the machine's speed now
        (a key that may change on resume), to `path`; returns that timeout."""
        timeout_s = scaled_timeout(PEER_TIMEOUT_S)
        with open(path, "w") as f:
            f.write(synthetic_grid_config(STARVED_ROOT_TRIALS, 1, timeout_s))
        return timeout_s

    @classmethod
    def setUpClass(cls):
        cls.interrupted = tempfile.mkdtemp(prefix="hpo-starved-root-")
        try:
            config = os.path.join(cls.interrupted, "sweep.yaml")
            cls.write_config(config)
            command = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", HPO, "sweep",
                       "--config", config, "--output", os.path.join(cls.interrupted, "out")]
            with sweep_past_its_first_trial(command, dict(os.environ, **MPI_ENV)) as (job, lines):
                os.kill(job.pid, signal.SIGUSR1)  # mpirun passes it on: checkpoint and exit 3
                job.wait(300)
            if job.returncode != EXIT_INTERRUPTED:
                raise AssertionError("%s != %d:\n%s" % (job.returncode, EXIT_INTERRUPTED,
                                                       "".join(lines)))
        except BaseException:
            shutil.rmtree(cls.interrupted, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.interrupted, ignore_errors=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-starved-root-")
        self.config = os.path.join(self.tmp, "sweep.yaml")
        self.timeout_s = self.write_config(self.config)
        self.output = os.path.join(self.tmp, "out")
        shutil.copytree(os.path.join(self.interrupted, "out"), self.output)
        self.env = dict(os.environ, **MPI_ENV)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    @contextlib.contextmanager
    def resume_with_rank_0(self):
        """Resumes the sweep and yields (job, lines, rank 0's pid, its watcher's thread id) once
        rank 0's heartbeat thread runs."""
        command = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", HPO, "sweep",
                   "--config", self.config, "--output", self.output, "--resume"]
        job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=self.env, start_new_session=True)
        with JobOutput(job, trials=STARVED_ROOT_TRIALS) as output:
            deadline = time.monotonic() + 300
            watcher = None
            while watcher is None and job.poll() is None and time.monotonic() < deadline:
                ranks = {world_rank_of(pid): pid for pid, args in session_processes(job.pid)
                         if "sweep --config" in args and not args.startswith("mpirun")}
                watcher = thread_named(ranks[0], WATCH_THREAD) if 0 in ranks else None
                time.sleep(0.05)
            self.assertIsNotNone(watcher, "no %s thread in rank 0:\n%s" %
                                 (WATCH_THREAD, output.text()))
            yield job, output.lines, ranks[0], watcher

    def test_rank_0s_heartbeat_thread_not_run_at_resume_is_no_loss(self):
        with self.resume_with_rank_0() as (job, lines, _, watcher):
            try:
                with thread_held(watcher):
                    time.sleep(2 * self.timeout_s)
                    # The hold is over while rank 1 still watches, or it showed nothing.
                    self.assertIsNone(job.poll(), "".join(lines))
            except PermissionError as error:
                self.skipTest("ptrace is not allowed here: %s" % error)
            job.wait(300)
        output = "".join(lines)
        self.assertEqual(job.returncode, 0, output)
        self.assertNotIn("no word from rank 0", output)
        self.assertIn("rank 0 runs on this machine and its process is running", output)
        trials = read_trials(os.path.join(self.output, "study.h5"))
        self.assertEqual(len(trials), STARVED_ROOT_TRIALS, trials)
        self.assertTrue(all(status == "completed" for status in trials.values()), trials)

    def test_rank_0_stopped_at_resume_ends_the_job(self):
        with self.resume_with_rank_0() as (job, lines, root, _):
            os.kill(root, signal.SIGSTOP)
            try:
                job.wait(self.timeout_s + EXIT_MARGIN_S + 60)
            except subprocess.TimeoutExpired:
                pass
        output = "".join(lines)
        self.assertEqual(job.returncode, EXIT_PEER_LOST, output)
        self.assertIn("no word from rank 0 on ", output)


if __name__ == "__main__":
    HPO, argv = parse_command_line()
    unittest.main(argv=argv, verbosity=2)
