#!/usr/bin/env python3
"""Builds tests/mpi/configs/katib_file_collector.yaml's Experiment with the Katib SDK's own model
classes (PyPI kubeflow-katib, as Katib's SDK examples build one: examples/v1beta1/sdk) and writes
it as YAML to the path given as argv[1], the way the SDK serializes it for the Kubernetes API
(ApiClient().sanitize_for_serialization: camelCase keys, None left out). hpo must read what Katib's
client writes, not only what we write by hand.

Usage: katib_sdk_experiment.py OUT.yaml [PROGRAM]   (PROGRAM: the training program's path,
default katib_file_metrics.py, as in the hand-written Experiment)
"""

import sys

import yaml
from kubeflow.katib import (
    ApiClient,
    V1beta1AlgorithmSetting,
    V1beta1AlgorithmSpec,
    V1beta1CollectorSpec,
    V1beta1Experiment,
    V1beta1ExperimentSpec,
    V1beta1FeasibleSpace,
    V1beta1FileSystemPath,
    V1beta1FilterSpec,
    V1beta1MetricsCollectorSpec,
    V1beta1MetricStrategy,
    V1beta1ObjectiveSpec,
    V1beta1ParameterSpec,
    V1beta1SourceSpec,
    V1beta1TrialParameterSpec,
    V1beta1TrialTemplate,
)
from kubernetes.client import V1ObjectMeta

# Katib's default metricsFormat (pkg/metricscollector/v1beta1/common/const.go, DefaultFilter).
DEFAULT_FILTER = r"([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?)"
METRICS_FILE = "/var/log/katib/metrics.log"


def trial_spec(program):
    """The trial's batch/v1 Job, as the SDK examples give it: a plain dict."""
    container = {
        "name": "training-container",
        "image": "docker.io/library/python:3.11-slim",
        "env": [{"name": "DATA_DIR", "value": "/var/lib/katib/data/mnist"}],
        "command": [
            "python3",
            program,
            "--lr=${trialParameters.learningRate}",
            "--epochs=3",
            "--log-path=" + METRICS_FILE,
        ],
        "resources": {"limits": {"memory": "256Mi", "cpu": "0.5"}},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}},
    }


def experiment(program):
    return V1beta1Experiment(
        api_version="kubeflow.org/v1beta1",
        kind="Experiment",
        metadata=V1ObjectMeta(name="katib-file-collector", namespace="kubeflow"),
        spec=V1beta1ExperimentSpec(
            objective=V1beta1ObjectiveSpec(
                type="minimize",
                objective_metric_name="val_loss",
                metric_strategies=[V1beta1MetricStrategy(name="val_loss", value="latest")],
            ),
            metrics_collector_spec=V1beta1MetricsCollectorSpec(
                collector=V1beta1CollectorSpec(kind="File"),
                source=V1beta1SourceSpec(
                    file_system_path=V1beta1FileSystemPath(path=METRICS_FILE, kind="File",
                                                           format="TEXT"),
                    filter=V1beta1FilterSpec(metrics_format=[DEFAULT_FILTER]),
                ),
            ),
            algorithm=V1beta1AlgorithmSpec(
                algorithm_name="random",
                algorithm_settings=[V1beta1AlgorithmSetting(name="random_state", value="4")],
            ),
            parallel_trial_count=2,
            max_trial_count=4,
            max_failed_trial_count=1,
            parameters=[
                V1beta1ParameterSpec(
                    name="lr",
                    parameter_type="double",
                    feasible_space=V1beta1FeasibleSpace(min="0.001", max="0.1"),
                ),
            ],
            trial_template=V1beta1TrialTemplate(
                primary_container_name="training-container",
                trial_parameters=[
                    V1beta1TrialParameterSpec(
                        name="learningRate",
                        description="Learning rate for the training model",
                        reference="lr",
                    ),
                ],
                trial_spec=trial_spec(program),
            ),
        ),
    )


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    program = sys.argv[2] if len(sys.argv) == 3 else "katib_file_metrics.py"
    document = ApiClient().sanitize_for_serialization(experiment(program))
    with open(sys.argv[1], "w") as out:
        yaml.safe_dump(document, out, sort_keys=False)


if __name__ == "__main__":
    main()
