#!/usr/bin/env python3
"""The installed package, as a user's project sees it: `cmake --install BUILD --prefix TMP/prefix`,
then apps/examples/custom_task configured with -DCMAKE_PREFIX_PATH=TMP/prefix (find_package(hpo),
hpo::hpo) and built, its `spirals` task swept under `mpirun -np 2`, and the study read back: every
trial completed with its val_accuracy and val_macro_f1 curves, the best one tested, and the
program's `report` (table and --html) and `render` knowing the task.

Usage: test_installed_package.py --build BUILD --example DIR --cmake CMAKE --mpirun MPIRUN
           [--c-compiler CC] [--cxx-compiler CXX] [unittest arguments]

Every command runs in a session of its own, ended (with whatever it started) when the test ends;
TMP is removed on the way out, pass or fail. mpirun's environment is ctest's (HPO_MPI_TEST_ENV).
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import h5py
import yaml

ARGS = None  # set from the command line


def end_session(process):
    """Kills what is left of the process session `process` leads (mpirun, its ranks, a compiler)
    whether `process` itself has exited or not, and reaps `process`."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()


class InstalledPackage(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="hpo-install-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def start_command(self, command):
        """Starts `command` in a session of its own, ended by the clean-up (pass or fail)."""
        process = subprocess.Popen([str(word) for word in command], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, cwd=self.tmp,
                                   start_new_session=True)
        self.addCleanup(end_session, process)
        return process

    def finish_command(self, process, timeout):
        """Waits for a started command; returns its output. Fails the test (the session ended by
        the clean-up) unless it exits 0 within `timeout` seconds."""
        output, _ = process.communicate(timeout=timeout)
        self.assertEqual(process.returncode, 0, f"{' '.join(map(str, process.args))}:\n{output}")
        return output

    def run_command(self, command, timeout):
        """Runs `command` in a session of its own to its end; returns its output (as
        finish_command)."""
        return self.finish_command(self.start_command(command), timeout)

    def install(self):
        """Installs the build tree into TMP/prefix and checks the tree; returns the prefix."""
        prefix = self.tmp / "prefix"
        self.run_command([ARGS.cmake, "--install", ARGS.build, "--prefix", prefix], timeout=300)
        package = prefix / "lib" / "cmake" / "hpo"
        for path in ["include/hpo/main.hpp", "include/hpo/model_task.hpp",
                     "include/hpo/mpi/communicator.hpp", "lib/libhpo_core.a", "lib/libhpo_cli.a",
                     "lib/libhpo_model_runtime.a", "bin/hpo", "bin/hpo-torch",
                     "lib/cmake/hpo/hpoConfig.cmake",
                     "lib/cmake/hpo/hpoConfigVersion.cmake", "lib/cmake/hpo/hpoTargets.cmake"]:
            self.assertTrue((prefix / path).exists(), path)
        # The exported targets point into the prefix, never back into the build tree.
        for targets in package.glob("hpoTargets*.cmake"):
            self.assertNotIn(str(pathlib.Path(ARGS.build).resolve()), targets.read_text(),
                             targets)
        version = self.run_command([prefix / "bin" / "hpo", "--version"], timeout=60)
        self.assertTrue(version.startswith("hpo-mpi "), version)
        return prefix

    def build_example(self, prefix):
        """Configures and builds the example against `prefix`; returns the program's path.

        A Release build at -O1 (NDEBUG as the installed libraries have it): its one source file is
        parsed, torch/torch.h and all, in the same time, but optimised in less (about 32 s of CPU
        against 44 s at Release's -O3, measured), as the tests' own code builds below -O3 too
        (HPO_TEST_CODE_OPTIONS). What is checked, the install found and linked and the program
        sweeping, does not depend on the level."""
        build = self.tmp / "build"
        configure = [ARGS.cmake, "-S", ARGS.example, "-B", build,
                     f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release",
                     "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"]
        if ARGS.c_compiler:
            configure.append(f"-DCMAKE_C_COMPILER={ARGS.c_compiler}")
        if ARGS.cxx_compiler:
            configure.append(f"-DCMAKE_CXX_COMPILER={ARGS.cxx_compiler}")
        self.run_command(configure, timeout=300)
        cache = (build / "CMakeCache.txt").read_text()
        found = re.search(r"^hpo_DIR:PATH=(.*)$", cache, re.M)
        self.assertIsNotNone(found, "hpo_DIR is not in the example's cache")
        self.assertEqual(pathlib.Path(found.group(1)).resolve(),
                         (prefix / "lib" / "cmake" / "hpo").resolve())
        self.run_command([ARGS.cmake, "--build", build], timeout=900)
        return build / "custom_hpo"

    def test_a_users_task_builds_against_the_install_and_sweeps(self):
        prefix = self.install()
        program = self.build_example(prefix)
        config = pathlib.Path(ARGS.example) / "spirals.yaml"
        run_cap = yaml.safe_load(config.read_text())["sweep"]["run_cap"]
        epochs = yaml.safe_load(config.read_text())["epochs"]
        out = self.tmp / "out"
        # `render` needs only the program and the config: it runs beside the sweep.
        render = self.start_command([program, "render", "sbatch", "--config", config])
        swept = self.run_command([ARGS.mpirun, "--oversubscribe", "-np", "2", program, "sweep",
                                  "--config", config, "--output", out], timeout=600)
        # Both ranks are groups of the sweep. Which of them trained which trial is not asserted:
        # the trials take milliseconds, and on a loaded machine one group may finish all six
        # before the other asks (dispatch is asynchronous). A rank that failed or hung would fail
        # the run above.
        self.assertIn("2 ranks in 2 groups of 1", swept)

        study = out / "study.h5"
        with h5py.File(study, "r") as f:
            trials = f["trials"][:]
            curves = f["curves"][:]
            attrs = dict(f.attrs)
        self.assertEqual(sorted(trials["trial_id"].tolist()), list(range(run_cap)))
        self.assertEqual(set(trials["status"].tolist()), {b"completed"})
        self.assertTrue(set(trials["activation"].tolist()) <= {b"relu", b"tanh"})
        self.assertTrue(set(trials["layers"].tolist()) <= {1, 2, 3})
        self.assertTrue(set(trials["group"].tolist()) <= {0, 1}, trials["group"])
        for name in ("train_loss", "val_loss", "val_accuracy", "val_macro_f1", "epoch_time_s"):
            self.assertIn(name, curves.dtype.names)
        self.assertEqual(len(curves), run_cap * epochs)
        self.assertTrue(((curves["val_accuracy"] >= 0) & (curves["val_accuracy"] <= 1)).all())
        self.assertTrue(((curves["val_macro_f1"] >= 0) & (curves["val_macro_f1"] <= 1)).all())
        self.assertGreater(max(trials["objective"]), 0.6)  # better than guessing two classes
        self.assertIn("best_trial_id", attrs)
        self.assertTrue(0 <= attrs["test_accuracy"] <= 1, attrs)
        self.assertTrue(os.path.isfile(attrs["best_model"]), attrs["best_model"])

        # The two reports only read the study: both at once.
        page = self.tmp / "study.html"
        table, html = [self.start_command(command) for command in (
            [program, "report", study], [program, "report", study, "--html", page])]
        table = self.finish_command(table, timeout=60)
        self.assertIn("val_accuracy", table)
        self.finish_command(html, timeout=60)
        data = re.search(r'<script id="hpo-study" type="application/json">(.*?)</script>',
                         page.read_text(), re.S)
        axes = {axis["name"]: axis for axis in json.loads(data.group(1))["axes"]}
        # The axes follow the config, which parses only with the program's own task.
        self.assertEqual(axes["lr"]["scale"], "log", axes)
        self.assertEqual((axes["lr"]["min"], axes["lr"]["max"]), (0.001, 0.05), axes)
        script = self.finish_command(render, timeout=60)
        self.assertIn("sweep --config", script)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the hpo-mpi build tree to install")
    parser.add_argument("--example", required=True, help="apps/examples/custom_task")
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--c-compiler")
    parser.add_argument("--cxx-compiler")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
