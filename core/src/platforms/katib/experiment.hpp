// Private to hpo_core: a Katib Experiment (kubeflow.org/v1beta1), as its users write it for
// `kubectl apply`, read as the equivalent hpo config, so that `hpo sweep --config experiment.yaml`
// runs it as it is. docs/config.md ("A Katib Experiment as it is") lists the mapping.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/foreign_spec_reader.hpp"
#include "config/yaml_fields.hpp"
#include "hpo/status.hpp"

namespace hpo {

// Whether `root` is a Katib Experiment: `kind: Experiment` and an apiVersion under kubeflow.org/.
bool IsKatibExperiment(const YAML::Node& root);

// The hpo config (YAML text, a comment naming `path` first) that runs the Experiment `root` with
// its trials as command trials on this job's ranks:
//   objective -> sweep.metric (type -> goal, objectiveMetricName -> name, goal -> target) and
//     additionalMetricNames -> metrics;
//   algorithm -> sweep.method and search (random; grid; sobol -> random with the Sobol sampler;
//     tpe -> bayes, tpe_independent; multivariate-tpe -> bayes, tpe; bayesianoptimization ->
//     bayes, gp), its settings random_state -> seed, n_startup_trials / n_initial_points ->
//     search.startup_trials, n_ei_candidates -> search.candidates;
//   earlyStopping medianstop -> median_stopping (min_trials_required -> min_trials, start_step);
//   maxTrialCount -> run_cap; maxFailedTrialCount -> max_failed_trials;
//   parameters -> sweep.parameters (double: uniform, log_uniform_values with logUniform, q_uniform
//     with a step; int: int_uniform, or the values min, min + step, ... with a step; categorical
//     and discrete: values);
//   trialTemplate: the primary container's command and args (of a batch/v1 Job, or of a
//     PyTorchJob's Master, whose Master and Worker replicas become ranks_per_trial) -> command;
//     its env values -> environment (NAME: value, as written), each ${trialParameters.X} (in the
//     command or an env value) -> ${param:REFERENCE};
//   metricsCollectorSpec: StdOut (Katib's default; its metricsFormat only when it is Katib's
//     default filter) -> nothing, hpo reads the program's output; File -> metrics_file {path,
//     format: TEXT or JSON, filters: metricsFormat as ECMAScript (KatibFilterAsEcmaScript in
//     metrics_file.hpp), TEXT only}, with Katib's defaults /var/log/katib/metrics.log and TEXT
//     (experiment_defaults.go); the path must appear in the command or an env value, where hpo
//     puts each trial's own file in its place.
// Keys that only place the work on a cluster (metadata.namespace, parallelTrialCount, image,
// resources, ...) are listed in notes->ignored ("KEY (line N)"), for one warning, and where the
// config's keys came from in notes->origins (to restate the hpo config's errors). BadInput naming
// the file, line and key for anything hpo cannot honour: another algorithm or early stopping; a
// metrics collector of another kind (TensorFlowEvent, PrometheusMetric, Custom, Push, ...), a
// custom source or metricsFormat with StdOut, a File collector's path that is not absolute or not
// passed to the program, its kind Directory, a filter with JSON, a filter std::regex cannot read;
// a trial template from a ConfigMap, a trial spec without a command or of another kind, a
// trialParameter that refers to no parameter, a normal or logNormal distribution, a malformed
// value.
Status TranslateKatibExperiment(const config_internal::ErrorFormatter& errors,
                                const YAML::Node& root, const std::string& path,
                                std::string* config_text, TranslationNotes* notes);

}  // namespace hpo
