"""End-to-end tests of `hpo sweep` and `hpo report` under mpirun.

Run by ctest as: python3 test_sweep_cli.py --hpo PATH -k PATTERN. Each test starts real MPI jobs
(oversubscribed, as root where needed) and checks exit codes, printed output and the study file.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import h5py
import numpy as np
import pandas

from hpo_test_support import (MPI_ENV, parse_command_line, published_rows, run_in_own_session,
                               study_attributes)

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "configs")
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "configs")  # the shipped ones
HPO = None  # set from the command line


def mpirun(np_count, args, timeout=300, mpmd_tail=None, cwd=None):
    """Runs `mpirun -np N hpo ARGS [: MPMD...]` (in `cwd` when given); returns (rc, stdout, stderr,
    seconds)."""
    command = ["mpirun", "--oversubscribe", "-np", str(np_count), HPO] + args
    if mpmd_tail:
        command += mpmd_tail
    env = dict(os.environ, **MPI_ENV)
    start = time.monotonic()
    done = run_in_own_session(command, timeout, cwd=cwd, env=env, stderr_apart=True)
    return done.returncode, done.describe(), done.stderr, time.monotonic() - start


def hpo(args):
    done = subprocess.run([HPO] + args, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


class SweepTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def out(self, name="study"):
        return os.path.join(self.tmp, name)


class EndToEnd(SweepTestCase):
    """4 ranks, 2 per trial, 6 random synthetic trials of 2 epochs."""

    def run_sweep(self, output):
        rc, stdout, stderr, _ = mpirun(
            4, ["sweep", "--config", os.path.join(CONFIGS, "synthetic_random.yaml"),
                "--output", output])
        self.assertEqual(rc, 0, stdout + stderr)
        return stdout, os.path.join(output, "study.h5")

    def test_sweep_writes_a_study_with_every_trial_and_curve(self):
        stdout, study = self.run_sweep(self.out())
        trial_lines = [l for l in stdout.splitlines() if l.startswith("trial ")]
        self.assertEqual(len(trial_lines), 6, stdout)  # once per trial, not once per rank
        self.assertEqual(stdout.count("hpo-mpi "), 1, stdout)
        self.assertIn("6/6 done", trial_lines[-1])
        self.assertIn("study: " + os.path.abspath(study), stdout)
        self.assertIn("best trial test accuracy:", stdout)
        trials = self.assert_study_rows(study)
        best = trials[np.argmax(trials["objective"])]
        output = os.path.dirname(study)
        self.assert_only_the_best_model_kept(output, best)
        self.assert_reports(study, output, best)
        self.assert_html_page(study, trials, best)
        self.assert_the_same_sweep_again(trials)

    def assert_study_rows(self, study):
        """The study's trials, curves and attributes; returns the trials."""
        with h5py.File(study, "r") as f:
            trials = f["trials"][:]
            curves = f["curves"][:]
            attrs = dict(f.attrs)
        self.assertEqual(sorted(trials["trial_id"].tolist()), list(range(6)))
        self.assertTrue(all(s == b"completed" for s in trials["status"]))
        self.assertEqual(trials.dtype["lr"], np.float64)
        self.assertEqual(trials.dtype["batch_size"], np.int64)
        self.assertEqual(trials.dtype["width"], np.int64)
        self.assertEqual(trials.dtype["optimizer"].kind, "S")
        self.assertTrue(set(trials["optimizer"].tolist()) <= {b"sgd", b"adam"})
        self.assertTrue(((trials["lr"] >= 0.001) & (trials["lr"] <= 0.1)).all())
        self.assertEqual(set(trials["group"].tolist()), {0, 1})  # both groups trained
        self.assertTrue((trials["epochs"] == 2).all())
        self.assertTrue(((trials["objective"] > 0.0) & (trials["objective"] <= 1.0)).all())
        for trial in trials:
            rows = curves[curves["trial_id"] == trial["trial_id"]]
            self.assertEqual(rows["epoch"].tolist(), [1, 2])
            self.assertAlmostEqual(rows["val_accuracy"][-1], trial["objective"])
            self.assertTrue(np.isfinite(rows["train_loss"]).all())
            self.assertTrue((rows["epoch_time_s"] > 0).all())
        self.assertEqual(attrs["metric_name"], b"val_accuracy" if isinstance(
            attrs["metric_name"], bytes) else "val_accuracy")
        self.assertEqual(int(attrs["world_size"]), 4)
        self.assertIn("test_accuracy", attrs)
        best = trials[np.argmax(trials["objective"])]
        self.assertEqual(int(attrs["best_trial_id"]), int(best["trial_id"]))
        # pandas reads it both ways.
        self.assertEqual(len(pandas.DataFrame(trials)), 6)
        self.assertEqual(len(pandas.read_hdf(study, "trials")), 6)
        return trials

    def assert_only_the_best_model_kept(self, output, best):
        """Only the best trial's weights are kept, with its hyperparameters beside them; no
        checkpoint is left once every result is in the study."""
        models = sorted(os.listdir(os.path.join(output, "models")))
        self.assertEqual(models, ["best.yaml", "trial_%d.pt" % best["trial_id"]])
        with open(os.path.join(output, "models", "best.yaml")) as f:
            best_yaml = f.read()
        self.assertIn("trial_id: %d\n" % best["trial_id"], best_yaml)
        self.assertIn("  optimizer: %s\n" % best["optimizer"].decode(), best_yaml)
        self.assertEqual(os.listdir(os.path.join(output, "checkpoints")), [])

    def assert_reports(self, study, output, best):
        """hpo report as CSV, JSON and a table, of the study file and of its folder."""
        rc, csv_text, err = hpo(["report", study, "--format", "csv", "--top", "0"])
        self.assertEqual(rc, 0, err)
        rows = csv_text.strip().splitlines()
        self.assertEqual(len(rows), 7)
        objective_column = rows[0].split(",").index("objective")
        objectives = [float(r.split(",")[objective_column]) for r in rows[1:]]
        self.assertEqual(objectives, sorted(objectives, reverse=True))
        rc, json_text, err = hpo(["report", study, "--format", "json"])
        self.assertEqual(rc, 0, err)
        report = json.loads(json_text)
        self.assertEqual(report["best_trial_id"], int(best["trial_id"]))
        rc, table, err = hpo(["report", study, "--top", "3"])
        self.assertEqual(rc, 0, err)
        self.assertIn("lr", table)
        rc, table_of_folder, err = hpo(["report", output, "--top", "3"])  # the output folder
        self.assertEqual(rc, 0, err)
        self.assertEqual(table_of_folder, table)
        # --html of the output folder stores the importance in its study, as with the file.
        rc, _, err = hpo(["report", output, "--html", os.path.join(self.tmp, "folder.html")])
        self.assertEqual(rc, 0, err)
        self.assertNotIn("not stored", err)
        with h5py.File(study, "r") as f:
            self.assertIn("param_importance", f.attrs)

    def assert_html_page(self, study, trials, best):
        """The HTML page embeds every trial with its curve of the sweep metric, as in the study;
        a page in a missing folder is a usage error."""
        page_path = os.path.join(self.tmp, "report.html")
        rc, table_too, err = hpo(["report", study, "--html", page_path])
        self.assertEqual(rc, 0, err)
        self.assertTrue(table_too.startswith("Study: val_accuracy"), table_too)
        self.assertIn(page_path, err)
        with open(page_path) as f:
            page = f.read()
        embedded = re.search(r'<script id="hpo-study" type="application/json">(.*?)</script>',
                             page, re.S)
        data = json.loads(embedded.group(1))
        self.assertEqual(data["best_trial_id"], int(best["trial_id"]))
        self.assertEqual(sorted(t["trial_id"] for t in data["trials"]),
                         sorted(int(i) for i in trials["trial_id"]))
        with h5py.File(study, "r") as f:
            curves = f["curves"][:]
        for trial in data["trials"]:
            rows = curves[curves["trial_id"] == trial["trial_id"]]
            self.assertEqual([e for e, _ in trial["curve"]], [int(e) for e in rows["epoch"]])
            self.assertEqual([v for _, v in trial["curve"]],
                             [float(v) for v in rows["val_accuracy"]])
        self.assertEqual([(a["name"], a["scale"]) for a in data["axes"]],
                         [("lr", "log"), ("batch_size", "categorical"),
                          ("optimizer", "categorical"), ("width", "linear")])
        rc, _, err = hpo(["report", study, "--html", os.path.join(self.tmp, "no", "page.html")])
        self.assertEqual(rc, 2)
        self.assertIn("--html", err)
        self.assertIn("page.html", err)


    def assert_the_same_sweep_again(self, trials):
        """Same config and seed: the same trials with the same results."""
        _, again = self.run_sweep(self.out("again"))
        with h5py.File(again, "r") as f:
            repeat = f["trials"][:]
        first = trials[np.argsort(trials["trial_id"])]
        second = repeat[np.argsort(repeat["trial_id"])]
        for column in ("lr", "batch_size", "optimizer", "width"):
            self.assertEqual(first[column].tolist(), second[column].tolist(), column)
        np.testing.assert_allclose(first["objective"], second["objective"], rtol=0, atol=1e-9)


class Grid(SweepTestCase):
    def test_grid_runs_every_combination_once_on_one_rank_groups(self):
        rc, stdout, stderr, _ = mpirun(
            4, ["sweep", "-c", os.path.join(CONFIGS, "synthetic_grid.yaml"), "-o", self.out()])
        self.assertEqual(rc, 0, stdout + stderr)
        with h5py.File(os.path.join(self.out(), "study.h5"), "r") as f:
            trials = f["trials"][:]
        combos = sorted(zip(trials["lr"].tolist(), trials["optimizer"].tolist()))
        self.assertEqual(combos, [(0.01, b"adamw"), (0.01, b"sgd"), (0.05, b"adamw"),
                                  (0.05, b"sgd")])
        self.assertTrue(set(trials["group"].tolist()) <= {0, 1, 2, 3})


class EarlyStopping(SweepTestCase):
    """bayes + hyperband on 4 one-rank groups: ASHA stops trials, recorded as such; with either
    model of method bayes (TPE, the config's default, and the Gaussian process)."""

    def run_bohb(self, model):
        with open(os.path.join(CONFIGS, "synthetic_bohb.yaml")) as f:
            text = f.read()
        config = os.path.join(self.tmp, "bohb.yaml")
        with open(config, "w") as f:
            f.write(text.replace("search:\n", "search:\n  model: %s\n" % model))
        rc, stdout, stderr, _ = mpirun(4, ["sweep", "-c", config, "-o", self.out()])
        self.assertEqual(rc, 0, stdout + stderr)
        study = os.path.join(self.out(), "study.h5")
        with h5py.File(study, "r") as f:
            trials = f["trials"][:]
            curves = f["curves"][:]
            attrs = dict(f.attrs)
        self.assertEqual(len(trials), 12)
        stopped = trials[trials["status"] == b"stopped"]
        self.assertGreater(len(stopped), 0, trials)
        for trial in stopped:
            self.assertLess(trial["epochs"], 4)
            # At a rung, or between rungs once the last rung it passed has filled with better
            # trials; either way the message names the rung.
            self.assertRegex(trial["message"],
                             rb"^stopped at (rung \d+ \(epoch \d+\)|epoch \d+: .* at rung \d+ \(epoch)")
        for trial in trials:
            rows = curves[curves["trial_id"] == trial["trial_id"]]
            self.assertEqual(len(rows), trial["epochs"])
        completed = trials[trials["status"] == b"completed"]
        self.assertTrue((completed["epochs"] == 4).all())
        self.assertGreater(len(attrs["scheduler_fingerprint"]), 0)
        self.assertEqual(stdout.count("(stopped, "), len(stopped), stdout)
        # The study names the chosen model and its parameters (its state is rebuilt from the
        # trials on resume).
        state = bytes.fromhex(attrs["searcher_fingerprint"].decode()
                              if isinstance(attrs["searcher_fingerprint"], bytes)
                              else attrs["searcher_fingerprint"])
        self.assertIn(("hpo-%s-state/v1" % model).encode(), state)
        self.assertIn(("bayes/%s lr:log_uniform_values" % model).encode(), state)

    def test_hyperband_stops_trials_and_the_study_records_them(self):
        self.run_bohb("tpe")

    def test_gp_model_runs_bohb_style_under_mpi(self):
        self.run_bohb("gp")


class BadInput(SweepTestCase):
    def test_bad_config_fails_once_with_file_and_line(self):
        config = os.path.join(self.tmp, "bad.yaml")
        with open(os.path.join(CONFIGS, "synthetic_grid.yaml")) as f:
            text = f.read()
        with open(config, "w") as f:
            f.write(text.replace("epochs: 1", "epochs: 1\nbogus_key: 3"))
        rc, stdout, stderr, seconds = mpirun(4, ["sweep", "--config", config, "-o", self.out()])
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertEqual(stderr.count("bogus_key"), 1, stderr)
        self.assertIn(config + ":", stderr)
        self.assertLess(seconds, 60)
        self.assertFalse(os.path.exists(self.out()))

    def test_world_that_does_not_divide_into_groups_is_an_error(self):
        rc, stdout, stderr, _ = mpirun(
            3, ["sweep", "--config", os.path.join(CONFIGS, "synthetic_random.yaml"),
                "-o", self.out()])
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("do not divide into groups of 2", stderr)
        self.assertIn("start 2 or 4 ranks", stderr)

    def test_bad_command_line_is_exit_2(self):
        rc, stdout, stderr = hpo(["sweep", "--config"])
        self.assertEqual(rc, 2, stdout + stderr)
        rc, stdout, stderr = hpo(["frobnicate"])
        self.assertEqual(rc, 2)
        self.assertIn("unknown command", stderr)
        rc, stdout, stderr = hpo(["report", os.path.join(self.tmp, "missing.h5")])
        self.assertEqual(rc, 2)
        self.assertIn("missing.h5", stderr)

    def test_existing_study_is_not_overwritten(self):
        config = os.path.join(CONFIGS, "synthetic_grid.yaml")
        rc, stdout, stderr, _ = mpirun(2, ["sweep", "-c", config, "-o", self.out()])
        self.assertEqual(rc, 0, stdout + stderr)
        study = os.path.join(self.out(), "study.h5")
        with open(study, "rb") as f:
            before = f.read()
        rc, stdout, stderr, _ = mpirun(2, ["sweep", "-c", config, "-o", self.out()])
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("already exists", stderr)
        with open(study, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_failing_rank_ends_the_job_within_seconds(self):
        config = os.path.join(CONFIGS, "fashion_tiny.yaml")
        missing = os.path.join(self.tmp, "no-such-data")
        args = ["sweep", "--config", config, "-o", self.out()]
        # MPMD: ranks 0, 2, 3 read the real data; rank 1 is pointed at a missing folder.
        rc, stdout, stderr, seconds = mpirun(
            1, args, timeout=120,
            mpmd_tail=[":", "-np", "1", HPO] + args + ["--data", missing] +
            [":", "-np", "2", HPO] + args)
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("error on rank 1", stderr)
        self.assertIn(missing, stderr)
        self.assertLess(seconds, 60)


class FeatureExamples(SweepTestCase):
    """The shipped examples configs/pbt.yaml, objectives.yaml, conditions.yaml and warm_start.yaml,
    run as their header comments tell a user: from the repository root, `mpirun -np 2 hpo sweep
    --config configs/NAME.yaml`. The working directory is a temporary one holding `configs` (a link
    to the repository's), so relative paths resolve as from the root. Each sweep's shipped
    `output:` is replaced by a temporary folder with --output, except where the warm start looks
    for its earlier study: configs/conditions.yaml then runs as shipped, writing runs/conditions
    under that working directory, which configs/warm_start.yaml names. Each test checks what the
    sweep would lack without its feature."""

    def setUp(self):
        super().setUp()
        os.symlink(EXAMPLES, os.path.join(self.tmp, "configs"))

    def sweep(self, name, output=None):
        """Runs configs/NAME.yaml on 2 ranks (--output OUTPUT when given); returns its stdout."""
        args = ["sweep", "--config", os.path.join("configs", name + ".yaml")]
        if output is not None:
            args += ["--output", output]
        rc, stdout, stderr, _ = mpirun(2, args, timeout=120, cwd=self.tmp)
        self.assertEqual(rc, 0, stdout + stderr)
        return stdout

    def report_json(self, output):
        rc, text, err = hpo(["report", output, "--format", "json", "--top", "0"])
        self.assertEqual(rc, 0, err)
        return json.loads(text)

    def trials_and_curves(self, output):
        """{trial_id: last row} of the study in OUTPUT (a paused trial's later rows supersede
        its earlier ones) and {trial_id: [epochs]} of its curves."""
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            trials = {int(row["trial_id"]): row for row in published_rows(f, "trials")}
            curves = {}
            for row in published_rows(f, "curves"):
                curves.setdefault(int(row["trial_id"]), []).append(int(row["epoch"]))
        return trials, curves

    def test_pbt_copies_the_best_members_and_records_the_lineage(self):
        output = self.out()
        stdout = self.sweep("pbt", output)
        self.assertIn(" search, population-based training | 6 trials of 6 epochs", stdout)
        for epoch in (2, 4):
            self.assertRegex(stdout, r"population-based training at epoch %d: trial \d+ replaced "
                             r"by trial \d+ \(from trial \d+:" % epoch)
        trials, curves = self.trials_and_curves(output)
        self.assertEqual(sorted(trials), list(range(6)), stdout)
        self.assertIn("parent_trial", next(iter(trials.values())).dtype.names)
        statuses = sorted(row["status"] for row in trials.values())
        self.assertEqual(statuses, [b"completed"] * 4 + [b"stopped"] * 2, stdout)
        children = {i: row for i, row in trials.items() if row["parent_trial"] >= 0}
        # Trial 4 from the exploit at epoch 2, trial 5 from the one at epoch 4.
        self.assertEqual({i: int(row["parent_epoch"]) for i, row in children.items()},
                         {4: 2, 5: 4}, stdout)
        for trial_id, row in trials.items():
            parent, at = int(row["parent_trial"]), int(row["parent_epoch"])
            first = at + 1 if parent >= 0 else 1
            # A child trains only its own epochs, on from its parent's checkpoint.
            self.assertEqual(curves[trial_id], list(range(first, first + int(row["epochs"]))),
                             (trial_id, stdout))
            if parent >= 0:
                self.assertIn(at, curves[parent], (trial_id, parent))
                replaced = [r for r in trials.values()
                            if ("replaced by trial %d, which continues from trial %d's checkpoint"
                                % (trial_id, parent)).encode() in r["message"]]
                self.assertEqual(len(replaced), 1, (trial_id, stdout))
                self.assertEqual(replaced[0]["status"], b"stopped")
        report = self.report_json(output)
        self.assertEqual({t["trial_id"]: t["parent_trial"] for t in report["trials"]},
                         {i: (int(r["parent_trial"]) if r["parent_trial"] >= 0 else None)
                          for i, r in trials.items()})
        rc, table, err = hpo(["report", output])
        self.assertEqual(rc, 0, err)
        self.assertIn("Lineage (population-based training)", table)
        self.assertIn("trial 4 <- trial %d at epoch 2" % children[4]["parent_trial"], table)

    def test_two_objectives_give_a_pareto_front(self):
        output = self.out()
        stdout = self.sweep("objectives", output)
        # The banner and every progress line name both objectives.
        self.assertIn("| val_loss (minimize), epoch_time_s (minimize) | study", stdout)
        progress = [line for line in stdout.splitlines() if line.startswith("trial ")]
        self.assertTrue(progress and all(", epoch_time_s " in line for line in progress), stdout)
        report = self.report_json(output)
        self.assertEqual(report["objectives"], [{"name": "val_loss", "goal": "minimize"},
                                                {"name": "epoch_time_s", "goal": "minimize"}])
        trials = report["trials"]
        self.assertEqual(len(trials), 12, stdout)
        self.assertTrue(all(t["status"] == "completed" for t in trials), stdout)
        points = {t["trial_id"]: (t["objectives"]["val_loss"], t["objectives"]["epoch_time_s"])
                  for t in trials}
        front = {i for i, p in points.items()
                 if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in points.values())}
        self.assertTrue(front)
        self.assertEqual(set(report["pareto_front"]), front, points)
        self.assertEqual({t["trial_id"] for t in trials if t["pareto_front"]}, front)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            self.assertIn("objective:epoch_time_s", f["trials"].dtype.names)

    def test_conditional_parameters_are_absent_where_their_condition_is_false(self):
        output = self.out()
        stdout = self.sweep("conditions", output)
        conditions = {"momentum": ("optimizer", {"sgd"}), "weight_decay": ("optimizer", {"adamw"}),
                      "dropout": ("width", {128})}
        report = self.report_json(output)
        self.assertEqual(len(report["trials"]), 12, stdout)
        for trial in report["trials"]:
            params = trial["params"]
            for child, (parent, values) in conditions.items():
                self.assertEqual(child in params, params[parent] in values, trial)
        # The seed's random start-up trials take every branch, so each condition is both true and
        # false somewhere.
        self.assertEqual({t["params"]["optimizer"] for t in report["trials"]},
                         {"sgd", "adam", "adamw"})
        self.assertEqual({t["params"]["width"] for t in report["trials"]}, {32, 128})
        trials, _ = self.trials_and_curves(output)  # absent is NaN in the study, never 0
        for row in trials.values():
            self.assertEqual(np.isnan(row["momentum"]), row["optimizer"] != b"sgd", row)
            self.assertEqual(np.isnan(row["weight_decay"]), row["optimizer"] != b"adamw", row)
            self.assertEqual(np.isnan(row["dropout"]), row["width"] != 128, row)
        for line in stdout.splitlines():
            if line.startswith("trial "):
                self.assertEqual("momentum=" in line, "optimizer=sgd " in line, line)

    def test_warm_start_seeds_the_sweep_with_the_conditions_study(self):
        self.sweep("conditions")  # as shipped: runs/conditions, which warm_start.yaml names
        earlier = os.path.join("runs", "conditions", "study.h5")
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, earlier)))
        output = self.out("warm")
        stdout = self.sweep("warm_start", output)
        found = re.search(r"^warm start: (\d+) of (\d+) trials of (\S+);", stdout, re.M)
        self.assertIsNotNone(found, stdout)
        used, rows = int(found.group(1)), int(found.group(2))
        self.assertGreater(used, 0, stdout)
        self.assertEqual((used, rows, found.group(3)), (12, 12, earlier), stdout)
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            recorded = study_attributes(f)["warm_start"]
        self.assertEqual(recorded.decode() if isinstance(recorded, bytes) else str(recorded),
                         earlier + ": 12 trials, 12 used")
        trials, _ = self.trials_and_curves(output)
        self.assertEqual(sorted(trials), list(range(8)), stdout)  # the earlier ones are not its own
        # With 12 earlier trials for 4 start-up ones, TPE proposes trial 0 already: not the
        # start-up draw the same sweep makes cold.
        with open(os.path.join(EXAMPLES, "warm_start.yaml")) as f:
            text = f.read()
        self.assertIn("warm_start: [runs/conditions]", text)
        cold_config = os.path.join(self.tmp, "cold.yaml")
        with open(cold_config, "w") as f:
            f.write(re.sub(r"(?m)^warm_start:.*\n", "", text).replace("run_cap: 8", "run_cap: 1"))
        rc, cold_stdout, stderr, _ = mpirun(1, ["sweep", "--config", cold_config,
                                                "--output", self.out("cold")], timeout=120,
                                            cwd=self.tmp)
        self.assertEqual(rc, 0, cold_stdout + stderr)
        cold, _ = self.trials_and_curves(self.out("cold"))
        self.assertNotEqual(cold[0]["lr"], trials[0]["lr"], (stdout, cold_stdout))


def main():
    global HPO
    HPO, argv = parse_command_line()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    main()
