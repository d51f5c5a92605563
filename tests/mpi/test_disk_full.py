"""I/O errors of `hpo sweep` under mpirun: a disk that fills up during the sweep, and a study file
that cannot be written. Run by ctest as: python3 test_disk_full.py --hpo PATH -k SUITE.

Each test mounts a small tmpfs (root only; skipped where it cannot) and unmounts it however the
test ends. The job must end with exit code 1 and one error line naming the file, leave the study as
last published (it opens, and holds only complete rows) and models/best.yaml whole or absent, and
HDF5 must not complain at exit.
"""

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import h5py
import yaml

from hpo_test_support import MPI_ENV, parse_command_line, published_rows, run_in_own_session

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "configs", "synthetic_random.yaml")
HPO = None  # set from the command line
STATUSES = {b"completed", b"stopped", b"failed", b"running", b"paused"}


@contextlib.contextmanager
def small_tmpfs(size):
    """A tmpfs of `size` (e.g. "8m") on a fresh folder, unmounted and removed afterwards."""
    folder = tempfile.mkdtemp(prefix="hpo-disk-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", folder],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        os.rmdir(folder)
        raise unittest.SkipTest("cannot mount a tmpfs here (root needed): " +
                                mounted.stderr.strip())
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-R", "-l", folder], capture_output=True)
        os.rmdir(folder)


@contextlib.contextmanager
def read_only(path):
    """`path` (a file) made read-only by a read-only bind mount over it, even for root."""
    subprocess.run(["mount", "--bind", path, path], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", path], check=True)
        yield
    finally:
        subprocess.run(["umount", path], check=True)


def sweep_command(output, extra=(), config=CONFIG):
    return (["mpirun", "--oversubscribe", "-np", "2", HPO, "sweep", "--config", config,
             "--output", output] + list(extra))


def published_trials(study):
    """The published /trials rows, or None while the study cannot be read."""
    try:
        with h5py.File(study, "r") as f:
            return published_rows(f, "trials")
    except (OSError, KeyError):
        return None


def fill_up(folder):
    """Writes a file in `folder` until its file system is full."""
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass


class IoErrorChecks(unittest.TestCase):
    def assert_one_error_naming(self, output, reason, folder):
        """Exactly one "hpo: error" line: writing a file under `folder`: `reason` (a regex)."""
        self.assertNotIn("infinite loop closing library", output)
        errors = [line for line in output.splitlines() if line.startswith("hpo: error")]
        self.assertEqual(len(errors), 1, output)
        match = re.search(r"writing (\S+): (" + reason + ")$", errors[0])
        self.assertIsNotNone(match, errors[0])
        self.assertTrue(os.path.realpath(match.group(1)).startswith(os.path.realpath(folder)),
                        errors[0])

    def assert_study_complete(self, study):
        """The study opens, its published rows are all whole, and `hpo report` reads it."""
        rows = published_trials(study)
        self.assertIsNotNone(rows, study + " does not open")
        self.assertGreater(len(rows), 0)
        for row in rows:
            self.assertGreaterEqual(int(row["trial_id"]), 0, row)
            self.assertIn(bytes(row["status"]), STATUSES, row)
        report = subprocess.run([HPO, "report", study], capture_output=True, text=True)
        self.assertEqual(report.returncode, 0, report.stderr)

    def assert_best_file_whole_or_absent(self, output):
        best = os.path.join(output, "models", "best.yaml")
        if os.path.exists(best):
            with open(best) as f:
                content = yaml.safe_load(f)
            self.assertIsInstance(content, dict, best + " is empty")
            self.assertIn("trial_id", content)
            self.assertIn("parameters", content)
        leftovers = [name for name in os.listdir(os.path.join(output, "models"))
                     if name.endswith(".tmp")]
        self.assertEqual(leftovers, [])


class DiskFull(IoErrorChecks):
    # Torch's file writer throws from its destructor when the disk is full (std::terminate, exit
    # 134): weights and checkpoints are serialized to memory and written by hpo instead.
    def setUp(self):
        self.configs = tempfile.mkdtemp(prefix="hpo-disk-configs-")

    def tearDown(self):
        shutil.rmtree(self.configs, ignore_errors=True)

    def longer_config(self):
        """CONFIG with trials of seconds, not a fraction of one: a quiet machine would otherwise
        finish the whole sweep between the first published row and the disk filling up."""
        with open(CONFIG) as f:
            text = f.read()
        longer = os.path.join(self.configs, "longer.yaml")
        with open(longer, "w") as f:
            f.write(text.replace("train_samples: 2048", "train_samples: 16384")
                    .replace("epochs: 2", "epochs: 8"))
        return longer

    def test_disk_full_before_the_sweep_starts(self):
        """No room for the study's first file: exit 1, one line naming the study (No space left
        on device) and no HDF5 noise, no study and no temporary file left."""
        with small_tmpfs("16m") as folder:
            output = os.path.join(folder, "out")
            os.makedirs(output)
            fill_up(folder)
            job = run_in_own_session(sweep_command(output), 300,
                                     env=dict(os.environ, **MPI_ENV))
            self.assertEqual(job.returncode, 1, job.describe())
            self.assert_one_error_naming(job.output, "No space left on device", folder)
            self.assertEqual([name for name in os.listdir(output) if name.startswith("study.h5")
                              and name != "study.h5.lock"], [])

    def test_disk_fills_up_during_the_sweep(self):
        """The disk fills up once the first trial is in the study: exit 1, one line naming the
        file that could not be written (No space left on device), the study as last published."""
        with small_tmpfs("16m") as folder:
            output = os.path.join(folder, "out")
            study = os.path.join(output, "study.h5")
            job = subprocess.Popen(sweep_command(output, config=self.longer_config()),
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                   env=dict(os.environ, **MPI_ENV))
            try:
                deadline = time.monotonic() + 180
                while job.poll() is None and time.monotonic() < deadline:
                    rows = published_trials(study) if os.path.exists(study) else None
                    if rows is not None and len(rows) >= 1:
                        break
                    time.sleep(0.05)
                self.assertIsNone(job.poll(), "the sweep ended before the disk could fill up")
                fill_up(folder)
                output_text, _ = job.communicate(timeout=300)
            finally:
                if job.poll() is None:
                    os.killpg(job.pid, 9)
                    job.communicate()
            self.assertEqual(job.returncode, 1, output_text)
            self.assert_one_error_naming(output_text, "No space left on device", folder)
            os.remove(os.path.join(folder, "filler"))
            self.assert_study_complete(study)
            self.assert_best_file_whole_or_absent(output)


class Unwritable(IoErrorChecks):
    def test_study_that_cannot_be_written(self):
        """--resume, with a larger run_cap, of a study whose file is read-only: exit 1, one line
        naming the study (Read-only file system), and the study unchanged. (A finished study
        resumed as it is needs no write: that exits 0.)"""
        with small_tmpfs("16m") as folder:
            output = os.path.join(folder, "out")
            study = os.path.join(output, "study.h5")
            env = dict(os.environ, **MPI_ENV)
            first = run_in_own_session(sweep_command(output), 300, env=env)
            self.assertEqual(first.returncode, 0, first.describe())
            with open(study, "rb") as f:
                before = f.read()
            with open(CONFIG) as f:
                larger = f.read().replace("run_cap: 6", "run_cap: 8")
            larger_config = os.path.join(folder, "larger.yaml")
            with open(larger_config, "w") as f:
                f.write(larger)
            with read_only(study):
                again = run_in_own_session(
                    sweep_command(output, ["--resume"], config=larger_config), 300, env=env)
            self.assertEqual(again.returncode, 1, again.describe())
            # Written in place (read-only) or replaced by a rename (the bind mount is busy).
            self.assert_one_error_naming(
                again.output, "Read-only file system|Device or resource busy", folder)
            with open(study, "rb") as f:
                self.assertEqual(f.read(), before, "the study changed")
            self.assert_study_complete(study)
            self.assert_best_file_whole_or_absent(output)


if __name__ == "__main__":
    HPO, argv = parse_command_line()
    unittest.main(argv=argv)
