"""Bad input everywhere: a table of bad configs, command lines, data files, study files and
output folders. Each case must end with its documented exit code and one message naming the file,
key or line, and must leave every file that existed before exactly as it was (and create none).

Run by ctest as: python3 test_bad_input.py --hpo PATH --hpo-with-faults PATH [CLASS...] (the
second, for a bad HPO_INJECT_FAULT, is programs/hpo_with_faults.cpp): mpi_bad_input_configs runs
Configs, mpi_bad_input_table the other classes.
"""

import gzip
import hashlib
import os
import shutil
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

import h5py

from hpo_test_support import MPI_ENV, parse_command_line_with_faults, run_in_own_session

HERE = os.path.dirname(os.path.abspath(__file__))
HPO = None  # set from the command line
HPO_WITH_FAULTS = None  # `hpo` with HPO_INJECT_FAULT's fault injected, from the command line
FASHION = "/usr/share/datasets/fashion-mnist"
# The independent `hpo` runs of a table (check_all) go this many at a time: each is mostly mpirun
# starting and ending the job (about a second, little of it CPU), so a few at once take hardly
# longer than one.
PARALLEL = 4

# A valid one-rank synthetic sweep; cases edit its text.
BASE = """sweep:
  method: random
  metric:
    name: val_accuracy
    goal: maximize
  run_cap: 2
  parameters:
    lr:
      distribution: log_uniform_values
      min: 0.001
      max: 0.1
    batch_size:
      values: [32, 64]
task: synthetic
synthetic:
  train_samples: 256
  val_samples: 64
  test_samples: 64
epochs: 1
ranks_per_trial: 1
seed: 3
"""

FASHION_BASE = BASE.replace("task: synthetic", "task: fashion_mnist").replace(
    "synthetic:\n  train_samples: 256\n  val_samples: 64\n  test_samples: 64\n",
    "train_samples: 512\nvalidation_samples: 128\n")


def edit(old, new, base=BASE):
    text = base.replace(old, new, 1)
    assert text != base, old
    return text


# (name, config text or None for no config file, extra arguments, expected exit code, expected
# message pieces). "{dir}" in arguments and messages is the case's folder.
CONFIG_CASES = [
    ("malformed_yaml", BASE + "oops: [1, 2\n", [], 2, ["config.yaml:", "invalid YAML"]),
    ("tab_indentation", edit("  run_cap: 2\n", "\trun_cap: 2\n"), [], 2, ["config.yaml:", "invalid YAML"]),
    ("two_documents", BASE + "---\nepochs: 2\n", [], 2, ["config.yaml:", "one document"]),
    ("not_a_mapping", "- sweep\n- task\n", [], 2, ["config.yaml:1", "must be a YAML mapping"]),
    ("empty_file", "", [], 2, ["config.yaml:1", "must be a YAML mapping"]),
    ("unknown_top_key", BASE + "epoch: 3\n", [], 2, ["config.yaml:22", "epoch: unknown key"]),
    ("condition_on_unknown_parameter", BASE + "conditions:\n  momentum: {batch_size: [32]}\n", [], 2,
     ["config.yaml:23", "conditions.momentum: not a parameter of sweep.parameters"]),
    ("condition_cycle", BASE + "conditions:\n  batch_size: {batch_size: [32]}\n", [], 2,
     ["config.yaml:23", "conditions.batch_size.batch_size", "cycle"]),
    ("pbt_without_checkpoints",
     edit("epochs: 1", "epochs: 4") + "checkpoint: {interval: 0}\npbt:\n  population: 4\n"
     "  perturbation_interval: 2\n  mutations: [lr]\n", [], 2,
     ["config.yaml:23: pbt: population-based training needs checkpoints (members continue from "
      "them): remove checkpoint.interval: 0"]),
    ("pbt_unknown_mutation",
     edit("epochs: 1", "epochs: 4") + "pbt:\n  population: 4\n  mutations: [lr, momentum]\n", [], 2,
     ["config.yaml:24: pbt.mutations[1]: 'momentum' is not a parameter of the sweep"]),
    ("pbt_mutation_of_the_model_shape",
     edit("epochs: 1", "epochs: 4").replace("    batch_size:\n", "    width:\n      values: [8, 16]\n"
                                            "    batch_size:\n")
     + "pbt:\n  population: 4\n  mutations: [lr, width]\n", [], 2,
     ["config.yaml:26: pbt.mutations[1]: 'width' shapes the model or picks the optimizer"]),
    ("unknown_param_key", edit("      max: 0.1\n", "      max: 0.1\n      mx: 1\n"), [], 2,
     ["config.yaml:12", "sweep.parameters.lr.mx"]),
    ("epochs_wrong_type", edit("epochs: 1", "epochs: three"), [], 2,
     ["config.yaml:19", "epochs", "integer"]),
    ("epochs_zero", edit("epochs: 1", "epochs: 0"), [], 2, ["config.yaml:19", "epochs"]),
    ("min_above_max", edit("      min: 0.001\n", "      min: 0.5\n"), [], 2,
     ["config.yaml:", "sweep.parameters.lr", "min"]),
    ("log_range_not_positive", edit("      min: 0.001\n", "      min: 0\n"), [], 2,
     ["config.yaml:", "sweep.parameters.lr"]),
    ("empty_values", edit("values: [32, 64]", "values: []"), [], 2,
     ["config.yaml:13", "sweep.parameters.batch_size.values"]),
    ("grid_over_range", edit("method: random", "method: grid"), [], 2,
     ["config.yaml:", "sweep.parameters.lr", "grid"]),
    ("unknown_method", edit("method: random", "method: genetic"), [], 2,
     ["config.yaml:2", "sweep.method"]),
    ("metric_not_reported", edit("name: val_accuracy", "name: f1"), [], 2,
     ["config.yaml:4", "sweep.metric.name"]),
    ("goal_misspelt", edit("goal: maximize", "goal: maximise"), [], 2,
     ["config.yaml:5", "sweep.metric.goal"]),
    ("objective_listed_twice",
     edit("  metric:\n    name: val_accuracy\n    goal: maximize\n",
          "  metric:\n    - {name: val_accuracy, goal: maximize}\n"
          "    - {name: val_accuracy, goal: minimize}\n"), [], 2,
     ["config.yaml:5", "sweep.metric[1]", "listed twice"]),
    ("objectives_empty", edit("  metric:\n    name: val_accuracy\n    goal: maximize\n",
                              "  metric: []\n"), [], 2,
     ["config.yaml:3", "sweep.metric", "non-empty list"]),
    ("second_objective_not_reported",
     edit("  metric:\n    name: val_accuracy\n    goal: maximize\n",
          "  metric:\n    - {name: val_accuracy, goal: maximize}\n    - {name: f1}\n"), [], 2,
     ["config.yaml:5", "sweep.metric[1].name", "unknown metric 'f1'"]),
    ("run_cap_missing", edit("  run_cap: 2\n", ""), [], 2, ["config.yaml:", "run_cap"]),
    ("unknown_hyperparameter", edit("    batch_size:\n", "    batchsize:\n"), [], 2,
     ["config.yaml:12", "batchsize"]),
    ("ranks_per_trial_zero", edit("ranks_per_trial: 1", "ranks_per_trial: 0"), [], 2,
     ["config.yaml:20", "ranks_per_trial"]),
    ("grace_period_zero", BASE + "checkpoint: {grace_period_s: 0}\n", [], 2,
     ["config.yaml:22", "checkpoint.grace_period_s"]),
    ("negative_time_budget", BASE + "time_budget_s: -5\n", [], 2,
     ["config.yaml:22", "time_budget_s"]),
    ("missing_config_file", None, [], 2, ["no-such.yaml", "cannot read config"]),
    ("unknown_option", BASE, ["--frobnicate"], 2, ["frobnicate"]),
    ("missing_data_folder", FASHION_BASE, ["--data", "{dir}/no-data"], 2, ["{dir}/no-data"]),
    ("unwritable_output", BASE, ["--output", "{dir}/a-file/study"], 2,
     ["{dir}/a-file/study", "cannot create"]),
]


def snapshot(folder):
    """Every path under `folder` with a hash of its bytes (None for folders)."""
    state = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            state[os.path.relpath(os.path.join(root, name), folder)] = None
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                state[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return state


# A valid command sweep (the user's own program, train.py beside the config); cases edit it.
COMMAND_BASE = """sweep:
  program: train.py
  method: random
  metric: {name: loss, goal: minimize}
  run_cap: 2
  parameters:
    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}
interpreter: /usr/bin/python3
"""

COMMAND_CASES = [
    ("program_missing", edit("program: train.py", "program: nope.py", COMMAND_BASE), [],
     ["config.yaml:2", "sweep.program", "no such file", "{dir}/nope.py"]),
    ("program_not_executable",
     edit("  method:", "  command: ['${program}', '${args}']\n  method:", COMMAND_BASE), [],
     ["config.yaml:3", "sweep.command", "not executable"]),
    ("unknown_macro",
     edit("  method:", "  command: ['${env}', '${interpreter}', '${program}', '${argz}']\n"
          "  method:", COMMAND_BASE), [], ["config.yaml:3", "sweep.command", "unknown macro"]),
    ("regex_without_group", COMMAND_BASE + "metric_definitions:\n  - {name: loss, regex: 'loss'}\n",
     [], ["config.yaml:10", "metric_definitions[0].regex", "capture group"]),
    ("regex_that_does_not_compile",
     COMMAND_BASE + "metric_definitions:\n  - {name: loss, regex: 'loss=([0-9'}\n", [],
     ["config.yaml:10", "metric_definitions[0].regex"]),
    ("definition_never_reported",
     COMMAND_BASE + "metric_definitions:\n  - {name: acc, regex: 'acc=([0-9.]+)'}\n", [],
     ["config.yaml:10", "metric_definitions[0].name", "'acc'"]),
    ("task_and_program", "task: synthetic\n" + COMMAND_BASE, [],
     ["config.yaml:3", "sweep.program", "not both"]),
    ("interpreter_missing", edit("/usr/bin/python3", "no-such-python", COMMAND_BASE), [],
     ["config.yaml:8", "interpreter", "not on the PATH"]),
    ("bare_file_without_budget",
     "program: train.py\nmethod: random\nmetric: {name: loss}\n"
     "parameters:\n  lr: {min: 0.1, max: 1.0}\n", [], ["config.yaml", "--run-cap"]),
    ("bare_flag_on_an_hpo_config", COMMAND_BASE, ["--seed", "3"],
     ["--seed is for a bare W&B sweep file"]),
]


def run_hpo_command(args, np_count=1, env=None, program=None):
    """`mpirun -np NP hpo ARGS` (or `program ARGS`) in a session of its own; (exit code, output)."""
    command = ["mpirun", "--oversubscribe", "-np", str(np_count), program or HPO] + args
    done = run_in_own_session(command, 120, env=dict(os.environ, **MPI_ENV, **(env or {})))
    return done.returncode, done.describe()


class BadInputCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hpo-bad-input-")
        with open(os.path.join(self.dir, "a-file"), "w") as f:
            f.write("a file where a folder is expected\n")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def hpo(self, args, np_count=1, env=None, program=None):
        return run_hpo_command(args, np_count, env, program)

    def run_hpo(self, args, np_count=1, env=None, program=None, folder=None):
        """Runs `hpo ARGS` (or `program ARGS`); returns (exit code, output, snapshots of `folder`
        (default: the case's folder) before and after). Safe to call from several threads."""
        folder = folder or self.dir
        before = snapshot(folder)
        rc, log = self.hpo(args, np_count, env, program)
        return rc, log, before, snapshot(folder)

    def assert_result(self, result, code, pieces, folder=None):
        """Asserts run_hpo's result: the exit code, the message ("{dir}" in `pieces` is `folder`,
        default the case's folder) and that nothing changed."""
        rc, log, before, after = result
        self.assertEqual(rc, code, log)
        for piece in pieces:
            self.assertIn(piece.format(dir=folder or self.dir), log)
        self.assertEqual(log.count("hpo: error"), 1, log)  # one message, not one per rank
        self.assertEqual(after, before, "files changed:\n" + log)

    def check(self, args, code, pieces, np_count=1, env=None, program=None):
        """Runs `hpo ARGS` (or `program ARGS`); asserts the exit code, the message and that nothing
        changed."""
        self.assert_result(self.run_hpo(args, np_count, env, program), code, pieces)

    def case_folder(self, name):
        """A folder of its own under the case's folder, for one row of a check_all table."""
        folder = os.path.join(self.dir, name)
        os.mkdir(folder)
        return folder

    def check_all(self, rows):
        """check() for every row (name, folder, args, code, pieces): the runs go PARALLEL at a
        time, each watching its folder (its own case_folder, or the case's folder where the rows
        only read it), then each row is asserted in a subTest of its name; and nothing under the
        case's folder may have changed."""
        before = snapshot(self.dir)
        with ThreadPoolExecutor(PARALLEL) as pool:
            results = list(pool.map(lambda row: self.run_hpo(row[2], folder=row[1]), rows))
        for (name, folder, _, code, pieces), result in zip(rows, results):
            with self.subTest(name):
                self.assert_result(result, code, pieces, folder)
        self.assertEqual(snapshot(self.dir), before, "files changed in " + self.dir)


class Configs(BadInputCase):
    """The table of bad configs: found before any training, so whatever libtorch is linked."""

    def test_every_case(self):
        for name, text, extra, code, pieces in CONFIG_CASES:
            with self.subTest(name):
                config = os.path.join(self.dir, "config.yaml")
                if text is None:
                    config = os.path.join(self.dir, "no-such.yaml")
                else:
                    with open(config, "w") as f:
                        f.write(text)
                args = ["sweep", "--config", config]
                if "--output" not in extra:
                    args += ["--output", os.path.join(self.dir, "out")]
                self.check(args + [a.format(dir=self.dir) for a in extra], code, pieces)
                if text is not None:
                    os.remove(config)


class DataAndCommandLines(BadInputCase):
    def test_command_sweeps(self):
        rows = []
        for name, text, extra, pieces in COMMAND_CASES:
            folder = self.case_folder(name)
            with open(os.path.join(folder, "train.py"), "w") as f:
                f.write("print('loss=1')\n")
            config = os.path.join(folder, "config.yaml")
            with open(config, "w") as f:
                f.write(text)
            rows.append((name, folder, ["sweep", "--config", config, "--output",
                                        os.path.join(folder, "out")] + extra, 2, pieces))
        self.check_all(rows)

    def test_truncated_and_garbled_data_files(self):
        data = os.path.join(self.dir, "data")
        os.mkdir(data)
        for name in os.listdir(FASHION):
            shutil.copy(os.path.join(FASHION, name), data)
        images = os.path.join(data, "train-images-idx3-ubyte.gz")
        with gzip.open(images) as f:
            raw = f.read()
        with gzip.open(images, "wb", compresslevel=1) as f:  # a valid gzip, quickly
            f.write(raw[:len(raw) // 2])
        config = self.write("fashion.yaml", FASHION_BASE)
        args = ["sweep", "--config", config, "--output", os.path.join(self.dir, "out"),
                "--data", data]
        self.check(args, 2, [images, "truncated"])
        with open(images, "wb") as f:
            f.write(b"this is not gzip nor idx")
        self.check(args, 2, [images])

    def test_world_that_does_not_divide_into_groups(self):
        config = self.write("two.yaml", edit("ranks_per_trial: 1", "ranks_per_trial: 2"))
        self.check(["sweep", "--config", config, "--output", os.path.join(self.dir, "out")], 2,
                   ["ranks_per_trial", "3"], np_count=3)

    def test_bad_fault_injection_variable(self):
        config = self.write("ok.yaml", BASE)
        self.check(["sweep", "--config", config, "--output", os.path.join(self.dir, "out")], 2,
                   ["HPO_INJECT_FAULT=explode", "KIND:TRIAL:EPOCH:RANK"],
                   env={"HPO_INJECT_FAULT": "explode"}, program=HPO_WITH_FAULTS)

    def test_command_lines(self):
        self.check_all([
            ("sweep", self.dir, ["sweep"], 2, ["--config"]),
            ("launch", self.dir, ["launch"], 2, ["launch"]),
            ("report a-file", self.dir, ["report", os.path.join(self.dir, "a-file")], 2,
             ["a-file", "not an HDF5"]),
            ("report missing", self.dir, ["report", os.path.join(self.dir, "missing.h5")], 2,
             ["missing.h5"]),
            # Without its argument, named as the usage names it (not as "--path" or "--study").
            ("status", self.dir, ["status"], 2, ["hpo status needs OUTPUT"]),
            ("report", self.dir, ["report"], 2, ["hpo report needs a STUDY"]),
        ])


class Studies(BadInputCase):
    """Existing studies: refused without --resume, from another sweep, not HDF5, damaged.

    The sweep that makes the study runs once for the class; every test starts from a copy of
    the folder it left (setUp), at the same path: the same files, byte for byte, that a sweep of
    its own would leave there."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.shared = tempfile.mkdtemp(prefix="hpo-bad-input-study-")
        cls.addClassCleanup(shutil.rmtree, cls.shared, ignore_errors=True)
        cls.dir = os.path.join(cls.shared, "case")
        cls.pristine = os.path.join(cls.shared, "pristine")
        os.mkdir(cls.dir)
        with open(os.path.join(cls.dir, "a-file"), "w") as f:
            f.write("a file where a folder is expected\n")
        cls.config = os.path.join(cls.dir, "config.yaml")
        with open(cls.config, "w") as f:
            f.write(BASE)
        cls.output = os.path.join(cls.dir, "out")
        cls.study = os.path.join(cls.output, "study.h5")
        rc, log = run_hpo_command(["sweep", "--config", cls.config, "--output", cls.output])
        if rc != 0:
            raise AssertionError("the sweep that makes the study exited %s:\n%s" % (rc, log))
        shutil.copytree(cls.dir, cls.pristine, symlinks=True)

    def setUp(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(self.pristine, self.dir, symlinks=True)

    def sweep(self, config, *extra):
        return ["sweep", "--config", config, "--output", self.output] + list(extra)

    def test_existing_study_without_resume(self):
        self.check(self.sweep(self.config), 2, [self.study, "already exists", "--resume"])

    def test_resume_with_another_sweep(self):
        other = os.path.join(self.dir, "other.yaml")
        with open(other, "w") as f:
            f.write(edit("      max: 0.1\n", "      max: 0.2\n"))
        self.check(self.sweep(other, "--resume"), 2,
                   [self.study, "begun with another sweep", "sweep.parameters.lr.max"])
        os.remove(other)

    def test_resume_of_a_file_that_is_not_hdf5(self):
        with open(self.study, "wb") as f:
            f.write(b"\x00not an hdf5 study\n")
        self.check(self.sweep(self.config, "--resume"), 2, [self.study])

    def test_resume_of_a_study_with_damaged_state(self):
        with h5py.File(self.study, "a") as f:
            f.attrs["searcher_fingerprint"] = b"zz"
        self.check(self.sweep(self.config, "--resume"), 2,
                   [self.study, "searcher_fingerprint is damaged"])

    def test_warm_start_from_a_study_of_another_metric(self):
        config = self.write("loss.yaml", edit("goal: maximize", "goal: minimize",
                                                   edit("name: val_accuracy", "name: val_loss"))
                                 + "warm_start: [%s]\n" % self.output)
        self.check(["sweep", "--config", config, "--output", os.path.join(self.dir, "warm")], 2,
                   [config + ":22: warm_start: " + self.study + ": its metric is val_accuracy "
                    "(maximize), this sweep's val_loss (minimize)"])

    def test_warm_start_from_a_file_that_is_not_a_study_or_its_own_study(self):
        config = self.write("notes.yaml", BASE + "warm_start: {dir}/a-file\n".format(
            dir=self.dir))
        self.check(["sweep", "--config", config, "--output", os.path.join(self.dir, "warm")], 2,
                   [config + ":22: warm_start: {dir}/a-file: ", "not an HDF5"])
        own = self.write("own.yaml", BASE + "warm_start: %s\n" % self.output)
        self.check(self.sweep(own, "--resume"), 2,
                   ["is this sweep's own study; continue it with --resume instead"])

    def test_resume_after_the_warm_start_study_changed(self):
        warm_config = self.write("warm.yaml", BASE + "warm_start: %s\n" % self.output)
        warm = os.path.join(self.dir, "warm")
        rc, log = self.hpo(["sweep", "--config", warm_config, "--output", warm])
        self.assertEqual(rc, 0, log)
        self.assertIn("warm start: 2 of 2 trials of " + self.study, log)
        more = self.write("more.yaml", edit("run_cap: 2", "run_cap: 3"))
        rc, log = self.hpo(self.sweep(more, "--resume"))
        self.assertEqual(rc, 0, log)
        self.check(["sweep", "--config", warm_config, "--output", warm, "--resume"], 2,
                   [warm, "the warm_start studies changed since this study began (then: " +
                    self.study + ": 2 trials, 2 used; now: " + self.study +
                    ": 3 trials, 3 used)"])

    def test_resume_of_an_hdf5_file_without_study_tables(self):
        with h5py.File(self.study, "w") as f:
            f.create_dataset("something", data=[1, 2, 3])
        self.check(self.sweep(self.config, "--resume"), 2, [self.study, "/trials"])


def main():
    global HPO, HPO_WITH_FAULTS
    HPO, HPO_WITH_FAULTS, argv = parse_command_line_with_faults()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
