"""The `hpo` users start loads no libtorch (docs/design.md, "Two executables"): command sweeps run
in it, and a sweep of a built-in libtorch task is handed to hpo-torch beside it before MPI starts.
Run by ctest in both builds as: python3 test_torch_free_launcher.py --hpo PATH."""

import os
import shutil
import subprocess
import tempfile
import unittest

import h5py

from hpo_test_support import MPI_ENV, parse_command_line, run_in_own_session

HPO = None  # set from the command line
TORCH_LIBRARY = ("libtorch", "libc10")

# A command trial's program that records what its parent (the hpo rank that started it) runs and
# whether that process has libtorch mapped, then reports a metric.
PARENT_PROBE = """import os, sys
parent = os.getppid()
with open("/proc/%d/maps" % parent) as f:
    torch = sum(1 for line in f if "libtorch" in line or "libc10" in line)
with open(os.environ["PROBE_FILE"] + ".%d" % parent, "w") as f:
    f.write("%s %d\\n" % (os.readlink("/proc/%d/exe" % parent), torch))
print("epoch=1 loss=%s" % sys.argv[-1].split("=")[-1], flush=True)
"""

COMMAND_SWEEP = """program: probe.py
method: grid
metric: {name: loss, goal: minimize}
parameters:
  x: {values: [0.5, 0.25]}
"""

SYNTHETIC_SWEEP = """task: synthetic
epochs: 1
ranks_per_trial: 1
sweep:
  method: grid
  metric: {name: val_loss, goal: minimize}
  parameters:
    lr: {values: [0.01, 0.02]}
"""


class TorchFreeLauncher(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-launcher-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def sweep(self, hpo, config, output, extra=(), env=None):
        argv = ["mpirun", "--oversubscribe", "-np", "2", hpo, "sweep", "--config", config,
                "--output", output] + list(extra)
        return run_in_own_session(argv, 300, cwd=self.tmp,
                                  env=dict(os.environ, **MPI_ENV, **(env or {})))

    def test_hpo_links_no_libtorch_and_hpo_torch_does(self):
        linked = subprocess.run(["ldd", HPO], capture_output=True, text=True, check=True).stdout
        self.assertFalse([line for line in linked.splitlines()
                          if any(name in line for name in TORCH_LIBRARY)], linked)
        torch = os.path.join(os.path.dirname(HPO), "hpo-torch")
        linked = subprocess.run(["ldd", torch], capture_output=True, text=True, check=True).stdout
        self.assertIn("libtorch", linked)

    def test_a_command_sweeps_ranks_run_hpo_without_libtorch(self):
        self.write("probe.py", PARENT_PROBE)
        config = self.write("sweep.yaml", COMMAND_SWEEP)
        probe = os.path.join(self.tmp, "parent")
        done = self.sweep(HPO, config, os.path.join(self.tmp, "out"), ["--ranks-per-trial", "1"],
                          env={"PROBE_FILE": probe})
        self.assertEqual(done.returncode, 0, done.describe())
        seen = [open(os.path.join(self.tmp, name)).read().split()
                for name in os.listdir(self.tmp) if name.startswith("parent.")]
        self.assertTrue(seen, done.describe())
        for executable, torch_mappings in seen:
            self.assertEqual(os.path.realpath(executable), os.path.realpath(HPO))
            self.assertEqual(torch_mappings, "0")

    def test_a_libtorch_task_is_handed_to_hpo_torch(self):
        config = self.write("synthetic.yaml", SYNTHETIC_SWEEP)
        output = os.path.join(self.tmp, "out")
        done = self.sweep(HPO, config, output)
        self.assertEqual(done.returncode, 0, done.describe())
        with h5py.File(os.path.join(output, "study.h5"), "r") as study:
            self.assertEqual(sorted(study["trials"]["status"].tolist()), [b"completed"] * 2)

    def test_without_hpo_torch_a_libtorch_sweep_fails_once_naming_it(self):
        alone = os.path.join(self.tmp, "bin")
        os.mkdir(alone)
        hpo = shutil.copy(HPO, os.path.join(alone, "hpo"))
        done = self.sweep(hpo, self.write("synthetic.yaml", SYNTHETIC_SWEEP),
                          os.path.join(self.tmp, "out"))
        log = done.describe()
        self.assertEqual(done.returncode, 1, log)
        self.assertIn("hpo: error: the task synthetic trains with libtorch, which hpo hands over "
                      "to " + os.path.join(alone, "hpo-torch") + ": it cannot be started", log)
        self.assertEqual(log.count("hpo: error"), 1, log)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out", "study.h5")))


def main():
    global HPO
    HPO, argv = parse_command_line()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
