"""Command trials under mpirun: the user's own program (tests/mpi/programs/trial_program.py) run by
every rank of a trial group with the torchrun environment. Run by ctest as:
python3 test_command_trials.py --hpo PATH -k SUITE.

Every test waits on progress (files the program writes, the study's rows), never on one wall-clock
figure, and ends every process it started, passing or failing.
"""

import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import h5py

from hpo_test_support import MPI_ENV, parse_command_line, process_environment, run_in_own_session

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "trial_program.py")
TRAINER_LIKE_PROGRAM = os.path.join(HERE, "programs", "trainer_like_program.py")
HPO = None  # set from the command line
# Debian's interpreter has Debian's python3-torch (a pyenv python3 earlier on the PATH may not).
PYTHON = "/usr/bin/python3"


def config(parameters, extra="", ranks_per_trial=1, method="grid", early="", run_cap="",
           grace=5):
    return ("sweep:\n"
            "  program: %s\n"
            "  method: %s\n"
            "  metric: {name: loss, goal: minimize}\n"
            "%s%s"
            "  parameters:\n%s"
            "ranks_per_trial: %d\n"
            "interpreter: %s\n"
            "terminate_grace_s: %g\n"
            "seed: 7\n%s") % (PROGRAM, method, early, run_cap, parameters, ranks_per_trial,
                               PYTHON, grace, extra)


def trainer_config(method, parameters, sweep_extra, extra=""):
    """A sweep of trainer_like_program.py: 4 evaluations of 0.4 s each, saved in 0.4 s."""
    return ("sweep:\n  program: %s\n  method: %s\n"
            "  metric: {name: eval_loss, goal: minimize}\n%s"
            "  parameters:\n%s    train_seconds: {value: 0.4}\n    save_seconds: {value: 0.4}\n"
            "epochs: 4\ninterpreter: %s\nterminate_grace_s: 10\nseed: 7\n%s") % (
                TRAINER_LIKE_PROGRAM, method, sweep_extra, parameters, PYTHON, extra)


def read_study(study):
    """({trial_id: row}, {trial_id: [(epoch, row)]}) of a study file."""
    with h5py.File(study, "r") as f:
        trials = {int(row["trial_id"]): row for row in f["trials"][:]
                  if row["trial_id"] >= 0}  # fill rows past the published ones
        curves = {}
        for row in f["curves"][:]:
            curves.setdefault(int(row["trial_id"]), []).append(row)
    return trials, curves


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def program_pids(folder):
    """The running trial_program.py processes of sweeps under `folder` (their HPO_TRIAL_DIR is
    in it): never those of another test running beside this one (the Slurm test runs the same
    program)."""
    found = subprocess.run(["pgrep", "-f", PROGRAM], capture_output=True, text=True)
    prefix = (folder.rstrip(os.sep) + os.sep).encode()
    pids = []
    for pid in map(int, found.stdout.split()):
        try:
            if process_environment(pid).get(b"HPO_TRIAL_DIR", b"").startswith(prefix):
                pids.append(pid)
        except OSError:
            pass
    return pids


def leftover_pids(folder):
    """The processes the programs of sweeps under `folder` left behind (trial_program.py's
    --leftover writes each one's pid to TRIAL_DIR/leftover-rank-R.pid)."""
    pids = []
    for pid_file in glob.glob(os.path.join(folder, "*", "trials", "*", "leftover-*.pid")):
        try:
            with open(pid_file) as f:
                pids.append(int(f.read()))
        except (OSError, ValueError):
            pass
    return pids


def alive(pid):
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_until(predicate, what, process=None, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if process is not None and process.poll() is not None:
            raise AssertionError("the job ended while waiting for %s:\n%s" %
                                 (what, process.stdout.read()))
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


class CommandCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-command-")
        self.jobs = []

    def tearDown(self):
        for job in self.jobs:
            if job.poll() is None:
                for pid in self.session(job):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                job.wait()
            if job.stdout:
                job.stdout.close()
        # Nothing of ours outlives the test.
        for pid in program_pids(self.tmp) + leftover_pids(self.tmp):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    @staticmethod
    def session(job):
        found = subprocess.run(["pgrep", "-s", str(job.pid)], capture_output=True, text=True)
        return [int(pid) for pid in found.stdout.split()]

    def write(self, name, content):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(content)
        return path

    def command(self, np_count, config_path, output, extra=()):
        return (["mpirun", "--oversubscribe", "-np", str(np_count), HPO, "sweep", "--config",
                 config_path, "--output", output] + list(extra))

    def run_sweep(self, np_count, config_path, output, extra=(), timeout=300):
        done = run_in_own_session(self.command(np_count, config_path, output, extra), timeout,
                                  env=dict(os.environ, **MPI_ENV))
        return done.returncode, done.describe()

    def start(self, np_count, config_path, output, extra=()):
        job = subprocess.Popen(self.command(np_count, config_path, output, extra),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True, env=dict(os.environ, **MPI_ENV))
        self.jobs.append(job)
        return job

    def assert_no_program_left(self):
        wait_until(lambda: not program_pids(self.tmp), "every program process to be gone",
                   timeout=60)


class TwoRankDdp(CommandCase):
    def test_each_group_is_a_torch_distributed_world(self):
        path = self.write("ddp.yaml", config(
            "    lr: {values: [0.5, 0.25]}\n"
            "    steps: {value: 3}\n"
            "    dist: {value: true}\n"
            "    epochs: {value: 3}\n"
            "    optimizer.config.learning_rate: {value: 1.0e-05}\n",
            extra="metrics: [allreduce_sum]\n", ranks_per_trial=2))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(4, path, output)
        self.assertEqual(rc, 0, log)
        self.assertIn("task command", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(sorted(trials), [0, 1])
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            lr = float(row["lr"])
            self.assertAlmostEqual(float(row["objective"]), lr * 3)
            # A parameter named like a study column is stored as param:NAME.
            self.assertEqual(int(row["param:epochs"]), 3)
            self.assertEqual(int(row["epochs"]), 3)
            steps = curves[trial_id]
            self.assertEqual([int(r["epoch"]) for r in steps], [1, 2, 3])
            self.assertEqual([float(r["allreduce_sum"]) for r in steps], [3.0, 3.0, 3.0])
            starts = []
            for rank in (0, 1):
                trial_dir = os.path.join(output, "trials", str(trial_id))
                with open(os.path.join(trial_dir, "start-rank-%d.json" % rank)) as f:
                    starts.append(json.load(f))
                self.assertTrue(os.path.exists(os.path.join(trial_dir, "rank-%d.log" % rank)))
            for rank, start in enumerate(starts):
                env = start["env"]
                self.assertEqual(env["RANK"], str(rank))
                self.assertEqual(env["WORLD_SIZE"], "2")
                self.assertEqual(env["LOCAL_RANK"], str(rank))
                self.assertEqual(env["LOCAL_WORLD_SIZE"], "2")
                self.assertEqual(env["GROUP_RANK"], "0")
                self.assertEqual(env["HPO_TRIAL_ID"], str(trial_id))
                self.assertEqual(env["MASTER_PORT"], starts[0]["env"]["MASTER_PORT"])
                self.assertEqual(env["HPO_CHECKPOINT_DIR"], starts[0]["env"]["HPO_CHECKPOINT_DIR"])
                self.assertFalse([k for k in env if k.startswith("OMPI_COMM_WORLD")])
                # W&B's default command: --name=value, floats spelled as Python does.
                self.assertIn("--lr=%r" % lr, start["argv"])
                self.assertIn("--dist=True", start["argv"])
                self.assertIn("--optimizer.config.learning_rate=1e-05", start["argv"])
            with open(starts[0]["env"]["HPO_PARAMS_JSON"]) as f:
                self.assertEqual(json.load(f)["lr"], lr)
        self.assert_no_program_left()


class Failures(CommandCase):
    def test_a_failing_hanging_or_silent_program_fails_its_trial_and_the_sweep_goes_on(self):
        path = self.write("failures.yaml", config(
            "    mode: {values: [fail, hang, silent, ok]}\n"
            "    fail_rank: {value: 1}\n"
            "    fail_step: {value: 2}\n"
            "    steps: {value: 3}\n",
            extra="trial_timeout_s: 6\n", ranks_per_trial=2))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials, _ = read_study(os.path.join(output, "study.h5"))
        by_mode = {text(row["mode"]): row for row in trials.values()}
        self.assertEqual(text(by_mode["ok"]["status"]), "completed")
        self.assertEqual(text(by_mode["fail"]["status"]), "failed")
        self.assertEqual(text(by_mode["hang"]["status"]), "failed")
        self.assertEqual(text(by_mode["silent"]["status"]), "failed")
        self.assertIn("rank 1: exit status 3", log)
        self.assertIn("boom: rank 1 fails on purpose at step 2", log)
        self.assertIn("timed out after", log)
        self.assertIn("exited without reporting loss", log)
        self.assert_no_program_left()


class FailureMessages(CommandCase):
    def test_a_failed_trials_message_keeps_the_exception_and_the_log_keeps_it_all(self):
        path = self.write("traceback.yaml", config(
            "    mode: {value: traceback}\n"
            "    fail_step: {value: 2}\n"
            "    steps: {value: 3}\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 1, log)  # its one trial failed: the sweep failed
        trials, _ = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(text(trials[0]["status"]), "failed", log)
        cause = "RuntimeError: boom: the cause at the end of a long traceback"
        # The study's message: the reason, then the end of stderr (its front cut, marked "...").
        message = text(trials[0]["message"])
        self.assertTrue(message.startswith("rank 0: exit status 1; its stderr ends:\n...\n"),
                        message)
        self.assertTrue(message.endswith("\n" + cause), message)
        # The trial's log: the whole stderr, every frame.
        with open(os.path.join(output, "trials", "0", "rank-0.log")) as f:
            rank_log = f.read()
        self.assertIn("Traceback (most recent call last):", rank_log)
        self.assertIn("in main", rank_log)
        self.assertEqual(rank_log.count("in fail_deep_down"), 13, rank_log)
        self.assertIn(cause, rank_log)
        # `hpo report` shows it.
        done = subprocess.run([HPO, "report", os.path.join(output, "study.h5")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Failed trials:", done.stdout)
        self.assertIn(cause, done.stdout)


class Leftovers(CommandCase):
    def test_what_a_program_leaves_behind_ends_with_its_trial(self):
        path = self.write("leftover.yaml", config(
            "    leftover: {values: [setsid, double_fork]}\n"
            "    steps: {value: 2}\n", grace=1))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials, _ = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(sorted(text(row["status"]) for row in trials.values()),
                         ["completed", "completed"], log)
        pid_files = glob.glob(os.path.join(output, "trials", "*", "leftover-rank-0.pid"))
        self.assertEqual(len(pid_files), 2, log)
        for pid_file in pid_files:
            with open(pid_file) as f:
                pid = int(f.read())
            wait_until(lambda: not os.path.exists("/proc/%d" % pid),
                       "leftover %d (%s) to be gone" % (pid, pid_file), timeout=10)


class ProgramEnvironment(CommandCase):
    def test_unflushed_metrics_arrive_and_the_variables_mean_what_the_readme_says(self):
        path = self.write("environment.yaml", config(
            "    mode: {values: [unflushed, ok]}\n"
            "    lr: {value: 0.5}\n"
            "    steps: {value: 2}\n",
            extra="trial_timeout_s: 4\n", grace=1))
        output = os.path.join(self.tmp, "out")
        env = dict(os.environ, **MPI_ENV)
        env.pop("PYTHONUNBUFFERED", None)
        done = run_in_own_session(self.command(2, path, output), 300, env=env)
        log = done.describe()
        self.assertEqual(done.returncode, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        by_mode = {text(row["mode"]): trial_id for trial_id, row in trials.items()}
        # Printed without a flush, then the program hung until trial_timeout_s: the step arrived.
        unflushed = by_mode["unflushed"]
        self.assertEqual(text(trials[unflushed]["status"]), "failed", log)
        self.assertIn("timed out", text(trials[unflushed]["message"]))
        steps = [(int(r["epoch"]), float(r["loss"])) for r in curves.get(unflushed, [])]
        self.assertEqual(steps, [(1, 0.5)], log)
        ok = by_mode["ok"]
        trial_dir = os.path.join(output, "trials", str(ok))
        with open(os.path.join(trial_dir, "start-rank-0.json")) as f:
            program_env = json.load(f)["env"]
        self.assertEqual(program_env["PYTHONUNBUFFERED"], "1")
        # np.random.seed takes it.
        self.assertLess(int(program_env["HPO_TRIAL_SEED"]), 2 ** 32)
        self.assertGreaterEqual(int(program_env["HPO_TRIAL_SEED"]), 0)
        # HPO_PARAMS_JSON: the path of OUTPUT/trials/ID/params.json, the parameters as JSON.
        self.assertEqual(program_env["HPO_PARAMS_JSON"],
                         os.path.join(os.path.abspath(trial_dir), "params.json"))
        with open(program_env["HPO_PARAMS_JSON"]) as f:
            self.assertEqual(json.load(f), {"mode": "ok", "lr": 0.5, "steps": 2})
        # HPO_PROCESS_TAG: one per rank ("PID-RANDOM"), the same for each trial a rank runs.
        tags = set()
        for start_file in glob.glob(os.path.join(output, "trials", "*", "start-rank-0.json")):
            with open(start_file) as f:
                tags.add(json.load(f)["env"]["HPO_PROCESS_TAG"])
        self.assertRegex(program_env["HPO_PROCESS_TAG"], r"^[0-9]+-[0-9a-f]{16}$")
        self.assertLessEqual(len(tags), 2, tags)  # 2 ranks, one group each


    def test_the_note_on_metrics_not_recorded_is_printed_once_per_sweep(self):
        # 2 groups each run trials that print allreduce_sum, which `metrics:` does not list.
        path = self.write("note.yaml", config(
            "    lr: {values: [0.1, 0.2, 0.3, 0.4]}\n"
            "    steps: {value: 1}\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials, _ = read_study(os.path.join(output, "study.h5"))
        self.assertEqual({int(row["group"]) for row in trials.values()}, {0, 1}, log)
        self.assertEqual(log.count("the program reports metrics the study does not record"), 1,
                         log)


# A program that prints its metrics as Hugging Face's Trainer does (Python dicts, fractional epochs
# on its training-loss lines, a closing "***** eval metrics *****" summary), one W&B-style name
# with a slash, and one dict line hpo cannot read.
FRAMEWORK_PROGRAM = r'''
import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--learning_rate", type=float)
parser.add_argument("--test_below", type=float, default=1.0)  # evaluate only below this rate
args, _ = parser.parse_known_args()
for epoch in (1, 2, 3):
    print({"loss": round(0.9 / epoch, 4), "grad_norm": 1.25, "learning_rate": 4.5e-05,
           "epoch": epoch - 0.5})
    print({"eval_loss": 0.6 / epoch, "eval_accuracy": 0.7 + 0.05 * epoch + args.learning_rate,
           "val/f1": 0.5 + 0.1 * epoch, "eval_runtime": 1.2, "epoch": float(epoch)})
print({"train_runtime": 3.3, "train_loss": 0.42, "epoch": 3.0})
print("{'eval_accuracy': <function accuracy at 0x7f3a2c1b>}")
print("***** eval metrics *****")
print("  epoch                   =        3.0")
print("  eval_accuracy           =     %.4f" % (0.85 + args.learning_rate))
# Its test split, as the built-in tasks report theirs: metrics and a confusion matrix.
if args.learning_rate < args.test_below:
    with open(os.path.join(os.environ["HPO_TRIAL_DIR"], "test_results.json"), "w") as f:
        json.dump({"test_accuracy": 0.8 + args.learning_rate, "macro_f1": 0.75,
                   "confusion": {"labels": ["neg", "pos"], "rows": [[40, 3], [5, 52]]}}, f)
'''


class FrameworkMetrics(CommandCase):
    def run_framework_sweep(self, parameters="", extra=""):
        """FRAMEWORK_PROGRAM over learning_rate 0.01, 0.02, 0.03 on 2 groups: (output, log)."""
        program = self.write("trainer_like.py", FRAMEWORK_PROGRAM)
        path = self.write("framework.yaml", (
            "sweep:\n"
            "  program: %s\n"
            "  method: grid\n"
            "  metric: {name: eval_accuracy, goal: maximize}\n"
            "  parameters:\n"
            "    learning_rate: {values: [0.01, 0.02, 0.03]}\n"
            "%s%s"
            "interpreter: %s\n") % (program, parameters, extra, PYTHON))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        return output, log

    def test_trainer_dicts_slash_names_and_an_unreadable_line(self):
        output, log = self.run_framework_sweep(extra="metrics: [eval_loss, val/f1]\n")
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 3, log)
        for trial_id, row in trials.items():
            lr = 0.01 * (trial_id + 1)
            self.assertEqual(text(row["status"]), "completed", log)
            # Three epochs from the dict lines; the closing summary repeats epoch 3.
            self.assertEqual(int(row["epochs"]), 3, log)
            self.assertAlmostEqual(float(row["objective"]), 0.85 + lr, places=9)
            rows = curves[trial_id]
            self.assertEqual([int(r["epoch"]) for r in rows], [1, 2, 3])
            self.assertAlmostEqual(float(rows[0]["eval_loss"]), 0.6)
            # val/f1 is the column val%2Ff1.
            self.assertAlmostEqual(float(rows[2]["val%2Ff1"]), 0.8)
        # The unreadable line is named, once per group (2 groups here), never silently dropped.
        warnings = [line for line in log.splitlines() if "look like a metrics dict" in line]
        self.assertTrue(1 <= len(warnings) <= 2, log)
        self.assertIn("<function accuracy at 0x7f3a2c1b>", warnings[0])
        self.assertIn("the value of 'eval_accuracy' is not a Python literal", warnings[0])
        report = subprocess.run([HPO, "report", os.path.join(output, "study.h5")],
                                capture_output=True, text=True)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("Best trial: 2 (eval_accuracy 0.88)", report.stdout)
        # The best trial's test_results.json is in the study as a built-in task's test split is.
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            self.assertAlmostEqual(float(f.attrs["test_accuracy"]), 0.83)
            self.assertAlmostEqual(float(f.attrs["test_macro_f1"]), 0.75)
            self.assertEqual(f["test_confusion"][:].tolist(), [[40, 3], [5, 52]])
        self.assertIn("Test split (trial 2): test_accuracy 0.83 test_macro_f1 0.75", report.stdout)

    def test_a_best_trial_without_its_test_results_is_named_in_a_note(self):
        # Only the trials with learning_rate below 0.025 write test_results.json; 0.03 is the best.
        output, log = self.run_framework_sweep(parameters="    test_below: {value: 0.025}\n")
        self.assertTrue(os.path.exists(os.path.join(output, "trials", "0", "test_results.json")))
        notes = [line for line in log.splitlines() if "wrote no trials/2/test_results.json" in line]
        self.assertEqual(len(notes), 1, log)
        self.assertIn("hpo: note: the best trial, 2 (completed)", notes[0])
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            self.assertEqual(int(f.attrs["best_trial_id"]), 2)
            self.assertNotIn("test_accuracy", f.attrs)
            self.assertNotIn("test_confusion", f)

# What Katib's pytorch-mnist example program prints, in Katib's default metrics format.
KATIB_PROGRAM = r'''
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int)
parser.add_argument("--batch-size", type=int)
parser.add_argument("--lr", type=float)
parser.add_argument("--momentum", type=float)
args = parser.parse_args()
for epoch in (1, 2, 3):
    accuracy = 0.9 - abs(args.lr - 0.02) - 0.1 * abs(args.momentum - 0.8) + 0.01 * epoch
    print("Train Epoch: %d [0/60000 (0%%)]\tloss=%.4f" % (epoch, 1 - accuracy))
    print("Validation-accuracy=%.4f\tValidation-loss=%.4f" % (accuracy, 1 - accuracy))
'''
KATIB_EXAMPLE = os.path.join(os.path.dirname(HERE), "unit", "data", "katib", "random.yaml")


class KatibExperiment(CommandCase):
    def experiment(self, replace=()):
        program = self.write("mnist.py", KATIB_PROGRAM)
        with open(KATIB_EXAMPLE) as f:
            text = f.read().replace("PROGRAM", program)
        for old, new in replace:
            self.assertIn(old, text)
            text = text.replace(old, new)
        return self.write("experiment.yaml", text)

    def test_katibs_random_example_runs_as_it_is(self):
        path = self.experiment()
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        self.assertIn("not used by hpo", log)
        self.assertIn("spec.parallelTrialCount (line 21)", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 6, log)  # maxTrialCount
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            self.assertEqual([int(r["epoch"]) for r in curves[trial_id]], [1, 2, 3])
            lr, momentum = float(row["lr"]), float(row["momentum"])
            self.assertTrue(0.01 <= lr <= 0.03)
            self.assertIn(round(momentum, 6), [0.5, 0.6, 0.7, 0.8, 0.9])
            # --lr=${trialParameters.learningRate} reached the program.
            expected = 0.9 - abs(lr - 0.02) - 0.1 * abs(momentum - 0.8) + 0.03
            self.assertAlmostEqual(float(row["objective"]), expected, places=3)
            self.assertAlmostEqual(float(curves[trial_id][2]["Validation-loss"]), 1 - expected,
                                   places=3)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            config_text = text(f.attrs["config"])
        self.assertTrue(config_text.startswith("# hpo sweep --config " + path), config_text)
        # The study resumes from the hpo config it holds.
        rc, log = self.run_sweep(2, path, output, ["--resume"])
        self.assertEqual(rc, 0, log)

    def test_a_spec_hpo_cannot_honour_is_one_line_and_exit_2(self):
        path = self.experiment([("  parallelTrialCount: 3",
                                 "  metricsCollectorSpec:\n    collector:\n"
                                 "      kind: TensorFlowEvent\n"
                                 "  parallelTrialCount: 3")])
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 2, log)
        self.assertIn(path + ":23: spec.metricsCollectorSpec.collector.kind: 'TensorFlowEvent' "
                      "has no hpo equivalent", log)
        self.assertFalse(os.path.exists(os.path.join(output, "study.h5")))


SAGEMAKER_EXAMPLE = os.path.join(os.path.dirname(HERE), "unit", "data", "sagemaker")


class SageMakerTuningJob(CommandCase):
    def test_a_script_mode_tuning_job_runs_as_it_is(self):
        # The spec names its script relative to its folder, as sagemaker_program does.
        folder = os.path.join(self.tmp, "spec")
        shutil.copytree(SAGEMAKER_EXAMPLE, folder)
        path = os.path.join(folder, "tuning-job.json")
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        # The S3 channel comes from its copy beside the spec (input/data/training), linked into
        # each trial's SageMaker folder as SageMaker's container lays it out.
        self.assertNotIn("InputDataConfig", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        channel = os.path.join(output, "trials", "0", "sagemaker", "input", "data", "training")
        self.assertEqual(os.path.realpath(channel),
                         os.path.realpath(os.path.join(folder, "input", "data", "training")))
        self.assertEqual(len(trials), 6, log)  # MaxNumberOfTrainingJobs
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            self.assertEqual([int(r["epoch"]) for r in curves[trial_id]], [1, 2, 3])
            lr, units = float(row["lr"]), int(row["hidden-units"])
            adam = text(row["optimizer"]) == "adam"
            # --lr VALUE --hidden-units VALUE --optimizer VALUE --epochs 3 reached the script.
            expected = (0.9 - 0.05 * abs(math.log10(lr) + 2) + 0.0005 * units +
                        (0.01 if adam else 0.0) + 0.03)
            self.assertAlmostEqual(float(row["objective"]), expected, places=3)
            self.assertAlmostEqual(float(curves[trial_id][2]["validation:loss"]), 1 - expected,
                                   places=3)

    def test_a_training_image_without_a_script_is_one_line_and_exit_2(self):
        folder = os.path.join(self.tmp, "spec")
        shutil.copytree(SAGEMAKER_EXAMPLE, folder)
        path = os.path.join(folder, "tuning-job.json")
        with open(path) as f:
            spec = f.read()
        with open(path, "w") as f:
            f.write(spec.replace('"sagemaker_program": "\\"train.py\\"",', ""))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 2, log)
        self.assertIn(path + ":28: TrainingJobDefinition.StaticHyperParameters.sagemaker_program: "
                      "missing", log)


class LiveView(CommandCase):
    def status(self, output):
        done = subprocess.run([HPO, "status", output], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_status_and_the_report_follow_a_running_sweep(self):
        # 8 trials of 4 epochs of 0.5 s on 2 groups: about 8 s.
        path = self.write("live.yaml", config(
            "    lr: {values: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]}\n"
            "    steps: {value: 4}\n"
            "    sleep: {value: 0.5}\n"))
        output = os.path.join(self.tmp, "out")
        job = self.start(2, path, output)
        report = os.path.join(output, "report.html")
        seen = {}

        def running_with_a_result():
            if job.poll() is not None or not os.path.exists(os.path.join(output, "study.h5")):
                return False
            text = self.status(output)
            if "a sweep is running it" in text and "trials: 0 of" not in text:
                seen["status"] = text
                return True
            return False

        wait_until(running_with_a_result, "hpo status to show a running sweep with a result",
                   job)
        self.assertIn("of 8 finished", seen["status"])
        self.assertRegex(seen["status"], r"state: running, ~\S+ left")
        wait_until(lambda: os.path.exists(report), "OUTPUT/report.html", job)
        with open(report) as f:
            live = f.read()
        self.assertIn('http-equiv="refresh"', live)
        self.assertIn("The sweep is running", live)
        # It lists the trials running, as hpo status does.
        self.assertRegex(live, r'<p id="running" class="guide">running: (trial \d+|none)')
        self.assertEqual(job.wait(timeout=300), 0, job.stdout.read())
        final = self.status(output)
        self.assertIn("no sweep is running it", final)
        self.assertIn("trials: 8 of 8 finished (8 completed", final)
        self.assertIn("state: finished", final)
        with open(report) as f:
            page = f.read()
        self.assertNotIn("http-equiv", page)
        self.assertIn('<script id="hpo-study"', page)
        # A path that is no study: one line, exit 2.
        done = subprocess.run([HPO, "status", self.tmp], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("study.h5", done.stderr)

    def test_status_shows_a_long_trials_epochs_before_any_trial_finishes(self):
        # One trial of 3 epochs of 3 s: the running state is published a few seconds after each
        # epoch, not only when a trial finishes.
        path = self.write("long.yaml", config(
            "    lr: {values: [0.1]}\n"
            "    steps: {value: 3}\n"
            "    sleep: {value: 3}\n"))
        output = os.path.join(self.tmp, "out")
        job = self.start(2, path, output)
        seen = {}

        def an_epoch_shown():
            if job.poll() is not None or not os.path.exists(os.path.join(output, "study.h5")):
                return False
            seen["status"] = self.status(output)
            return "running: trial 0 (epoch " in seen["status"]

        wait_until(an_epoch_shown, "hpo status to show trial 0's first epoch", job)
        self.assertIn("trials: 0 of 1 finished", seen["status"])
        self.assertIn("1 running", seen["status"])
        self.assertEqual(job.wait(timeout=300), 0, job.stdout.read())


class EarlyStopping(CommandCase):
    def test_hyperband_stops_a_command_trial_and_its_processes_are_gone(self):
        path = self.write("hyperband.yaml", config(
            "    lr: {values: [0.1, 0.2, 0.4, 0.8, 1.6, 3.2]}\n"
            "    steps: {value: 8}\n"
            "    sleep: {value: 0.2}\n",
            early="  early_terminate: {type: hyperband, min_iter: 1, eta: 2}\n",
            extra="epochs: 8\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        stopped = [t for t, row in trials.items() if text(row["status"]) == "stopped"]
        self.assertTrue(stopped, log)
        for trial_id in stopped:
            self.assertLess(len(curves[trial_id]), 8)
            self.assertEqual(int(trials[trial_id]["epochs"]), len(curves[trial_id]))
        self.assert_no_program_left()

    def test_the_curve_model_judges_a_program_that_reports_every_second_epoch(self):
        # Epochs 2, 4, 6 and 8 only: the curve scheduler reads the epochs between as interpolated
        # (it dereferenced a missing prediction and crashed rank 0 at the first judged epoch).
        path = self.write("sparse.yaml", config(
            "    lr: {values: [0.1, 0.2, 0.4, 0.8, 1.6]}\n"
            "    steps: {value: 8}\n"
            "    report_every: {value: 2}\n",
            method="bayes",
            early="  early_terminate: {type: hyperband, min_iter: 1, eta: 2}\n",
            run_cap="  run_cap: 5\n",
            extra="epochs: 8\nsearch: {model: curves, startup_trials: 2}\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        self.assertIn("curve scheduler", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 5, log)
        completed = [t for t, row in trials.items() if text(row["status"]) == "completed"]
        self.assertTrue(completed, log)
        for trial_id in completed:
            statuses = {t: (row["status"], row["message"]) for t, row in trials.items()}
            self.assertEqual([int(row["epoch"]) for row in curves[trial_id]], [2, 4, 6, 8],
                             (trial_id, statuses, log))
        self.assert_no_program_left()

    def paused_sweep(self, mode):
        """`method: bayes` + hyperband with no `search:` keys (the curve scheduler) over six
        trials of 5 falling steps: each pauses at step 1 while new trials are due, and some go on
        later. `mode` is the program's: `ok` resumes from its checkpoint, `fresh` keeps none. The
        program saves the step it is in on SIGTERM (`graceful`): one killed between reporting a
        step and saving it would start over too.
        Returns (rc, log, trials, curves)."""
        path = self.write("paused.yaml", config(
            "    lr: {values: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}\n"
            "    steps: {value: 5}\n"
            "    sleep: {value: 0.02}\n"
            "    falling: {value: true}\n"
            "    graceful: {value: true}\n"
            "    mode: {value: %s}\n" % mode,
            method="bayes", early="  early_terminate: {type: hyperband, min_iter: 1, eta: 3}\n",
            run_cap="  run_cap: 6\n", extra="epochs: 5\n"))
        output = os.path.join(self.tmp, "out-" + mode)
        rc, log = self.run_sweep(2, path, output)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        return rc, log, trials, curves

    def test_a_paused_program_that_starts_over_is_named_restarted(self):
        # A W&B-style program keeps no checkpoint: each trial the curve scheduler resumes trains
        # its first epochs again. hpo says so (once, and in each such trial's message), its
        # scheduler counts resumes at their cost from then on, and the study still holds each
        # epoch once.
        rc, log, trials, curves = self.paused_sweep("fresh")
        self.assertEqual(rc, 0, log)
        self.assertIn("paused at epoch 1", log)
        # Often not 2: the program finishes the step it is in on SIGTERM, and hpo keeps it.
        restarted = [t for t, row in trials.items() if re.match(
            r"restarted: its program reported step 1 first, not (\d+) \(it was to start from its "
            r"own checkpoint at epoch \d+\)", text(row["message"]))]
        self.assertTrue(restarted, log)
        self.assertEqual(log.count("hpo: warning: trial "), 1, log)  # once per sweep
        self.assertIn("keeps no checkpoint in HPO_CHECKPOINT_DIR", log)
        self.assertIn("the curve scheduler now counts a paused trial's resume as all its epochs",
                      log)
        for trial_id in restarted:
            self.assertEqual([int(row["epoch"]) for row in curves[trial_id]], [1, 2, 3, 4, 5],
                             log)
        # A program that resumes from its checkpoint is not named so.
        rc, log, trials, _ = self.paused_sweep("ok")
        self.assertEqual(rc, 0, log)
        self.assertIn("promoted", log)
        self.assertNotIn("restarted", log)

    def test_a_trainer_script_paused_after_its_report_goes_on_from_that_evaluation(self):
        """Hugging Face's Trainer prints an evaluation before it saves that step's checkpoint,
        dies at once on SIGTERM, and evaluates at fractional epochs. hpo lets the save finish
        before it stops a paused trial (without, the program lost the save, or left it half-written
        and failed on resume: "Can't find a valid checkpoint"), and numbers a resumed program's
        steps from its epochs (without, they counted from 1 again: `restarted`)."""
        path = self.write("trainer.yaml", trainer_config(
            "bayes", "    lr: {values: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}\n",
            "  early_terminate: {type: hyperband, min_iter: 1, eta: 3}\n  run_cap: 6\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        self.assertIn("paused at epoch", log)
        self.assertIn("promoted", log)
        self.assertNotIn("restarted", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 6, log)
        resumes = 0
        for trial_id, row in trials.items():
            self.assertIn(text(row["status"]), ("completed", "paused"), (trial_id, log))
            epochs = [int(r["epoch"]) for r in curves[trial_id]]
            self.assertEqual(epochs, list(range(1, len(epochs) + 1)), (trial_id, log))
            with open(os.path.join(output, "trials", str(trial_id), "rank-0.log")) as f:
                printed = f.read()
            # Each resume goes on from the checkpoint of the last evaluation printed before it.
            evaluations = 0
            for line in printed.splitlines():
                if line.startswith("{'eval_loss'"):
                    evaluations += 1
                elif line.startswith("resumed from checkpoint-"):
                    self.assertEqual(line, "resumed from checkpoint-%d" % evaluations, printed)
                    resumes += 1
            self.assertEqual(evaluations, len(epochs), printed)
        self.assertGreater(resumes, 0, log)

    def test_a_trainer_scripts_pbt_child_goes_on_from_its_parents_evaluation(self):
        """A PBT child copies its parent's checkpoint folder (Trainer's checkpoint-2, saved after
        the parent's second evaluation) and reports its third evaluation next, at epoch 0.75: that
        is step 3, as for a resumed trial, not a start over (`restarted`)."""
        path = self.write("pbt-trainer.yaml", trainer_config(
            "random", "    lr: {distribution: log_uniform_values, min: 0.01, max: 1.0}\n",
            "  run_cap: 4\n",
            "pbt:\n  population: 4\n  perturbation_interval: 2\n  mutations: [lr]\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        self.assertNotIn("restarted", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        child = trials[4]
        self.assertEqual(text(child["status"]), "completed", log)
        self.assertEqual(int(child["parent_epoch"]), 2)
        self.assertEqual([int(row["epoch"]) for row in curves[4]], [3, 4], log)
        with open(os.path.join(output, "trials", "4", "rank-0.log")) as f:
            self.assertIn("resumed from checkpoint-2", f.read())

    def run_pbt(self, program_params="    sleep: {value: 0.05}\n", pbt_extra=""):
        """A PBT sweep of trial_program.py: 4 members of 4 steps, exploit/explore at step 2 (the
        child is trial 4); `program_params` more of the program's parameters, `pbt_extra` more
        `pbt:` keys. Returns (rc, log, output folder)."""
        path = self.write("pbt.yaml", config(
            "    lr: {distribution: log_uniform_values, min: 0.01, max: 1.0}\n"
            "    steps: {value: 4}\n" + program_params,
            method="random", run_cap="  run_cap: 4\n",
            extra="epochs: 4\npbt:\n  population: 4\n  perturbation_interval: 2\n"
                  "  mutations: [lr]\n" + pbt_extra))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        return rc, log, output

    def test_population_based_training_copies_the_parents_checkpoint_folder(self):
        # The program keeps a step before it reports it: hpo pauses the parent right after its
        # report of step 2, and one that reports first may be killed before it keeps step 2 (its
        # folder then holds step 1, and the child trains step 2 again).
        rc, log, output = self.run_pbt("    sleep: {value: 0.2}\n    save_first: {value: true}\n")
        self.assertEqual(rc, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        child = trials[4]  # trials keep their last row
        self.assertEqual(text(child["status"]), "completed", log)
        parent = int(child["parent_trial"])
        self.assertIn(parent, range(4))
        self.assertEqual(int(child["parent_epoch"]), 2)
        self.assertIn(2, [int(row["epoch"]) for row in curves[parent]])
        self.assertEqual([int(row["epoch"]) for row in curves[4]], [3, 4])
        # The program found its parent's state in HPO_CHECKPOINT_DIR and went on from step 2.
        with open(os.path.join(output, "trials", "4", "rank-0.log")) as f:
            self.assertIn("resumed after step 2", f.read())
        self.assertIn("replaced by trial 4 (from trial %d" % parent, log)
        self.assert_no_program_left()

    def test_a_pbt_program_that_prints_past_its_pause_still_finishes_the_sweep(self):
        # No sleep: each member prints all its steps before the pause at step 2 reaches it. The
        # steps after the verdict are its curve's, not reports (they ended every sweep with "0
        # trials, 4 paused" before).
        rc, log, output = self.run_pbt(program_params="")
        self.assertEqual(rc, 0, log)
        trials, _ = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 5, log)
        self.assertIn("replaced by trial 4", log)

    def pbt_of_a_program_that_ignores_its_checkpoint(self, strict):
        rc, log, output = self.run_pbt(
            program_params="    sleep: {value: 0.05}\n    mode: {value: fresh}\n",
            pbt_extra="  strict: %s\n" % strict)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        return rc, log, trials, curves

    def test_a_pbt_program_that_starts_over_is_named_restarted(self):
        rc, log, trials, curves = self.pbt_of_a_program_that_ignores_its_checkpoint("false")
        self.assertEqual(rc, 0, log)
        child = trials[4]
        self.assertEqual(text(child["status"]), "completed", log)
        self.assertEqual([int(row["epoch"]) for row in curves[4]], [1, 2, 3, 4], log)
        self.assertIn("restarted: its program reported step 1 first, not 3 (it was to start "
                      "from trial %d's checkpoint at epoch 2)" % int(child["parent_trial"]),
                      text(child["message"]))
        self.assertEqual(log.count("hpo: warning: trial "), 1, log)  # once per sweep
        self.assertIn("loads HPO_CHECKPOINT_DIR", log)
        report = subprocess.run([HPO, "report", os.path.join(self.tmp, "out")],
                                capture_output=True, text=True, timeout=60)
        self.assertIn("trial 4 <- trial %d at epoch 2" % int(child["parent_trial"]), report.stdout)
        self.assertIn("[restarted: its program started over", report.stdout)

    def test_pbt_strict_fails_a_program_that_starts_over(self):
        rc, log, trials, _ = self.pbt_of_a_program_that_ignores_its_checkpoint("true")
        self.assertEqual(text(trials[4]["status"]), "failed", log)
        self.assertIn("(pbt.strict)", text(trials[4]["message"]), log)


class Lifetime(CommandCase):
    def test_kill_9_of_the_job_leaves_no_program_running(self):
        # Each program also leaves a process behind in a session of its own (ignoring SIGTERM):
        # the ranks' orphan watches end those once the ranks are gone.
        path = self.write("long.yaml", config(
            "    leftover: {values: [setsid, double_fork]}\n"
            "    steps: {value: 1000}\n"
            "    sleep: {value: 0.5}\n", ranks_per_trial=2, grace=1))
        output = os.path.join(self.tmp, "out")
        job = self.start(4, path, output)
        wait_until(lambda: len(leftover_pids(self.tmp)) == 4,
                   "both groups' programs to start and leave a process behind", job)
        pids = []
        for start_file in glob.glob(os.path.join(output, "trials", "*", "start-rank-*.json")):
            with open(start_file) as f:
                pids.append(json.load(f)["pid"])
        # SIGKILL to mpirun and the hpo ranks only: nobody forwards anything to the programs.
        ranks = subprocess.run(["pgrep", "-s", str(job.pid), "-f", "^" + HPO],
                               capture_output=True, text=True).stdout.split()
        self.assertEqual(len(ranks), 4, ranks)
        for pid in [job.pid] + [int(p) for p in ranks]:
            os.kill(pid, signal.SIGKILL)
        job.wait()

        wait_until(lambda: not any(alive(pid) for pid in pids),
                   "the programs to die with their ranks", timeout=60)
        wait_until(lambda: not any(alive(pid) for pid in leftover_pids(self.tmp)),
                   "what the programs left behind to be ended", timeout=60)

    def preempt_after_step(self, job, state, step):
        """Waits until the program's checkpoint `state` holds `step`, sends SIGUSR1 to the job's
        ranks (a preemption) and returns the job's log once it has exited 3."""
        def step_done():
            try:
                with open(state) as f:
                    return json.load(f)["step"] >= step
            except (OSError, ValueError):
                return False
        wait_until(step_done, "the program's checkpoint of step %d" % step, job)
        ranks = subprocess.run(["pgrep", "-s", str(job.pid), "-f", "^" + HPO],
                               capture_output=True, text=True).stdout.split()
        for pid in ranks:
            os.kill(int(pid), signal.SIGUSR1)
        log, _ = job.communicate(timeout=120)
        self.assertEqual(job.returncode, 3, log)
        return log

    def test_sigusr1_then_resume_continues_from_the_programs_checkpoint(self):
        path = self.write("resume.yaml", config(
            "    lr: {value: 0.5}\n"
            "    epochs: {value: 6}\n"
            "    steps: {value: 6}\n"
            "    sleep: {value: 0.4}\n"
            "    graceful: {value: true}\n",
            method="random", run_cap="  run_cap: 1\n", ranks_per_trial=2))
        output = os.path.join(self.tmp, "out")
        job = self.start(2, path, output)
        state = os.path.join(output, "checkpoints", "trial_0", "state-rank-0.json")
        log = self.preempt_after_step(job, state, 2)
        self.assertIn("--resume", log)
        self.assert_no_program_left()
        with open(state) as f:
            stopped_after = json.load(f)["step"]
        self.assertLess(stopped_after, 6, log)

        rc, resumed = self.run_sweep(2, path, output, ["--resume"])
        self.assertEqual(rc, 0, resumed)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(text(trials[0]["status"]), "completed")
        self.assertAlmostEqual(float(trials[0]["objective"]), 3.0)
        with open(os.path.join(output, "trials", "0", "rank-0.log")) as f:
            self.assertIn("resumed after step %d" % stopped_after, f.read())
        # The resumed run reported only the steps after the checkpoint; the study keeps the
        # steps from before the interruption too (OUTPUT/trials/0/steps.tsv), each once, with the
        # step the program finished and printed after SIGTERM.
        self.assertEqual([int(r["epoch"]) for r in curves[0]], list(range(1, 7)))
        self.assertEqual([float(r["loss"]) for r in curves[0]],
                         [0.5 * step for step in range(1, 7)])
        self.assertEqual(int(trials[0]["epochs"]), 6)

    def test_a_program_resumed_after_its_last_step_completes_with_the_steps_it_reported(self):
        # SIGUSR1 while the program trains its last step: it finishes that step on SIGTERM
        # (printing it) and exits. Resumed, it has nothing left to train and reports nothing; the
        # trial completes with the steps recorded before (it failed: "exited without reporting").
        path = self.write("last.yaml", config(
            "    lr: {value: 0.5}\n"
            "    steps: {value: 2}\n"
            "    sleep: {value: 2.0}\n"
            "    graceful: {value: true}\n",
            method="random", run_cap="  run_cap: 1\n", extra="epochs: 2\n"))
        output = os.path.join(self.tmp, "out")
        job = self.start(1, path, output)
        state = os.path.join(output, "checkpoints", "trial_0", "state-rank-0.json")
        log = self.preempt_after_step(job, state, 1)
        with open(state) as f:
            self.assertEqual(json.load(f)["step"], 2, log)  # it finished the last step

        rc, resumed = self.run_sweep(1, path, output, ["--resume"])
        self.assertEqual(rc, 0, resumed)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(text(trials[0]["status"]), "completed", resumed)
        self.assertAlmostEqual(float(trials[0]["objective"]), 1.0)
        self.assertEqual([int(r["epoch"]) for r in curves[0]], [1, 2])


class BareWandbFile(CommandCase):
    def test_a_bare_wandb_sweep_file_runs_with_command_line_settings(self):
        program = os.path.join(self.tmp, "train.py")
        shutil.copy(PROGRAM, program)
        path = self.write("sweep.yaml",
                          "program: train.py\n"
                          "project: demo\n"
                          "entity: someone\n"
                          "method: random\n"
                          "metric:\n  name: loss\n  goal: minimize\n"
                          "parameters:\n"
                          "  lr: {distribution: log_uniform_values, min: 0.01, max: 1.0}\n"
                          "  format: {value: keyvalue}\n"
                          "command: [/usr/bin/env, %s, '${program}', '${args}']\n" % PYTHON)
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 2, log)
        self.assertIn("--run-cap", log)
        self.assertFalse(os.path.exists(output))
        rc, log = self.run_sweep(2, path, output, ["--run-cap", "3", "--seed", "5"])
        self.assertEqual(rc, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 3)
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed")
            self.assertEqual(len(curves[trial_id]), 3)  # epoch=N loss=X lines, Katib's format
        rc, log = self.run_sweep(2, path, output, ["--run-cap", "3", "--seed", "6", "--resume"])
        self.assertEqual(rc, 2, log)  # another seed is another sweep
        self.assertIn("seed", log)


class Examples(CommandCase):
    def test_the_bare_wandb_example_runs_as_the_readme_says(self):
        root = os.path.dirname(os.path.dirname(HERE))
        output = os.path.join(self.tmp, "out")
        # As a user with a venv of wandb and torch first on the PATH (`python` is its Python).
        venv = os.environ.get("HPO_PLATFORM_VENV", "/opt/hpo-mpi/platform-clients")
        env = dict(os.environ, **MPI_ENV,
                   PATH=os.path.join(venv, "bin") + ":/usr/bin:/bin:/usr/sbin:/sbin")
        done = run_in_own_session(
            ["mpirun", "--oversubscribe", "-np", "2", HPO, "sweep", "--config",
             os.path.join(root, "configs", "wandb_sweep", "sweep.yaml"), "--run-cap", "3",
             "--output", output], 300, env=env)
        log = done.describe()
        self.assertEqual(done.returncode, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 3, log)
        for trial_id, row in trials.items():
            self.assertIn(text(row["status"]), ("completed", "stopped"), log)
            self.assertTrue(all(float(r["val_loss"]) >= 0 for r in curves[trial_id]))
        self.assert_no_program_left()


    def test_the_ddp_example_goes_on_from_its_checkpoint_after_a_pause(self):
        """configs/fashion_mnist_ddp.yaml with 2 trials on 3,000 images: its bayes + hyperband
        pauses the first trial at epoch 1 for the second and then promotes it. The program saves
        its checkpoint before it reports an epoch, so the promoted trial goes on from epoch 2
        (a program that reports first is killed before it saves, and restarts)."""
        root = os.path.dirname(os.path.dirname(HERE))
        with open(os.path.join(root, "configs", "fashion_mnist_ddp.yaml")) as f:
            shipped = f.read()
        program = os.path.join(root, "configs", "programs", "fashion_cnn_ddp.py")
        edits = [("program: programs/fashion_cnn_ddp.py", "program: " + program),
                 ("run_cap: 8", "run_cap: 2"),
                 ("interpreter: python3", "interpreter: " + PYTHON),
                 ("    epochs:\n      value: 3\n",
                  "    epochs:\n      value: 3\n    train_samples:\n      value: 3000\n")]
        for old, new in edits:
            self.assertIn(old, shipped)
            shipped = shipped.replace(old, new)
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, self.write("ddp.yaml", shipped), output)
        self.assertEqual(rc, 0, log)
        self.assertIn("trial 0 paused at epoch 1", log)
        self.assertIn("trial 0 promoted; it continues from its checkpoint", log)
        self.assertNotIn("restarted", log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(text(trials[0]["status"]), "completed", log)
        self.assertEqual([int(row["epoch"]) for row in curves[0]], [1, 2, 3], log)
        self.assert_no_program_left()


FINETUNE_CONFIG = os.path.join(os.path.dirname(os.path.dirname(HERE)), "configs",
                               "newsgroups_minilm.yaml")
TOPICS = {
    "space": "orbit launch shuttle rocket moon nasa satellite payload astronaut telescope",
    "hockey": "goalie puck stanley cup playoff skate rink penalty defenseman overtime",
    "autos": "engine brake clutch sedan dealer mileage transmission tire radiator coupe",
}


def write_corpus(folder, rows_per_label):
    """train/validation/test TSVs of three topics, as scripts/fetch-text-corpus.sh writes them."""
    import csv
    import random
    generator = random.Random(5)
    for split, rows in rows_per_label.items():
        with open(os.path.join(folder, split + ".tsv"), "w", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
            writer.writerow(["text", "label"])
            for label, words in TOPICS.items():
                for _ in range(rows):
                    text_words = generator.choices(words.split(), k=12)
                    writer.writerow(["Subject: re " + " ".join(text_words) + " \"quoted\"", label])


class FineTuneExample(CommandCase):
    """configs/newsgroups_minilm.yaml, the Hugging Face Trainer script with the packaged MiniLM, on
    a small corpus of the test's own: every trial a 2-process DDP job, nothing downloaded."""

    def run_minilm(self, early_stopping):
        """Runs the shipped config on the test's corpus, 2 trials of 2 evaluations each; with
        `early_stopping`, its hyperband as ASHA's promotion variant. Returns (output, log)."""
        import yaml
        with open(FINETUNE_CONFIG) as handle:
            settings = yaml.safe_load(handle)
        interpreter = settings["interpreter"]
        self.assertTrue(os.access(interpreter, os.X_OK),
                        "%s is missing: scripts/install-deps.sh installs it" % interpreter)
        write_corpus(self.tmp, {"train": 16, "validation": 6, "test": 5})
        sweep = settings["sweep"]
        sweep["program"] = os.path.join(os.path.dirname(FINETUNE_CONFIG), sweep["program"])
        parameters = sweep["parameters"]
        for split in ("train", "validation", "test"):
            parameters[split + "_file"] = {"value": os.path.join(self.tmp, split + ".tsv")}
        # 40 of the 48 training rows: 3 steps of 8 rows per rank on 2 ranks (5 alone), evaluated
        # (and saved) after step 2 (epoch 0.6667; 0.6 alone) and at the end.
        parameters["max_train_samples"] = {"value": 40}
        parameters["max_seq_length"] = {"value": 24}
        parameters["num_train_epochs"] = {"value": 1}
        parameters["per_device_train_batch_size"] = {"values": [8]}
        for key in ("eval_steps", "logging_steps", "save_steps"):
            parameters[key] = {"value": 0.5}
        sweep["run_cap"] = 2
        settings["epochs"] = 2
        settings["search"]["startup_trials"] = 2
        if early_stopping:
            # A grid in that order: trial 0 learns, trial 1 (lr 1e-9) does not, so trial 0 is
            # the better at the rung whatever the draws.
            settings["asha"] = {"promotion": True}
            sweep["method"] = "grid"
            del settings["search"]
            parameters["learning_rate"] = {"values": [3.0e-4, 1.0e-9]}
            parameters["warmup_steps"] = {"value": 0.0}
            parameters["weight_decay"] = {"value": 0.01}
        else:
            del sweep["early_terminate"]  # every trial completes: the best has its test split
        output = os.path.join(self.tmp, "out")
        settings["output"] = output
        path = self.write("minilm.yaml", yaml.safe_dump(settings))
        env = dict(os.environ, **MPI_ENV, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        done = run_in_own_session(
            ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", HPO, "sweep", "--config",
             path], 600, env=env)
        log = done.describe()
        self.assertEqual(done.returncode, 0, log)
        return output, log

    def test_a_paused_trainer_trial_goes_on_from_the_checkpoint_it_saved(self):
        """The seed users' pause path: hpo waits for Trainer's save of the step it paused on,
        stops the programs, and the promoted trial's Trainer resumes from that checkpoint."""
        output, log = self.run_minilm(early_stopping=True)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            rows = [(int(row["trial_id"]), text(row["status"]), text(row["message"]))
                    for row in f["trials"][:] if row["trial_id"] >= 0]
        _, curves = read_study(os.path.join(output, "study.h5"))
        # Trial 0 is the first at rung 1: under the promotion variant it pauses (top 0 of 1), and
        # is promoted once trial 1 reaches the rung behind it; trial 1 stays paused.
        trial_zero = [row for row in rows if row[0] == 0]
        self.assertEqual([status for _, status, _ in trial_zero], ["paused", "completed"], log)
        self.assertNotIn("restarted", trial_zero[-1][2], log)
        self.assertEqual([int(r["epoch"]) for r in curves[0]], [1, 2], log)
        with open(os.path.join(output, "trials", "0", "rank-0.log")) as handle:
            rank0 = handle.read()
        # One evaluation per run: the resumed run began after the saved step, not at step 1.
        printed = [line for line in rank0.splitlines() if line.startswith("{'eval_loss'")]
        self.assertEqual(len(printed), 2, rank0)
        self.assertIn("trial 0 promoted; it continues from its checkpoint", log)
        wait_until(lambda: subprocess.run(["pgrep", "-f", self.tmp]).returncode != 0,
                   "every process of the sweep to be gone", timeout=60)

    def test_the_transformers_example_tunes_ddp_trials_and_keeps_the_best_test_split(self):
        output, log = self.run_minilm(early_stopping=False)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 2, log)
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            trial_dir = os.path.join(output, "trials", str(trial_id))
            with open(os.path.join(trial_dir, "rank-0.log")) as handle:
                rank0 = handle.read()
            # Trainer's dicts, floats as strings ('epoch': '0.5', then '1'): two evaluations.
            printed = [line for line in rank0.splitlines() if line.startswith("{'eval_loss'")]
            self.assertEqual(len(printed), 2, rank0)
            self.assertIn("'epoch': '0.6667'", printed[0])  # 2 ranks as one DDP world
            self.assertEqual([int(r["epoch"]) for r in curves[trial_id]], [1, 2], log)
            for step, line in zip(curves[trial_id], printed):
                shown = line.split("'eval_macro_f1': '")[1].split("'")[0]
                self.assertEqual("%.4g" % float(step["eval_macro_f1"]), shown)
                self.assertTrue(0.0 <= float(step["eval_accuracy"]) <= 1.0)
                # The mean cross-entropy of a 3-way head after 2-3 steps is near ln 3 (1.10);
                # transformers 5's default doubles it on 2 processes (the script turns that off).
                self.assertLess(float(step["eval_loss"]), 1.5 * math.log(3), line)
            # Both ranks trained as one DDP world (without --use_cpu, Accelerate would not).
            self.assertNotIn("parallel_mode != ParallelMode.DISTRIBUTED", rank0)
            self.assertTrue(os.path.exists(os.path.join(trial_dir, "rank-1.log")))
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            best = int(f.attrs["best_trial_id"])
            accuracy = float(f.attrs["test_accuracy"])
            self.assertTrue(0.0 <= float(f.attrs["test_macro_f1"]) <= 1.0)
            confusion = f["test_confusion"][:]
        self.assertEqual(confusion.shape, (3, 3))
        self.assertEqual(int(confusion.sum()), 15)  # every test row, once
        self.assertAlmostEqual(accuracy, confusion.trace() / 15.0)
        report = subprocess.run([HPO, "report", os.path.join(output, "study.h5")],
                                capture_output=True, text=True)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("Test split (trial %d): test_accuracy" % best, report.stdout)
        wait_until(lambda: subprocess.run(["pgrep", "-f", self.tmp]).returncode != 0,
                   "every process of the sweep to be gone", timeout=60)

if __name__ == "__main__":
    HPO, ARGV = parse_command_line()
    unittest.main(argv=ARGV, verbosity=2)
