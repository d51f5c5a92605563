"""Programs written for their platform's runtime, run unmodified as command trials under mpirun: a
SageMaker script-mode train.py (SM_* variables, and the training toolkit's own Environment()), a
W&B program (wandb.init(), wandb.config, wandb.log; the real wandb client, offline), and a Katib
trial reporting through the File metrics collector, its Experiment built with Katib's SDK. The
clients come from the pinned environment scripts/install-deps.sh makes (HPO_PLATFORM_VENV,
default /opt/hpo-mpi/platform-clients). Run by ctest as:
python3 test_platform_programs.py --hpo PATH -k SUITE.
"""

import glob
import json
import math
import os
import shutil
import subprocess
import unittest

import h5py
import yaml

import test_command_trials as command_trials
from hpo_test_support import parse_command_line
from test_command_trials import CommandCase, read_study, text

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
VENV = os.environ.get("HPO_PLATFORM_VENV", "/opt/hpo-mpi/platform-clients")
CLIENT_PYTHON = os.path.join(VENV, "bin", "python")


def require_clients(case):
    if not os.access(CLIENT_PYTHON, os.X_OK):
        case.fail("no platform clients at %s: run scripts/install-deps.sh" % VENV)


def tuning_job(instances, channel_uri, program="train.py", environment=None):
    """A script-mode tuning job as the SageMaker Python SDK submits one (values JSON-encoded)."""
    return {
        "HyperParameterTuningJobName": "reviews-tuning",
        "HyperParameterTuningJobConfig": {
            "Strategy": "Random",
            "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "val_loss"},
            "ResourceLimits": {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2},
            "ParameterRanges": {
                "ContinuousParameterRanges": [
                    {"Name": "lr", "MinValue": "0.001", "MaxValue": "0.01",
                     "ScalingType": "Logarithmic"}],
                "CategoricalParameterRanges": [{"Name": "optimizer", "Values": ["sgd", "adam"]}],
            },
            "RandomSeed": 3,
        },
        "TrainingJobDefinition": {
            "StaticHyperParameters": {"epochs": "3", "batch-size": "64",
                                      "sagemaker_program": json.dumps(program)},
            "AlgorithmSpecification": {
                "TrainingImage": "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training",
                "TrainingInputMode": "File",
                "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9\\.]+)"}]},
            "RoleArn": "arn:aws:iam::111122223333:role/SageMakerRole",
            "InputDataConfig": [{"ChannelName": "train", "DataSource": {"S3DataSource": {
                "S3DataType": "S3Prefix", "S3Uri": channel_uri,
                "S3DataDistributionType": "FullyReplicated"}}}],
            "Environment": environment or {},
            "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": instances,
                               "VolumeSizeInGB": 30},
            "StoppingCondition": {"MaxRuntimeInSeconds": 600},
        },
    }


def expected_sagemaker_loss(row, examples, epochs=3, batch_size=64):
    momentum = 0.9 if text(row["optimizer"]) == "adam" else 1.0
    return (float(row["lr"]) * momentum * examples + 1.0 / epochs) * 32.0 / batch_size


class SageMakerProgram(CommandCase):
    def spec_folder(self, program_source, shebang=None):
        folder = os.path.join(self.tmp, "spec")
        os.makedirs(os.path.join(folder, "input", "data", "train"))
        with open(os.path.join(folder, "input", "data", "train", "reviews.csv"), "w") as f:
            f.write("text,label\n" + "".join("review %d,%d\n" % (i, i % 2) for i in range(7)))
        with open(os.path.join(PROGRAMS, program_source)) as f:
            source = f.read()
        if shebang:
            source = "#!%s\n%s" % (shebang, source.split("\n", 1)[1])
        with open(os.path.join(folder, "train.py"), "w") as f:
            f.write(source)
        return folder

    def run_job(self, folder, spec, ranks):
        path = os.path.join(folder, "tuning-job.json")
        with open(path, "w") as f:
            json.dump(spec, f, indent=2)
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(ranks, path, output)
        return output, rc, log

    def test_a_script_mode_train_py_runs_as_it_is_on_two_hosts(self):
        # train.py reads SM_MODEL_DIR, SM_CHANNEL_TRAIN, SM_NUM_GPUS, SM_HOSTS, SM_CURRENT_HOST
        # (a KeyError when absent); the S3 channel's copy lies beside the spec, as in SageMaker's
        # container; an Environment value holds a path.
        folder = self.spec_folder("sagemaker_script_mode.py")
        spec = tuning_job(2, "s3://example-bucket/reviews/train",
                          environment={"DATA_ROOT": "/fsx/reviews data/train", "OPTS": "a=b"})
        output, rc, log = self.run_job(folder, spec, 4)
        self.assertEqual(rc, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 4, log)
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            self.assertEqual([int(r["epoch"]) for r in curves[trial_id]], [1, 2, 3])
            self.assertAlmostEqual(float(row["objective"]), expected_sagemaker_loss(row, 7),
                                   places=5)
            # Every trial keeps its own model, saved by the first host (algo-1) alone.
            model = os.path.join(output, "trials", str(trial_id), "sagemaker", "model")
            with open(os.path.join(model, "model.json")) as f:
                self.assertAlmostEqual(json.load(f)["lr"], float(row["lr"]), places=12)
            self.assertFalse(os.path.exists(os.path.join(
                output, "trials", str(trial_id), "sagemaker-algo-2", "model", "model.json")))
            with open(os.path.join(output, "trials", str(trial_id), "rank-1.log")) as f:
                self.assertIn("training on algo-2 of ['algo-1', 'algo-2']", f.read())
        with h5py.File(os.path.join(output, "study.h5"), "r") as f:
            best = int(f.attrs["best_trial_id"])
            best_model = text(f.attrs["best_model"])
        self.assertEqual(best_model, os.path.join(output, "trials", str(best), "sagemaker",
                                                  "model"))
        with open(os.path.join(output, "models", "best.yaml")) as f:
            self.assertIn("weights: " + best_model, f.read())
        report = subprocess.run([command_trials.HPO, "report", os.path.join(output, "study.h5")],
                                capture_output=True, text=True, timeout=60)
        self.assertIn(best_model, report.stdout)

    def test_the_toolkits_environment_class_reads_the_trials_files(self):
        # The script names the clients' interpreter in its #! line; the tuning job can name no
        # other, so hpo runs the script with it.
        require_clients(self)
        folder = self.spec_folder("sagemaker_environment_class.py", shebang=CLIENT_PYTHON)
        spec = tuning_job(1, "file://" + os.path.join(self.tmp, "spec", "input", "data", "train"))
        output, rc, log = self.run_job(folder, spec, 2)
        self.assertEqual(rc, 0, log)
        trials, _ = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 4, log)
        for row in trials.values():
            self.assertEqual(text(row["status"]), "completed", log)
            self.assertAlmostEqual(float(row["objective"]), expected_sagemaker_loss(row, 7),
                                   places=5)

    def test_an_s3_channel_without_a_local_copy_is_one_line_and_exit_2(self):
        folder = self.spec_folder("sagemaker_script_mode.py")
        shutil.rmtree(os.path.join(folder, "input"))
        output, rc, log = self.run_job(folder, tuning_job(1, "s3://example-bucket/reviews/train"),
                                       2)
        self.assertEqual(rc, 2, log)
        self.assertIn("InputDataConfig[0].ChannelName: channel 'train' is "
                      "s3://example-bucket/reviews/train, which hpo does not download", log)
        self.assertFalse(os.path.exists(os.path.join(output, "study.h5")))


def wandb_config(program, parameters, command=""):
    return ("sweep:\n"
            "  name: wandb quickstart\n"
            "  project: reviews\n"
            "  program: %s\n"
            "%s"
            "  method: grid\n"
            "  metric: {name: val_loss, goal: minimize}\n"
            "  parameters:\n%s"
            "interpreter: %s\n"
            "seed: 5\n") % (program, command, parameters, CLIENT_PYTHON)


class WandbProgram(CommandCase):
    def test_a_quickstart_program_gets_wandb_config_and_its_logs_are_read(self):
        require_clients(self)
        program = os.path.join(PROGRAMS, "wandb_quickstart.py")
        path = self.write("sweep.yaml", wandb_config(
            program, "    lr: {values: [0.01, 0.001, 0.1]}\n    epochs: {value: 4}\n") +
            "metrics: [train_loss]\n")
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 3, log)
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            lr = float(row["lr"])
            steps = curves[trial_id]
            self.assertEqual([int(r["epoch"]) for r in steps], [1, 2, 3, 4], log)
            for epoch, step in enumerate(steps, start=1):
                self.assertAlmostEqual(float(step["train_loss"]),
                                       (math.log10(lr) + 2.0) ** 2 + 1.0 / epoch, places=9)
            self.assertAlmostEqual(float(row["objective"]),
                                   (math.log10(lr) + 2.0) ** 2 + 0.25 + 0.05, places=9)
            # The run is W&B's own, offline, inside the trial's folder.
            logs = glob.glob(os.path.join(output, "trials", str(trial_id), "wandb",
                                          "offline-run-*", "run-trial-%d.wandb" % trial_id))
            self.assertEqual(len(logs), 1, log)

    def test_wandb_init_config_args_takes_the_sweeps_values(self):
        # wandb.init(config=args): the sweep's lr wins over argparse's default 0.1, as under
        # W&B's agent, though the command passes no arguments.
        require_clients(self)
        program = os.path.join(PROGRAMS, "wandb_config_args.py")
        path = self.write("sweep.yaml", wandb_config(
            program, "    lr: {values: [0.01, 0.001]}\n",
            "  command: ['${env}', '${interpreter}', '${program}']\n"))
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials, _ = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 2, log)
        for row in trials.values():
            self.assertEqual(text(row["status"]), "completed", log)
            lr = float(row["lr"])
            self.assertAlmostEqual(float(row["objective"]), (math.log10(lr) + 2.0) ** 2 + 1 / 3,
                                   places=9)


class KatibFileCollector(CommandCase):
    def experiment(self, edits=()):
        """The Experiment as Katib's SDK writes it, its program named by absolute path."""
        require_clients(self)
        path = os.path.join(self.tmp, "experiment.yaml")
        done = subprocess.run([CLIENT_PYTHON, os.path.join(PROGRAMS, "katib_sdk_experiment.py"),
                               path, os.path.join(PROGRAMS, "katib_file_metrics.py")],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(path) as f:
            spec = f.read()
        for old, new in edits:
            self.assertIn(old, spec)
            spec = spec.replace(old, new)
        with open(path, "w") as f:
            f.write(spec)
        return path

    def check_trials(self, output, log):
        trials, curves = read_study(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), 4, log)
        for trial_id, row in trials.items():
            self.assertEqual(text(row["status"]), "completed", log)
            self.assertEqual([int(r["epoch"]) for r in curves[trial_id]], [1, 2, 3], log)
            self.assertTrue(os.path.exists(os.path.join(output, "trials", str(trial_id),
                                                        "metrics.log")))
        return trials

    def test_an_sdk_built_experiment_reports_through_its_metrics_file(self):
        path = self.experiment()
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        trials = self.check_trials(output, log)
        self.assertEqual(len({float(row["objective"]) for row in trials.values()}), 4, log)

    def test_the_json_format(self):
        # JSON lines with a "timestamp" and values as strings, as cloudml-hypertune writes them.
        path = self.experiment()
        with open(path) as f:
            spec = yaml.safe_load(f)
        container = spec["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"][
            "containers"][0]
        container["command"].append("--format=json")
        source = spec["spec"]["metricsCollectorSpec"]["source"]
        source.pop("filter", None)
        source["fileSystemPath"]["format"] = "JSON"
        with open(path, "w") as f:
            yaml.safe_dump(spec, f)
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertEqual(rc, 0, log)
        self.check_trials(output, log)

    def test_a_metrics_file_that_never_appears_fails_the_trial_saying_so(self):
        # The program is told another file than the collector's.
        path = self.experiment([("--log-path=/var/log/katib/metrics.log",
                                 "--log-path=/var/log/katib/metrics.log.elsewhere")])
        output = os.path.join(self.tmp, "out")
        rc, log = self.run_sweep(2, path, output)
        self.assertNotEqual(rc, 0, log)
        self.assertIn("the program exited without writing its metrics file " +
                      os.path.join(output, "trials"), log)


if __name__ == "__main__":
    command_trials.HPO, argv = parse_command_line()
    unittest.main(argv=argv)
