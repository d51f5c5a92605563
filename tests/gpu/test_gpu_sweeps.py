"""Sweeps on GPUs through `hpo` itself (the CUDA build), run by ctest as
python3 test_gpu_sweeps.py --hpo PATH --hpo-with-faults PATH SUITE with SUITE one of:
- SharedGpu: 4 one-rank trial groups share GPU 0 (trials_per_gpu: 4); every trial completes, and
  the best trial's model, saved from the GPU, is read back and scored on the test split;
- VisibleDevices: a command sweep with cuda_visible_devices: true gives each rank's program the GPU
  of its node-local rank (AssignGpu's rule), and the program sees exactly that one;
- Pbt: population-based training with 2 one-rank groups on GPU 0: members pause at checkpoints
  saved from the GPU, continue from them, and children start from their parents' (model and
  optimizer state loaded back onto the GPU); every trial ends completed or replaced;
- CommandNccl: a command trial's torch 2.x program joins an NCCL process group across a group of
  2 ranks on 2 GPUs and trains with DistributedDataParallel.
- DeviceFault: a device-side assert in one trial (--hpo-with-faults, HPO_INJECT_FAULT=cuda) ends
  the job with one line and exit 1; `--resume` then finishes the sweep, losing no result.
- NoGpu (the CUDA build where no GPU is visible, as on CI's machines): a sweep trains on the CPU
  after one line saying so; a config that asks for GPUs (trials_per_gpu, cuda_visible_devices:
  true) ends with exit 2 and one line naming the key, before anything is written.
A suite whose GPUs (or a CUDA torch for its program) are not there, or NoGpu where one is, prints
"skipped: WHY" and exits 0, which ctest reports as skipped. Every run ends every process it started (run_in_own_session).
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from hpo_test_support import (MPI_ENV, parse_command_line_with_faults,  # noqa: E402
                              published_rows, run_in_own_session)

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "nccl_program.py")
HPO = None  # set from the command line
HPO_WITH_FAULTS = None  # `hpo` with HPO_INJECT_FAULT's fault injected, from the command line


def torch_python():
    """An interpreter with a CUDA torch: HPO_TORCH_PYTHON, the one scripts/install-deps.sh --cuda
    makes, or python3 (a GPU machine's image)."""
    candidates = [os.environ.get("HPO_TORCH_PYTHON"), "/opt/hpo-mpi/torch-cuda/bin/python",
                  shutil.which("python3")]
    for python in candidates:
        if python and os.path.exists(python):
            probe = subprocess.run([python, "-c", "import torch; print(torch.cuda.device_count())"],
                                   capture_output=True, text=True)
            if probe.returncode == 0:
                return python, int(probe.stdout.strip() or 0)
    return None, 0


def visible_gpus():
    """GPUs the node's driver lists (nvidia-smi), 0 without one."""
    if shutil.which("nvidia-smi") is None:
        return 0
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))


def skip_unless(condition, why):
    if not condition:
        print("skipped: " + why)
        sys.exit(0)


def read_trials(study):
    with h5py.File(study, "r") as f:
        return [row for row in f["trials"][:] if row["trial_id"] >= 0]


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


class GpuSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-gpu-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def sweep(self, ranks, config_text, env=None, timeout=480, program=None, extra=(), code=0):
        path = os.path.join(self.tmp, "sweep.yaml")
        with open(path, "w") as f:
            f.write(config_text)
        output = os.path.join(self.tmp, "out")
        done = run_in_own_session(
            ["mpirun", "--oversubscribe", "-np", str(ranks), program or HPO, "sweep", "--config",
             path, "--output", output] + list(extra), timeout,
            env=dict(os.environ, **MPI_ENV, **(env or {})))
        self.assertEqual(done.returncode, code, done.describe())
        return output, done.output

    def program_reports(self, output):
        reports = []
        for path in glob.glob(os.path.join(output, "**", "gpu-rank-*.json"), recursive=True):
            with open(path) as f:
                reports.append(json.load(f))
        return reports


def command_config(python, ranks_per_trial, parameters, extra=""):
    return ("sweep:\n"
            "  program: %s\n"
            "  method: grid\n"
            "  metric: {name: loss, goal: minimize}\n"
            "  parameters:\n%s"
            "ranks_per_trial: %d\n"
            "interpreter: %s\n"
            "cuda_visible_devices: true\n"
            "seed: 3\n%s") % (PROGRAM, parameters, ranks_per_trial, python, extra)


class SharedGpu(GpuSweep):
    def test_four_trials_share_one_gpu(self):
        skip_unless(visible_gpus() >= 1, "needs a GPU (nvidia-smi lists none)")
        output, log = self.sweep(4, (
            "sweep:\n"
            "  method: random\n"
            "  metric: {name: val_accuracy, goal: maximize}\n"
            "  run_cap: 8\n"
            "  parameters:\n"
            "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
            "    batch_size: {value: 64}\n"
            "    width: {values: [32, 64]}\n"
            "task: synthetic\n"
            "epochs: 2\n"
            "trials_per_gpu: 4\n"
            "seed: 5\n"), env={"CUDA_VISIBLE_DEVICES": "0"})
        self.assertIn("4 ranks on 1 GPU", log)
        trials = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 8)
        self.assertEqual({text(t["status"]) for t in trials}, {"completed"}, log)
        self.assertEqual({int(t["group"]) for t in trials}, {0, 1, 2, 3})
        # The best trial's model, saved from the GPU, is read back and scored on the test split.
        self.assertIn("best trial test accuracy: ", log)
        self.assertNotIn("could not evaluate", log)
        # Its file holds CPU tensors: it loads without map_location where there is no GPU.
        python, _ = torch_python()
        skip_unless(python is not None, "needs a torch to read the model file (HPO_TORCH_PYTHON)")
        (model,) = glob.glob(os.path.join(output, "models", "trial_*.pt"))
        devices = subprocess.run(
            [python, "-c", "import sys, torch; m = torch.jit.load(sys.argv[1]); "
             "print(sorted({t.device.type for t in list(m.parameters()) + list(m.buffers())}))",
             model], capture_output=True, text=True, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        self.assertEqual(devices.returncode, 0, devices.stderr)
        self.assertEqual(devices.stdout.strip(), "['cpu']")


class VisibleDevices(GpuSweep):
    def test_each_rank_sees_the_gpu_of_its_node_local_rank(self):
        python, torch_gpus = torch_python()
        skip_unless(python is not None and torch_gpus >= 1,
                    "needs a GPU and a CUDA torch for the program (HPO_TORCH_PYTHON)")
        sharing = 1 if torch_gpus >= 2 else 2  # 2 ranks: one GPU each, or both on GPU 0
        output, log = self.sweep(2, command_config(
            python, 1, "    lr: {values: [0.1, 0.2, 0.3, 0.4]}\n",
            extra="trials_per_gpu: %d\n" % sharing))
        reports = self.program_reports(output)
        self.assertEqual(len(reports), 4, log)
        # Groups of one rank on one node: group g is world rank g, node-local rank g.
        group_of = {int(t["trial_id"]): int(t["group"])
                    for t in read_trials(os.path.join(output, "study.h5"))}
        for report in reports:
            self.assertEqual(report["cuda_visible_devices"],
                             str(group_of[report["trial_id"]] // sharing), report)
            self.assertEqual(report["device_count"], 1, report)
        self.assertEqual(set(group_of.values()), {0, 1})


class Pbt(GpuSweep):
    def test_members_and_children_continue_from_gpu_checkpoints(self):
        skip_unless(visible_gpus() >= 1, "needs a GPU (nvidia-smi lists none)")
        output, log = self.sweep(2, (
            "sweep:\n"
            "  method: random\n"
            "  metric: {name: val_accuracy, goal: maximize}\n"
            "  run_cap: 4\n"
            "  parameters:\n"
            "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
            "    batch_size: {values: [32, 64]}\n"
            "    optimizer: {values: [sgd, adam]}\n"
            "    width: {value: 64}\n"
            "pbt: {population: 4, perturbation_interval: 2, mutations: [lr, batch_size]}\n"
            "task: synthetic\n"
            "synthetic: {train_samples: 2048, val_samples: 256, test_samples: 256}\n"
            "epochs: 6\n"
            "trials_per_gpu: 2\n"
            "seed: 5\n"), env={"CUDA_VISIBLE_DEVICES": "0"})
        self.assertIn("2 ranks on 1 GPU", log)
        study = os.path.join(output, "study.h5")
        trials = {int(t["trial_id"]): t for t in read_trials(study)}
        curves = {}
        with h5py.File(study, "r") as f:
            for row in published_rows(f, "curves"):
                curves.setdefault(int(row["trial_id"]), []).append(int(row["epoch"]))
        # Generations at epochs 2 and 4 replace one member each: trials 4 and 5.
        self.assertEqual(sorted(trials), list(range(6)), log)
        self.assertEqual(sorted(text(t["status"]) for t in trials.values()),
                         ["completed"] * 4 + ["stopped"] * 2, log)
        for trial_id, row in trials.items():
            parent, at = int(row["parent_trial"]), int(row["parent_epoch"])
            first = at + 1 if parent >= 0 else 1
            epochs = sorted(curves[trial_id])
            self.assertEqual(epochs, list(range(first, first + len(epochs))), (trial_id, log))
            if text(row["status"]) == "completed":
                self.assertEqual(epochs[-1], 6, (trial_id, log))
            if parent >= 0:
                self.assertIn(at, curves[parent], (trial_id, log))
        self.assertEqual(sorted(int(t["parent_epoch"]) for t in trials.values()
                                if t["parent_trial"] >= 0), [2, 4])
        self.assertEqual(glob.glob(os.path.join(output, "checkpoints", "*.pt")), [])
        self.assertIn("best trial test accuracy: ", log)


class CommandNccl(GpuSweep):
    def test_a_group_of_two_is_an_nccl_world(self):
        python, torch_gpus = torch_python()
        skip_unless(python is not None and torch_gpus >= 2,
                    "needs 2 GPUs and a CUDA torch for the program (HPO_TORCH_PYTHON)")
        output, log = self.sweep(2, command_config(
            python, 2, "    lr: {values: [0.05, 0.1]}\n    dist: {value: true}\n"
                       "    epochs: {value: 3}\n"))
        trials = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual({text(t["status"]) for t in trials}, {"completed"}, log)
        self.assertEqual(len(trials), 2)
        reports = self.program_reports(output)
        self.assertEqual(len(reports), 4, log)  # 2 trials x 2 ranks
        for report in reports:
            self.assertEqual(report["backend"], "nccl")
            self.assertEqual(report["allreduce_sum"], 3.0)  # ranks 1 + 2
            self.assertEqual(report["device_count"], 1)
        # One GPU per rank of the group: the two ranks of a trial saw different devices.
        self.assertEqual({r["cuda_visible_devices"] for r in reports}, {"0", "1"})


SYNTHETIC = ("sweep:\n"
             "  method: grid\n"
             "  metric: {name: val_accuracy, goal: maximize}\n"
             "  parameters:\n"
             "    lr: {values: [0.01, 0.05]}\n"
             "task: synthetic\n"
             "epochs: 1\n"
             "synthetic: {train_samples: 256, val_samples: 64, test_samples: 64}\n")


class DeviceFault(GpuSweep):
    def test_a_device_side_assert_ends_the_job_and_resume_finishes_the_sweep(self):
        skip_unless(visible_gpus() >= 1, "needs a GPU (nvidia-smi lists none)")
        config = ("sweep:\n"
                  "  method: random\n"
                  "  metric: {name: val_accuracy, goal: maximize}\n"
                  "  run_cap: 4\n"
                  "  parameters:\n"
                  "    lr: {values: [0.01, 0.05]}\n"
                  "task: synthetic\n"
                  "epochs: 2\n"
                  "trials_per_gpu: 2\n"
                  "synthetic: {train_samples: 2048, val_samples: 256, test_samples: 256}\n"
                  "seed: 7\n")
        gpu0 = {"CUDA_VISIBLE_DEVICES": "0"}
        output, log = self.sweep(2, config, env=dict(gpu0, HPO_INJECT_FAULT="cuda:2:1:0"),
                                 program=HPO_WITH_FAULTS, code=1)
        errors = [line for line in log.splitlines() if line.startswith("hpo: error")]
        self.assertEqual(len(errors), 1, log)
        self.assertIn("trial 2 failed: CUDA error: device-side assert triggered", errors[0])
        self.assertIn("`hpo sweep --resume` runs the trial again", errors[0])
        self.assertNotIn("terminate called", log)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            before = {int(r["trial_id"]): r for r in published_rows(f, "trials")}
        self.assertNotIn(2, before, log)
        kept = {i: float(r["objective"]) for i, r in before.items() if text(r["status"]) ==
                "completed"}

        output, log = self.sweep(2, config, env=gpu0, extra=["--resume"])
        trials = {int(t["trial_id"]): t for t in read_trials(os.path.join(output, "study.h5"))}
        self.assertEqual(sorted(trials), [0, 1, 2, 3], log)
        self.assertEqual({text(t["status"]) for t in trials.values()}, {"completed"}, log)
        for trial_id, objective in kept.items():
            self.assertEqual(float(trials[trial_id]["objective"]), objective, trial_id)


class NoGpu(GpuSweep):
    def setUp(self):
        super().setUp()
        skip_unless(visible_gpus() == 0, "a GPU is visible: the gpu-labelled tests cover it")

    def refused(self, config_text, key):
        path = os.path.join(self.tmp, "sweep.yaml")
        with open(path, "w") as f:
            f.write(config_text)
        output = os.path.join(self.tmp, "out")
        done = run_in_own_session(
            ["mpirun", "--oversubscribe", "-np", "2", HPO, "sweep", "--config", path, "--output",
             output], 240, env=dict(os.environ, **MPI_ENV))
        self.assertEqual(done.returncode, 2, done.describe())
        lines = [line for line in done.output.splitlines() if line.startswith("hpo: ")]
        self.assertEqual(len(lines), 1, done.output)
        self.assertIn("the config asks for GPUs (%s)" % key, lines[0])
        self.assertIn("has no GPU", lines[0])
        self.assertNotIn("terminate called", done.output)
        self.assertFalse(os.path.exists(os.path.join(output, "study.h5")))

    def test_trains_on_the_cpu_after_one_line(self):
        output, log = self.sweep(2, SYNTHETIC, timeout=240)
        notes = [line for line in log.splitlines() if "built with CUDA" in line]
        self.assertEqual(len(notes), 1, log)
        self.assertIn("has no GPU", notes[0])
        self.assertIn("trials train on the CPU", notes[0])
        trials = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual([text(t["status"]) for t in trials], ["completed"] * 2)

    def test_trials_per_gpu_is_refused(self):
        self.refused(SYNTHETIC + "trials_per_gpu: 2\n", "trials_per_gpu")

    def test_cuda_visible_devices_is_refused(self):
        self.refused(command_config(sys.executable, 1, "    lr: {values: [0.1]}\n"),
                     "cuda_visible_devices: true")


if __name__ == "__main__":
    HPO, HPO_WITH_FAULTS, argv = parse_command_line_with_faults()
    unittest.main(argv=argv)
