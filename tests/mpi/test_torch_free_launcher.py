"""The `hpo` users start loads no libtorch (docs/design.md, "Two executables"): command sweeps run
in it, and a sweep of a built-in libtorch task is handed to hpo-torch beside it before MPI starts;
where OpenBLAS fell back to its generic kernels on an AVX2 CPU, hpo-torch restarts with its AVX2
ones (runtime/blas_kernels.hpp). Run by ctest in both builds as:
python3 test_torch_free_launcher.py --hpo PATH --generic-openblas LIBRARY (LIBRARY:
programs/generic_openblas.cpp, preloaded as OpenBLAS's core query answering "Prescott")."""

import argparse
import os
import shutil
import subprocess
import tempfile
import unittest

import h5py

from hpo_test_support import MPI_ENV, parse_command_line, run_in_own_session

HPO = None  # set from the command line
GENERIC_OPENBLAS = None  # the preloaded stand-in, set from the command line
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


def cpu_has_avx2_and_fma():
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return "avx2" in flags and "fma" in flags


class GenericOpenBlasKernels(unittest.TestCase):
    """hpo-torch asks OpenBLAS which kernels it chose (here the preloaded stand-in, which says
    Prescott, the fallback of Debian 12's OpenBLAS on a CPU newer than it) before MPI starts."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-blas-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.config = os.path.join(self.tmp, "synthetic.yaml")
        with open(self.config, "w") as f:
            f.write(SYNTHETIC_SWEEP)

    def sweep(self, env):
        argv = ["mpirun", "--oversubscribe", "-np", "2", "-x", "LD_PRELOAD", HPO, "sweep",
                "--config", self.config, "--output", os.path.join(self.tmp, "out")]
        done = run_in_own_session(argv, 300, cwd=self.tmp, env=dict(
            os.environ, **MPI_ENV, LD_PRELOAD=GENERIC_OPENBLAS, **env))
        self.assertEqual(done.returncode, 0, done.describe())
        with h5py.File(os.path.join(self.tmp, "out", "study.h5"), "r") as study:
            self.assertEqual(sorted(study["trials"]["status"].tolist()), [b"completed"] * 2)
        return done.describe()

    @unittest.skipUnless(cpu_has_avx2_and_fma(), "this CPU has no AVX2 and FMA")
    def test_a_generic_fallback_restarts_each_rank_once_with_the_avx2_kernels(self):
        log = self.sweep({})
        self.assertEqual(log.count("asked with OPENBLAS_CORETYPE=(unset)"), 2, log)
        self.assertEqual(log.count("asked with OPENBLAS_CORETYPE=Haswell"), 2, log)
        self.assertEqual(log.count("hpo: OpenBLAS does not know this CPU and chose its generic "
                                   "Prescott kernels; training runs with OPENBLAS_CORETYPE="
                                   "Haswell"), 1, log)

    def test_the_users_own_core_type_is_kept(self):
        log = self.sweep({"OPENBLAS_CORETYPE": "Zen"})
        self.assertEqual(log.count("asked with OPENBLAS_CORETYPE=Zen"), 2, log)
        self.assertNotIn("OPENBLAS_CORETYPE=Haswell", log)
        self.assertNotIn("does not know this CPU", log)


def main():
    global HPO, GENERIC_OPENBLAS
    HPO, argv = parse_command_line()
    parser = argparse.ArgumentParser()
    parser.add_argument("--generic-openblas", required=True)
    args, argv = parser.parse_known_args(argv)
    GENERIC_OPENBLAS = os.path.abspath(args.generic_openblas)
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
