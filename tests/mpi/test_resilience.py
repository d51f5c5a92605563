"""Resilience tests of `hpo sweep` under mpirun: kill -9 and resume, preemption signals, failing
trials. Run by ctest as: python3 test_resilience.py --hpo PATH --hpo-with-faults PATH -k SUITE
(the second, `hpo` with a fault injected into a trial, is programs/hpo_with_faults.cpp).

Most sweeps here use configs/synthetic_resume.yaml (6 random trials of 3 epochs, 2 ranks per
trial), whose trials last a few seconds, so a job can be interrupted in the middle of a trial; the
other suites have configs of their own. A test that needs less of a config (fewer trials, a smaller
training set) writes a copy with edited() and runs that, the interrupted run and its resume alike.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import h5py
import numpy as np

from hpo_test_support import (MPI_ENV, JobOutput, parse_command_line_with_faults,
                              process_environment, published_rows, run_in_own_session,
                              scaled_timeout, study_attributes)

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "configs", "synthetic_resume.yaml")
WRAPPER = os.path.join(HERE, "..", "..", "scripts", "hpo-mpirun")
HPO = None  # set from the command line
HPO_WITH_FAULTS = None  # `hpo` with HPO_INJECT_FAULT's fault injected, from the command line


PROMOTION_CONFIG = os.path.join(HERE, "configs", "synthetic_promotion.yaml")
CURVES_CONFIG = os.path.join(HERE, "configs", "synthetic_curves.yaml")
WARM_START_CONFIG = os.path.join(HERE, "configs", "synthetic_warm_start.yaml")
CONDITIONAL_CONFIG = os.path.join(HERE, "configs", "synthetic_conditional.yaml")
OBJECTIVES_CONFIG = os.path.join(HERE, "configs", "synthetic_objectives.yaml")
PBT_CONFIG = os.path.join(HERE, "configs", "synthetic_pbt.yaml")


def command(np_count, output, extra=(), config=CONFIG, program=None):
    return (["mpirun", "--oversubscribe", "-np", str(np_count), program or HPO, "sweep", "--config",
             config, "--output", output] + list(extra))


def run(np_count, output, extra=(), env=None, timeout=300, config=CONFIG, program=None):
    """Runs a sweep to its end (with `hpo`, or `program`); returns (rc, stdout + stderr); rc None
    when it timed out (the whole job killed, the log saying what ran)."""
    done = run_in_own_session(command(np_count, output, extra, config, program), timeout,
                              env=dict(os.environ, **MPI_ENV, **(env or {})))
    return done.returncode, done.describe()


def start(np_count, output, extra=(), config=CONFIG):
    """Starts a sweep in its own session (so the whole job can be signalled or killed)."""
    return subprocess.Popen(command(np_count, output, extra, config), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env=dict(os.environ, **MPI_ENV))


def base_config(path=CONFIG):
    with open(path) as f:
        return f.read()


def edited(text, *replacements):
    """`text` with each (old, new) of `replacements` replaced; raises when an `old` is not in it,
    so that a config changed under a test cannot leave the test running a sweep it did not mean."""
    for old, new in replacements:
        if old not in text:
            raise AssertionError("%r is not in the config:\n%s" % (old, text))
        text = text.replace(old, new)
    return text


def read_trials(study):
    """The study's trials as {trial_id: row} (a trial's last row: later rows supersede the rows of
    its pauses), and its curves as {trial_id: [epochs]}."""
    with h5py.File(study, "r") as f:
        trials = {int(row["trial_id"]): row for row in published_rows(f, "trials")}
        curves = {}
        for row in published_rows(f, "curves"):
            curves.setdefault(int(row["trial_id"]), []).append(int(row["epoch"]))
    return trials, curves


class SweepEnded(AssertionError):
    """The sweep ended before the test could interrupt it."""


def wait_for(predicate, process, timeout=120):
    """Returns once `predicate` holds, also when the sweep ended just after it came to hold (a
    quiet machine runs short trials to the end between two looks); raises when the sweep ended
    without it or it does not hold within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ended = process.poll() is not None
        if predicate():
            return
        if ended:
            raise SweepEnded("the sweep ended before the test could interrupt it:\n" +
                             process.stdout.read())
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the sweep")


def session_pids(leader):
    """mpirun and every rank it started (Open MPI puts ranks in process groups of their own)."""
    found = subprocess.run(["pgrep", "-s", str(leader)], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def kill_session(job):
    """SIGKILL to mpirun and every rank at once; returns when all of them are gone."""
    for pid in session_pids(job.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    job.wait()
    if not job.stdout.closed:
        job.stdout.close()
    deadline = time.monotonic() + 30
    while session_pids(job.pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def finished_trials(study):
    try:
        return len(read_trials(study)[0])
    except (OSError, KeyError):
        return 0


PARAMS = ["lr", "batch_size", "optimizer", "width"]


class ResilienceCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-resilience-")
        # Cleanups run last first: a job started later is killed before its folder goes.
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def write_config(self, name, text):
        path = self.out(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def half_data_config(self, path=CONFIG, samples=8192):
        """The config at `path` on half its training set (`samples`, its train_samples, halved):
        for the tests that interrupt a sweep once its first trials are done or checkpointed,
        when most of its epochs are still to come; the shorter trials still leave a sweep to
        interrupt, and the runs before and after it train in half the time."""
        return self.write_config("half-data.yaml", edited(
            base_config(path),
            ("train_samples: %d" % samples, "train_samples: %d" % (samples // 2))))

    def start(self, np_count, output, extra=(), config=CONFIG):
        """start(), and the whole job killed when the test ends, whether it passed or not."""
        job = start(np_count, output, extra, config)
        self.addCleanup(kill_session, job)
        return job

    def kill_mid_sweep(self, np_count, config, finished, trials):
        """Starts a sweep of `trials` trials and kills the whole job once `finished` are in its
        study; returns (output, study, the study's trials). Short trials may all finish between
        the check and the kill on a quiet machine: then it starts again, three times at most."""
        for attempt in range(3):
            output = self.out("killed-%d" % attempt)
            study = os.path.join(output, "study.h5")
            job = self.start(np_count, output, config=config)
            wait_for(lambda: finished_trials(study) >= finished, job)
            kill_session(job)
            before, _ = read_trials(study)
            if len(before) < trials:
                return output, study, before
        self.fail("every attempt was killed after the last trial")

    def assert_same_trials(self, expected, actual):
        """Same trial ids, hyperparameters, statuses and objectives."""
        self.assertEqual(sorted(expected), sorted(actual))
        for trial_id, row in expected.items():
            other = actual[trial_id]
            for name in PARAMS + ["status", "epochs"]:
                self.assertEqual(row[name], other[name], (trial_id, name))
            self.assertAlmostEqual(float(row["objective"]), float(other["objective"]), places=6,
                                   msg="trial %d" % trial_id)


class Resume(ResilienceCase):
    def test_kill_9_then_resume_on_2_ranks_equals_the_uninterrupted_run(self):
        config = self.half_data_config()
        rc, log = run(4, self.out("whole"), config=config)
        self.assertEqual(rc, 0, log)
        whole, _ = read_trials(os.path.join(self.out("whole"), "study.h5"))
        self.assertEqual(len(whole), 6)

        # Kill the whole job (mpirun and every rank) once two trials are in the study and others
        # have checkpoints: somewhere inside a trial. The sweep takes seconds, so on a busy
        # machine the last trials may finish between the check and the kill: then start again.
        # A busy machine can also run the sweep to its end between two looks: start again too.
        before = {}
        for attempt in range(4):
            output = self.out("killed-%d" % attempt)
            study = os.path.join(output, "study.h5")
            job = self.start(4, output, config=config)
            try:
                wait_for(lambda: finished_trials(study) >= 2 and
                         glob.glob(os.path.join(output, "checkpoints", "*.pt")), job)
            except SweepEnded:
                job.communicate()
                continue
            kill_session(job)
            before, _ = read_trials(study)  # the file opens: nothing half-written
            self.assertGreaterEqual(len(before), 2)
            if len(before) < 6:
                break
        self.assertTrue(0 < len(before) < 6, "no attempt was killed inside the sweep")
        with h5py.File(study, "r") as f:
            self.assertIn("running_trials", study_attributes(f))

        # Resume on 2 ranks (one group) a study begun on 4 (two groups).
        rc, log = run(2, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, log)
        self.assertIn("resuming the study: %d trial%s finished"
                      % (len(before), "" if len(before) == 1 else "s"), log)
        self.assertIn("2 ranks in 1 group of 2", log)
        after, curves = read_trials(study)
        self.assertEqual(len(after), 6)  # run_cap reached, not exceeded
        for trial_id, row in before.items():  # finished trials are kept as they were
            self.assertEqual(row.tobytes(), after[trial_id].tobytes())
        self.assert_same_trials(whole, after)
        for trial_id, epochs in curves.items():  # one curve row per epoch, none twice
            self.assertEqual(epochs, sorted(set(epochs)), trial_id)
        self.assertEqual(glob.glob(os.path.join(output, "checkpoints", "*.pt")), [])

        # Resuming a finished study runs nothing more.
        rc, log = run(2, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, log)
        self.assertEqual(len(read_trials(study)[0]), 6)

    def test_resuming_a_finished_study_loads_no_data(self):
        # Fashion-MNIST from its Debian folder; the resume points --data at nothing: a rank that
        # loaded its data would fail with exit 2.
        config = os.path.join(HERE, "configs", "fashion_tiny.yaml")
        output = self.out("finished")
        rc, log = run(2, output, config=config)
        self.assertEqual(rc, 0, log)
        study = os.path.join(output, "study.h5")
        before, _ = read_trials(study)
        missing = os.path.join(self.tmp, "no-such-data")
        rc, log = run(2, output, ["--resume", "--data", missing], config=config)
        self.assertEqual(rc, 0, log)
        self.assertIn("the study is already finished: 2 trials, nothing left to run", log)
        self.assertIn("best trial", log)
        self.assertNotIn(missing, log)
        after, _ = read_trials(study)
        self.assertEqual({k: v.tobytes() for k, v in before.items()},
                         {k: v.tobytes() for k, v in after.items()})


class Preemption(ResilienceCase):
    def test_sigterm_to_every_rank_exits_3_and_resume_continues_from_the_checkpoint(self):
        """SIGTERM lands in epoch 2 of the first trials, or, on a busy machine where rank 0 passes
        it on late, at its end: either way they checkpoint and a resume goes on from there (the
        trainer's unit tests check each kind of stop on its own)."""
        output = self.out("preempted")
        study = os.path.join(output, "study.h5")
        config = self.half_data_config()
        job = self.start(4, output, config=config)
        checkpoints = os.path.join(output, "checkpoints", "*.pt")
        wait_for(lambda: glob.glob(checkpoints), job)
        # As Kubernetes does when it deletes the pods: SIGTERM to every rank.
        ranks = subprocess.run(["pgrep", "-s", str(job.pid), "-f", "^" + HPO],
                               capture_output=True, text=True).stdout.split()
        self.assertEqual(len(ranks), 4, ranks)
        signalled = time.monotonic()
        for pid in ranks:
            os.kill(int(pid), signal.SIGTERM)
        log, _ = job.communicate(timeout=120)
        self.assertLess(time.monotonic() - signalled, 60)  # the default grace period
        self.assertEqual(job.returncode, 3, log)
        self.assertIn("hpo: interrupted: the sweep was interrupted", log)
        self.assertIn("--resume", log)
        interrupted = [line for line in log.splitlines()
                       if re.search(r"^trial \d+ interrupted (at|after) epoch ", line)]
        self.assertTrue(interrupted, log)
        self.assertTrue(glob.glob(checkpoints))
        before, _ = read_trials(study)

        rc, resumed = run(4, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, resumed)
        after, _ = read_trials(study)
        self.assertEqual(len(after), 6)
        for trial_id, row in before.items():
            self.assertEqual(row.tobytes(), after[trial_id].tobytes())
        # Each interrupted trial went on from its checkpoint: it trained the rest in less time
        # than a whole trial, and its curve has every epoch once.
        for line in interrupted:
            trial_id = int(line.split()[1])
            self.assertEqual(int(after[trial_id]["epochs"]), 3, line)

    def test_sigusr1_to_mpirun_is_forwarded_and_exits_3(self):
        output = self.out("usr1")
        job = self.start(4, output, config=self.half_data_config())
        wait_for(lambda: glob.glob(os.path.join(output, "checkpoints", "*.pt")), job)
        job.send_signal(signal.SIGUSR1)  # Slurm's --signal, forwarded by the batch script's trap
        log, _ = job.communicate(timeout=120)
        self.assertEqual(job.returncode, 3, log)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            self.assertIn("running_trials", study_attributes(f))


class Failures(ResilienceCase):
    def test_an_exception_on_one_rank_fails_only_its_trial(self):
        output = self.out("exception")
        rc, log = run(4, output, env={"HPO_INJECT_FAULT": "exception:1:2:1"},
                      program=HPO_WITH_FAULTS)
        self.assertEqual(rc, 0, log)
        trials, _ = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 6)
        failed = {i: row for i, row in trials.items() if row["status"] == b"failed"}
        self.assertEqual(list(failed), [1])
        message = failed[1]["message"].decode()
        self.assertIn("exception at epoch 2 step 1 on rank 1: injected fault", message)
        self.assertTrue(np.isnan(failed[1]["objective"]))

    def test_out_of_memory_with_a_retry_runs_the_trial_again(self):
        output = self.out("oom")
        text = base_config() + "trial_retries: 1\n"
        config = os.path.join(self.tmp, "retry.yaml")
        with open(config, "w") as f:
            f.write(text)
        rc, log = run(4, output, env={"HPO_INJECT_FAULT": "oom:0:1:0"}, config=config,
                      program=HPO_WITH_FAULTS)
        self.assertEqual(rc, 0, log)
        self.assertIn("trial 0 failed (exception at epoch 1 step 1 on rank 0: out of memory", log)
        self.assertIn("retry 1 of 1 with a new seed", log)
        trials, _ = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(trials[0]["status"], b"completed")  # the retry has a new seed: no fault

    def test_a_cuda_error_ends_the_job_in_one_line_and_resume_finishes_the_sweep(self):
        # The fault program's CUDA fault: torch's error for a failed CUDA call where there is no
        # GPU (a real device-side assert on a GPU: tests/gpu/test_gpu_sweeps.py).
        output = self.out("cuda")
        rc, log = run(4, output, env={"HPO_INJECT_FAULT": "cuda:3:1:1"}, program=HPO_WITH_FAULTS)
        self.assertEqual(rc, 1, log)
        errors = [line for line in log.splitlines() if line.startswith("hpo: error")]
        self.assertEqual(len(errors), 1, log)
        self.assertRegex(errors[0], r"^hpo: error on rank [0-3]: trial 3 failed: ", log)
        self.assertTrue(errors[0].endswith(
            ": CUDA error: an illegal memory access was encountered (HPO_INJECT_FAULT) at epoch 1 "
            "step 1 on rank 1: the GPU is unusable to this process after a CUDA error, so the job "
            "ends; `hpo sweep --resume` runs the trial again"), log)
        before, _ = read_trials(os.path.join(output, "study.h5"))
        self.assertNotIn(3, before, log)  # never recorded as the trial's own failure
        kept = {i: float(row["objective"]) for i, row in before.items()
                if row["status"] == b"completed"}

        rc, log = run(4, output, ["--resume"])
        self.assertEqual(rc, 0, log)
        after, _ = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(sorted(after), list(range(6)), log)
        for trial_id, row in after.items():
            self.assertEqual(row["status"], b"completed", (trial_id, log))
        for trial_id, objective in kept.items():  # nothing written before the end is lost
            self.assertEqual(float(after[trial_id]["objective"]), objective, trial_id)

    def test_when_every_trial_diverges_the_sweep_fails_with_the_reason(self):
        # No max_failed_trials: the sweep runs to its end, then exits 1 since no trial scored.
        text = base_config().replace(
            "      min: 0.001\n      max: 0.1\n", "      min: 1.0e+6\n      max: 1.0e+7\n")
        config = os.path.join(self.tmp, "nan.yaml")
        with open(config, "w") as f:
            f.write(text.replace("run_cap: 6", "run_cap: 2"))
        output = self.out("nan")
        rc, log = run(4, output, config=config)
        self.assertEqual(rc, 1, log)
        self.assertIn("every trial failed: none of the 2 finished trials produced a finite", log)
        self.assertIn("non-finite loss", log)
        self.assertNotIn("best trial", log)
        trials, _ = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 2)
        for row in trials.values():
            self.assertEqual(row["status"], b"failed")
            self.assertIn("non-finite loss", row["message"].decode())


def paused_rows(study):
    """How many rows of the study are pauses, superseded or not."""
    try:
        with h5py.File(study, "r") as f:
            return sum(1 for row in published_rows(f, "trials") if row["status"] == b"paused")
    except (OSError, KeyError):
        return 0


class Promotion(ResilienceCase):
    """ASHA's promotion variant; Curves below runs the same checks on search.model curves."""
    config = PROMOTION_CONFIG

    def killed_config(self):
        """The config on an eighth of its training set (3072 samples, not 24576): the kill below
        comes at the second pause, while most of the 8 trials have not started, so shorter trials
        still leave a sweep to interrupt; the resume trains the rest in an eighth of the time."""
        return self.write_config("killed.yaml", edited(
            base_config(self.config), ("train_samples: 24576", "train_samples: 3072")))

    def assert_consistent(self, study, log):
        """8 trials, each once, curves without repeated epochs, the best run to the end."""
        trials, curves = read_trials(study)
        self.assertEqual(sorted(trials), list(range(8)), log)
        statuses = {row["status"] for row in trials.values()}
        self.assertLessEqual(statuses, {b"completed", b"paused"}, log)
        self.assertIn(b"completed", statuses, log)
        for trial_id, epochs in curves.items():
            self.assertEqual(epochs, sorted(set(epochs)), (trial_id, log))
            self.assertEqual(len(epochs), int(trials[trial_id]["epochs"]), (trial_id, log))
        return trials

    def test_kill_9_while_trials_are_paused_then_resume_loses_no_trial(self):
        output = self.out("killed")
        study = os.path.join(output, "study.h5")
        config = self.killed_config()
        job = self.start(2, output, config=config)
        # Kill the whole job once a paused trial is in the study and a trial has finished or
        # been promoted: trials wait at rungs with their checkpoints.
        wait_for(lambda: paused_rows(study) >= 2, job)
        kill_session(job)
        before, _ = read_trials(study)
        paused = [i for i, row in before.items() if row["status"] == b"paused"]
        self.assertTrue(paused)
        for trial_id in paused:  # a paused trial keeps its checkpoint
            self.assertTrue(os.path.exists(os.path.join(output, "checkpoints",
                                                        "trial_%d.pt" % trial_id)), trial_id)

        rc, log = run(2, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, log)
        # A trial paused in the study may have been promoted before the kill: it then continues
        # from its checkpoint rather than waiting paused. Either way each one is taken up.
        resumed_line = re.search(r"resuming the study: .* finished, (\d+) to continue from "
                                 r"(?:its checkpoint|their checkpoints)(?:, (\d+) paused)?\n", log)
        self.assertTrue(resumed_line, log)
        taken_up = int(resumed_line.group(1)) + int(resumed_line.group(2) or 0)
        self.assertGreaterEqual(taken_up, len(paused), log)
        after = self.assert_consistent(study, log)
        for trial_id, row in before.items():  # every trial before the kill is still there
            self.assertIn(trial_id, after)
            if row["status"] != b"paused":
                self.assertEqual(row.tobytes(), after[trial_id].tobytes())
        # A trial promoted after the resume continued from its checkpoint: its epochs before the
        # pause were not trained again (one curve row per epoch, checked above) and it ends later.
        resumed = [i for i in paused if after[i]["status"] != b"paused"]
        for trial_id in resumed:
            self.assertGreater(int(after[trial_id]["epochs"]), int(before[trial_id]["epochs"]))
        for trial_id, row in after.items():  # only paused trials keep a checkpoint
            kept = os.path.exists(os.path.join(output, "checkpoints", "trial_%d.pt" % trial_id))
            self.assertEqual(kept, row["status"] == b"paused", trial_id)


class Curves(Promotion):
    """The learning-curve model's scheduler pauses and promotes trials by its predictions."""
    config = CURVES_CONFIG

    def assert_pauses_name_the_prediction(self, method, banner):
        """Runs the config with `method` to the end, on a training set a sixteenth of the size
        (1536 samples: no kill here, so trials need not last): the banner says `banner`; every
        pause names the prediction that made it."""
        config = self.write_config(method + ".yaml", edited(
            base_config(self.config), ("method: bayes", "method: " + method),
            ("train_samples: 24576", "train_samples: 1536")))
        output = self.out(method)
        rc, log = run(2, output, config=config)
        self.assertEqual(rc, 0, log)
        self.assertIn(" | %s | " % banner, log)
        trials = self.assert_consistent(os.path.join(output, "study.h5"), log)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            reasons = [row["message"].decode() for row in published_rows(f, "trials")
                       if row["status"] == b"paused"]
        self.assertTrue(reasons, log)
        for reason in reasons:
            self.assertRegex(reason, r"paused at epoch [123]: predicted final val_accuracy "
                                     r"[0-9.e-]+ \+- [0-9.e-]+; ((a new trial|paused trial \d+) "
                                     r"is expected to gain more per epoch|under a 5 % chance to "
                                     r"end best, it gives way to new trials)$")
        self.assertIn(b"completed", {row["status"] for row in trials.values()})

    def test_pauses_name_the_prediction(self):
        self.assert_pauses_name_the_prediction("bayes", "bayes search (curves), curve scheduler")

    def test_method_random_draws_and_the_curves_judge(self):
        self.assert_pauses_name_the_prediction("random", "random search, curve scheduler")


class WarmStart(ResilienceCase):
    """A sweep seeded with an earlier study's trials (warm_start) killed and resumed."""

    def test_kill_9_then_resume_loses_no_trial_and_keeps_the_warm_start(self):
        # Killed once 2 of the 8 trials are in its study, while most have not started: on a
        # quarter of the data (6144 samples) that still leaves a sweep to interrupt.
        text = edited(base_config(WARM_START_CONFIG),
                      ("train_samples: 24576", "train_samples: 6144"))
        earlier = self.out("earlier")
        # The earlier study is not interrupted: its trials train on a sixteenth of the data.
        earlier_config = self.write_config("earlier.yaml", edited(
            text, ("warm_start: WARM_START_STUDY\n", ""), ("run_cap: 8", "run_cap: 4"),
            ("train_samples: 6144", "train_samples: 1536")))
        rc, log = run(2, earlier, config=earlier_config)
        self.assertEqual(rc, 0, log)
        self.assertEqual(finished_trials(os.path.join(earlier, "study.h5")), 4, log)

        config = self.write_config("warm.yaml", text.replace("WARM_START_STUDY", earlier))
        output, study, before = self.kill_mid_sweep(2, config, 2, 8)
        recorded = os.path.join(earlier, "study.h5") + ": 4 trials, 4 used"
        with h5py.File(study, "r") as f:
            value = study_attributes(f)["warm_start"]
        self.assertEqual(value.decode() if isinstance(value, bytes) else str(value), recorded)

        rc, log = run(2, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, log)
        self.assertIn("warm start: 4 of 4 trials of " + os.path.join(earlier, "study.h5") +
                      "; they seed the search and early stopping", log)
        after, curves = read_trials(study)
        self.assertEqual(sorted(after), list(range(8)), log)
        for trial_id, row in before.items():
            self.assertEqual(row.tobytes(), after[trial_id].tobytes(), trial_id)
        for trial_id, epochs in curves.items():
            self.assertEqual(epochs, sorted(set(epochs)), (trial_id, log))
            self.assertEqual(len(epochs), int(after[trial_id]["epochs"]), (trial_id, log))
        self.assertLessEqual({row["status"] for row in after.values()},
                             {b"completed", b"stopped"}, log)


class Conditional(ResilienceCase):
    def assert_momentum_only_with_sgd(self, trials):
        """momentum is NaN (absent) exactly in the trials that are not sgd."""
        for trial_id, row in trials.items():
            sgd = row["optimizer"] == b"sgd"
            self.assertEqual(not np.isnan(row["momentum"]), sgd, (trial_id, row))
            if sgd:
                self.assertTrue(0.5 <= row["momentum"] <= 0.95, (trial_id, row))

    def test_kill_9_then_resume_keeps_absent_parameters_absent(self):
        config = self.half_data_config(CONDITIONAL_CONFIG)
        output, study, before = self.kill_mid_sweep(4, config, 2, 6)

        rc, log = run(4, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, log)
        self.assertIn("resuming the study: %d trial%s finished"
                      % (len(before), "" if len(before) == 1 else "s"), log)
        after, _ = read_trials(study)
        self.assertEqual(sorted(after), list(range(6)))  # no trial lost, none run twice
        for trial_id, row in before.items():
            self.assertEqual(row.tobytes(), after[trial_id].tobytes())
        self.assert_momentum_only_with_sgd(after)
        optimizers = {row["optimizer"] for row in after.values()}
        self.assertEqual(optimizers, {b"sgd", b"adam"}, "the seed should give both branches")

        # The uninterrupted sweep suggests the same trials: the resumed searcher saw the same
        # assignments (absent parameters absent, not 0).
        rc, log = run(4, self.out("whole"), config=config)
        self.assertEqual(rc, 0, log)
        whole, _ = read_trials(os.path.join(self.out("whole"), "study.h5"))
        for trial_id, row in whole.items():
            for name in ["lr", "optimizer", "width", "status"]:
                self.assertEqual(row[name], after[trial_id][name], (trial_id, name))
            self.assertEqual(np.isnan(row["momentum"]), np.isnan(after[trial_id]["momentum"]))

        report = subprocess.run([HPO, "report", study, "--format", "csv"], capture_output=True,
                                text=True)
        self.assertEqual(report.returncode, 0, report.stderr)
        header = report.stdout.splitlines()[0].split(",")
        momentum = header.index("momentum")
        for line in report.stdout.splitlines()[1:]:
            fields = line.split(",")
            self.assertEqual(fields[momentum] == "", fields[header.index("optimizer")] != "sgd",
                             line)


class Pbt(ResilienceCase):
    """Population-based training killed with kill -9 after its first exploit/explore, resumed."""

    def all_rows(self, study):
        with h5py.File(study, "r") as f:
            return [row.tobytes() for row in published_rows(f, "trials")]

    def test_kill_9_then_resume_loses_nothing_and_keeps_the_lineage(self):
        # 4 members; at epochs 2 and 4 the worst is replaced by trial 4, then trial 5. Killed
        # once 5 trials have rows: trial 4's first row is its pause at epoch 4, trial 5's its end
        # at epoch 6, so the kill comes after both generations, while the population trains its
        # last 2 epochs (seconds, also on half the data: 8192 samples).
        config = self.half_data_config(PBT_CONFIG, samples=16384)
        output, study, before = self.kill_mid_sweep(2, config, 5, 6)
        rows_before = self.all_rows(study)

        rc, log = run(2, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, log)
        self.assertIn(" search, population-based training | ", log)
        after, curves = read_trials(study)
        self.assertEqual(sorted(after), list(range(6)), log)  # no trial lost, none added
        self.assertEqual(self.all_rows(study)[:len(rows_before)], rows_before)  # byte for byte
        statuses = sorted(row["status"] for row in after.values())
        self.assertEqual(statuses, [b"completed"] * 4 + [b"stopped"] * 2, log)
        for trial_id, row in after.items():
            epochs = curves[trial_id]
            parent, at = int(row["parent_trial"]), int(row["parent_epoch"])
            first = at + 1 if parent >= 0 else 1
            # No epoch trained twice: each trial's epochs once, from where it started.
            self.assertEqual(epochs, list(range(first, first + len(epochs))), (trial_id, log))
            self.assertEqual(len(epochs), int(row["epochs"]), (trial_id, log))
            if row["status"] == b"completed":
                self.assertEqual(epochs[-1], 6, trial_id)
            if parent < 0:
                self.assertLess(trial_id, 4)
                continue
            # A child: its parent existed and had trained to parent_epoch; a member was replaced
            # there by it.
            self.assertIn(at, (2, 4), trial_id)
            self.assertIn(parent, after)
            self.assertIn(at, curves[parent], (trial_id, parent))
            replaced = [r for r in after.values()
                        if ("replaced by trial %d," % trial_id).encode() in r["message"]]
            self.assertEqual(len(replaced), 1, (trial_id, log))
            self.assertEqual(curves[int(replaced[0]["trial_id"])][-1], at)
        self.assertEqual(sorted(int(r["parent_epoch"]) for r in after.values()
                                if r["parent_trial"] >= 0), [2, 4])
        self.assertEqual(glob.glob(os.path.join(output, "checkpoints", "*.pt")), [])

        report = subprocess.run([HPO, "report", study], capture_output=True, text=True)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("Lineage (population-based training)", report.stdout)
        self.assertIn("trial 4 <- trial", report.stdout)


class Objectives(ResilienceCase):
    """A sweep of two objectives (bayes: ParEGO) killed with kill -9 and resumed."""

    def test_kill_9_then_resume_loses_no_trial_and_keeps_every_objective(self):
        output, study, before = self.kill_mid_sweep(2, OBJECTIVES_CONFIG, 1, 8)

        rc, log = run(2, output, ["--resume"], config=OBJECTIVES_CONFIG)
        self.assertEqual(rc, 0, log)
        after, _ = read_trials(study)
        self.assertEqual(sorted(after), list(range(8)), log)
        for trial_id, row in before.items():  # the rows before the kill, byte for byte
            self.assertEqual(row.tobytes(), after[trial_id].tobytes(), trial_id)
        with h5py.File(study, "r") as f:
            names = f["trials"].dtype.names
            goals = study_attributes(f)["objective_goals"]
            last = {}
            for row in published_rows(f, "curves"):
                last[int(row["trial_id"])] = float(row["val_accuracy"])
        self.assertEqual(names[:4], ("trial_id", "status", "objective", "objective:val_accuracy"))
        self.assertEqual(goals.decode() if isinstance(goals, bytes) else str(goals), "maximize")
        for trial_id, row in after.items():  # every objective of the last epoch, resumed or not
            self.assertEqual(row["status"], b"completed", (trial_id, log))
            self.assertAlmostEqual(float(row["objective:val_accuracy"]), last[trial_id], places=9)
            self.assertTrue(np.isfinite(row["objective"]), trial_id)

        report = subprocess.run([HPO, "report", study, "--format", "json"], capture_output=True,
                                text=True, check=True).stdout
        self.assertIn('"pareto_front": [', report)


def rank_pids(job):
    """The hpo ranks of a job started by start() (argv[0] is HPO, also after the hand-over)."""
    found = subprocess.run(["pgrep", "-s", str(job.pid), "-f", "^" + HPO], capture_output=True,
                           text=True)
    return [int(pid) for pid in found.stdout.split()]


def holds_or_catches(pid, number):
    """Whether process `pid` blocks or handles signal `number` (its /proc status masks)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            masks = dict(line.split(":", 1) for line in f if line.startswith(("SigBlk", "SigCgt")))
    except OSError:
        return False
    bit = 1 << (number - 1)
    return any(int(mask.strip(), 16) & bit for mask in masks.values())


def world_rank(pid):
    """The MPI world rank of process `pid`, from its environment."""
    rank = process_environment(pid).get(b"OMPI_COMM_WORLD_RANK")
    return None if rank is None else int(rank)


class StartAndEnd(ResilienceCase):
    """Faults in the seconds before a sweep runs and after its last trial, as bench/chaos.py found
    them (bench/RESULTS.md, "Chaos"): the preemption handlers start after MPI_Init and the config
    broadcast, the peer watch once the config is shared and ends with the sweep's outcome. A
    preemption signal while the sweep starts is held until the handlers are in
    (runtime/preemption.hpp); a rank frozen in MPI_Init or MPI_Finalize, where no watch runs, is
    ended by the job deadline (runtime/job_deadline.hpp)."""

    def wait_for_ranks(self, job, count):
        wait_for(lambda: len(rank_pids(job)) >= count, job, timeout=60)
        return rank_pids(job)

    def two_trials_config(self, *replacements):
        """configs/synthetic_resume.yaml with 2 trials, not 6, on a quarter of its training set
        (2048 samples): these faults come before the first trial or after the last, so the trials
        between need only be there."""
        return self.write_config("two-trials.yaml", edited(
            base_config(), ("run_cap: 6", "run_cap: 2"),
            ("train_samples: 8192", "train_samples: 2048"), *replacements))

    def test_sigusr1_during_start_up_exits_3_and_resumes(self):
        output = self.out("early-usr1")
        config = self.two_trials_config()
        job = self.start(2, output, config=config)
        # From main on, before MPI_Init: the dynamic loader's milliseconds before main are the one
        # window no program can cover (runtime/preemption.hpp).
        wait_for(lambda: len([pid for pid in rank_pids(job)
                              if holds_or_catches(pid, signal.SIGUSR1)]) >= 2, job, timeout=60)
        job.send_signal(signal.SIGUSR1)  # forwarded to ranks that have not installed a handler
        log, _ = job.communicate(timeout=120)
        self.assertEqual(job.returncode, 3, log)  # 138 before: the ranks died of SIGUSR1
        rc, resumed = run(2, output, ["--resume"], config=config)
        self.assertEqual(rc, 0, resumed)

    def test_a_rank_frozen_during_start_up_ends_the_job_with_4(self):
        config = os.path.join(self.tmp, "frozen.yaml")
        # 1 s scaled: a rank is frozen, so whichever wait ends the job (the start-up deadline or
        # the peer watch) is right to; the shorter, the sooner the start-up deadline comes.
        timeout_s = scaled_timeout(1)
        with open(config, "w") as f:
            f.write(base_config() + "peer_timeout_s: %d\n" % timeout_s)
        job = self.start(2, self.out("early-stop"), config=config)
        frozen = self.wait_for_ranks(job, 2)[-1]
        os.kill(frozen, signal.SIGSTOP)  # before MPI_Init on a busy machine, else soon after
        self.addCleanup(lambda: subprocess.run(["kill", "-CONT", str(frozen)],
                                               capture_output=True))
        # Frozen before MPI_Init: the others' start-up deadline (peer_timeout_s + 30 s); after it,
        # the peer watch (peer_timeout_s).
        limit_s = timeout_s + 30 + 40
        try:
            log, _ = job.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            self.fail("the job still waits on its frozen rank %d s later" % limit_s)
        self.assertEqual(job.returncode, 4, log)
        self.assertRegex(log, r"MPI did not start within|lost contact with rank 1", log)
        self.assertFalse(os.path.exists(os.path.join(self.out("early-stop"), "study.h5")), log)

    def test_a_rank_frozen_after_the_last_trial_does_not_hang_the_job(self):
        # Rank 0 prints `sweep finished` and then tests the best model on a test split made large
        # here (seconds), while rank 1 waits for the sweep's outcome: it is frozen there, and the
        # peer watch ends with the sweep, before MPI_Finalize waits for every rank.
        # The job ends in MPI_Finalize, peer_timeout_s after rank 0's test: 3 s scaled, as in
        # test_frozen_rank.py, whose sweeps complete under such a peer watch as the two trials
        # here must. They train on two_trials_config's quarter of the data: nothing interrupts
        # them.
        timeout_s = scaled_timeout(3)
        config = self.two_trials_config(("test_samples: 512", "test_samples: 400000"))
        with open(config, "a") as f:
            f.write("peer_timeout_s: %d\n" % timeout_s)
        job = self.start(2, self.out("late-stop"), config=config)
        output = JobOutput(job, trials=2)  # reads the job's lines as it prints them
        wait_for(lambda: "sweep finished" in output.text(), job, timeout=300)
        frozen = [pid for pid in rank_pids(job) if world_rank(pid) != 0]
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
            self.addCleanup(lambda pid=pid: subprocess.run(["kill", "-CONT", str(pid)],
                                                           capture_output=True))
        try:
            job.wait(timeout=2 * timeout_s + 20)  # the peer timeout, the job's end and slack
        except subprocess.TimeoutExpired:
            self.fail("the finished job still waits on its frozen rank %d s later"
                      % (2 * timeout_s + 20))
        trials, _ = read_trials(os.path.join(self.out("late-stop"), "study.h5"))
        self.assertEqual(len(trials), 2)


    def test_a_rank_frozen_while_it_exits_does_not_hold_the_wrapper(self):
        # After MPI_Finalize nothing of the rank runs, so no deadline of its own can help; under
        # scripts/hpo-mpirun, rank 0's end line bounds the job (bench/chaos.py found it).
        output = self.out("frozen-exit")
        argv = [WRAPPER] + command(2, output, config=self.two_trials_config(),
                                   program=HPO_WITH_FAULTS)[1:]
        done = run_in_own_session(argv, timeout=120, env=dict(
            os.environ, **MPI_ENV, HPO_STOP_AFTER_FINALIZE="0", HPO_MPIRUN_ABORT_GRACE_S="5"))
        log = done.describe()
        self.assertEqual(done.returncode, 0, log)
        self.assertIn("mpirun has not ended 5 s after hpo ended the job", log)
        trials, _ = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 2)


def main():
    global HPO, HPO_WITH_FAULTS
    HPO, HPO_WITH_FAULTS, argv = parse_command_line_with_faults()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
