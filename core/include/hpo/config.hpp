// The sweep configuration: one YAML file whose `sweep:` section is a Weights & Biases sweep
// configuration, verbatim, beside the execution keys W&B has no word for (task, epochs,
// ranks_per_trial, seed, output, ...). Parsed and validated on rank 0 only; other ranks receive the
// text and parse it again (parsing is deterministic), so every rank holds an identical SweepConfig.
// Plain value types; thread-safe as values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hpo/param.hpp"
#include "hpo/reduced_float.hpp"
#include "hpo/status.hpp"

namespace hpo {

// The W&B parameter distributions (https://docs.wandb.ai/guides/sweeps/sweep-config-keys).
// When `distribution` is absent W&B infers it: `value` -> constant, `values` -> categorical,
// integer min/max -> int_uniform, otherwise uniform.
enum class Distribution {
  kConstant,
  kCategorical,
  kCategoricalWithProbabilities,
  kIntUniform,
  kUniform,
  kQUniform,
  kLogUniform,        // min/max are natural-log exponents: exp(uniform(min, max))
  kLogUniformValues,  // min/max are values: log-uniform between them
  kQLogUniform,
  kQLogUniformValues,
  kInvLogUniform,  // 1 / exp(uniform(min, max))
  kInvLogUniformValues,
  kNormal,
  kQNormal,
  kLogNormal,
  kQLogNormal,
  kBeta,
  kQBeta,
};

// The W&B spelling ("int_uniform", "log_uniform_values", ...).
const char* DistributionName(Distribution distribution);

// Whether values are drawn on a log scale: log_uniform*, q_log_uniform*, inv_log_uniform*,
// log_normal and q_log_normal.
bool IsLogScale(Distribution distribution);

// Key `conditions:` beside `sweep:` (hpo's own: W&B has nested parameters but no conditions).
// A parameter with a condition exists in a trial only when its `parent` (a categorical parameter
// of the sweep) exists there and holds one of `values`; conditions chain into a tree (no cycles).
// An absent parameter is left out of the trial's assignment, its program's arguments and its
// study row (docs/config.md, "Conditional parameters").
struct ParameterCondition {
  std::string parent;
  std::vector<ParamValue> values;  // a subset of the parent's values, of the parent's type
  int line = 0;                    // 1-based line of the condition's key in the config file
};

// One swept hyperparameter. Which fields are meaningful depends on `distribution`.
struct ParameterSpec {
  std::string name;
  Distribution distribution = Distribution::kConstant;
  ParamType type = ParamType::kFloat;  // the type every sampled value has
  std::vector<ParamValue> values;      // constant: one value; categorical: the choices
  std::vector<double> probabilities;   // categorical_w_probabilities: one per value
  double min = 0.0;
  double max = 0.0;
  double q = 1.0;
  double mu = 0.0;
  double sigma = 1.0;
  double a = 1.0;  // beta
  double b = 1.0;  // beta
  // The values are YAML booleans, held as the strings "true" and "false" (type kString); a
  // command trial's program receives them as Python's True and False, as from W&B's agent.
  bool boolean = false;
  int line = 0;  // 1-based line of the parameter's key in the config file
  std::optional<ParameterCondition> condition;  // from `conditions:`; none: always present
};

enum class SearchMethod { kGrid, kRandom, kBayes };
enum class Goal { kMinimize, kMaximize };

const char* SearchMethodName(SearchMethod method);
const char* GoalName(Goal goal);

struct MetricSpec {
  std::string name;  // one of the task's metrics (TaskMetricNames)
  Goal goal = Goal::kMinimize;
  // W&B `target`: the sweep stops dispatching new trials once a trial's objective reaches it.
  std::optional<double> target;
};

// W&B `early_terminate: {type: hyperband, ...}`, run as asynchronous successive halving (ASHA).
// Rungs (in epochs): with min_iter, min_iter * eta^k for k = 0, 1, ... below the sweep's epochs;
// with max_iter and s, max_iter / eta^k for k = s, s-1, ..., 1 (W&B's definition). At each rung a
// trial continues only if it is in the top 1/eta of the trials that reached that rung.
struct HyperbandSpec {
  bool enabled = false;
  std::optional<int64_t> min_iter;
  std::optional<int64_t> max_iter;
  std::optional<int64_t> s;
  int64_t eta = 3;
  // W&B's `strict` (default true): at a rung a trial is judged by its value at that epoch; false
  // judges its best value so far there (W&B's conservative condition: a noisy dip on the rung's
  // epoch does not stop a trial that was doing well).
  bool strict = true;
  // hpo's `asha: {promotion: true}` beside `sweep:` (default false): ASHA's promotion variant (Li
  // et al., MLSys 2020) instead of the stopping one. A trial that reaches a rung outside the top
  // 1/eta of that rung so far pauses (keeps its checkpoint, frees its group) and resumes from its
  // checkpoint once it is in the top 1/eta of the rung, so no trial passes a rung on the evidence
  // of the few that came before it.
  bool promotion = false;
};

// The `sweep:` section.
struct SweepSpec {
  SearchMethod method = SearchMethod::kRandom;
  // The primary objective: `metric` as a mapping, or the first entry of `metric` as a list.
  // Early stopping, `target`, the best trial (test-set evaluation, kept weights) and every
  // single-objective part of hpo use this one.
  MetricSpec metric;
  // Every objective, primary first: `metric` as a list of {name, goal} (distinct metrics the
  // task reports; only the first may have a `target`), or just `metric` when it is a mapping.
  // With more than one, the study records each trial's value of every one, `method: bayes`
  // searches for their Pareto front (ParEGO, see searchers.hpp) and the report lists the front.
  std::vector<MetricSpec> objectives;
  std::vector<ParameterSpec> parameters;  // in file order
  std::optional<int64_t> run_cap;         // required for random and bayes search
  HyperbandSpec early_terminate;
  std::string name;
  std::string description;
  std::string project;  // W&B's project and entity: what a command trial's wandb.init() gets
  std::string entity;
};

// `epochs` of a command sweep that gives none: the program decides how many steps it reports.
inline constexpr int64_t kUnboundedEpochs = int64_t{1} << 40;

// The execution keys beside `sweep:` that every task has. A task's own keys (`data`, `model`,
// `text:`, ...) are its options (TaskOptions below).
struct ExecutionSpec {
  // The task's name in the TaskCatalog (`task:`; "command" for a sweep with `program` or
  // `command` and no `task:`).
  std::string task;
  // Epochs per trial; for command sweeps optional (kUnboundedEpochs), the most steps a trial
  // reports, which bounds early stopping's rungs.
  int64_t epochs = 1;
  int64_t ranks_per_trial = 1;
  int64_t threads_per_rank = 1;  // torch intra-op threads per rank
  // One-rank trial groups sharing one GPU (>= 1; > 1 requires ranks_per_trial == 1). Each trial's
  // CUDA caching allocator is capped to 1/trials_per_gpu of the GPU. The CPU build trains on the
  // CPU whatever it says.
  int64_t trials_per_gpu = 1;
  // Whether the config names trials_per_gpu: its trials are meant for GPUs, so a CUDA build on
  // nodes without one refuses the sweep (BadInput) instead of training on the CPU.
  bool gpus_requested = false;
  uint64_t seed = 0;
  std::string output = "runs/study";  // folder holding study.h5 and per-trial artifacts
  // A rank that rank 0 has not heard from for this many seconds is lost (its host is down or cut
  // off), and so is rank 0 for a rank that has not heard from it: the job then ends with
  // ExitCode::kPeerLost, the study saved (`peer_timeout_s`, > 0).
  double peer_timeout_s = 60.0;
};

// Key `search:` beside `sweep:`: how the searchers work (W&B has no keys for this).
// kTpe: multivariate TPE (the default); kTpeIndependent: Optuna's default, one-parameter-at-a-time
// TPE; kGp: a Gaussian process with expected improvement; kCurves: the GP fitted on each
// trial's final value predicted from its learning curve, with early_terminate a scheduler that
// continues or pauses trials by the same predictions. Method random takes kCurves alone (with
// early_terminate): its draws stay random and the curve scheduler judges the trials.
// kCurvesTpe: the same predictions and scheduler with TPE's draws (12 candidates from the prior,
// scored by l(x) / g(x)); what `method: bayes` with early_terminate means when no search.model
// is given (ApplyDefaultSearch).
enum class BayesModel { kTpe, kGp, kTpeIndependent, kCurves, kCurvesTpe };
constexpr BayesModel kBayesModels[] = {BayesModel::kTpe, BayesModel::kTpeIndependent,
                                       BayesModel::kGp, BayesModel::kCurves,
                                       BayesModel::kCurvesTpe};
// The config's spelling (`search.model`): tpe, gp, tpe_independent, curves.
const char* BayesModelName(BayesModel model);
// Whether `model` predicts each trial's final value from its learning curve (and so, with
// early_terminate, brings the curve scheduler): curves and curves_tpe.
inline bool PredictsCurves(BayesModel model) {
  return model == BayesModel::kCurves || model == BayesModel::kCurvesTpe;
}
enum class RandomSampler { kIndependent, kSobol };

struct SearchOptions {
  BayesModel model = BayesModel::kTpe;  // method bayes (random: curves only): see BayesModel
  int64_t startup_trials = 10;  // trials before the model is used (bayes; random with curves)
  int64_t candidates = 24;  // method bayes, TPE: per suggestion (tpe), per parameter (independent)
  RandomSampler sampler = RandomSampler::kIndependent;  // random, bayes start-up: or Sobol
  bool model_given = false;       // the config set `model` (else ApplyDefaultSearch may choose)
  bool sampler_given = false;     // the config set `sampler` (else ApplyDefaultSearch may choose)
  bool candidates_given = false;  // the config set `candidates` (else TPE's default for its data)
};

// Key `median_stopping:` beside `sweep:` (Katib's medianstop): after epoch `start_step`, a trial
// stops when its best objective so far is worse than the median of the other trials' running
// averages at the same epoch, once at least `min_trials` other trials reported that epoch.
struct MedianStoppingSpec {
  bool enabled = false;
  int64_t min_trials = 5;
  int64_t start_step = 1;
};

// Keys `time_budget_s`, `max_failed_trials` and `trial_retries` beside `sweep:`.
struct BudgetSpec {
  std::optional<double> time_budget_s;       // no new trial starts after this many seconds
  std::optional<int64_t> max_failed_trials;  // more failed trials than this end the sweep
  // A failed trial runs again (same id and hyperparameters, a new seed) up to this many times
  // before it is recorded as failed.
  int64_t trial_retries = 0;
};

// Key `checkpoint:` beside `sweep:`. Trials checkpoint model, optimizer and data order to
// OUTPUT/checkpoints every `interval` epochs (0: never; a trial that was running when a sweep
// stopped then starts over on resume) and always at the step where a preemption signal arrives.
// After SIGTERM or SIGUSR1 the job exits within `grace_period_s` seconds.
struct CheckpointSpec {
  int64_t interval = 1;
  double grace_period_s = 60.0;
};

// Key `ddp:` beside `sweep:`: how a trial group reduces gradients (PyTorch DDP's defaults). Buckets
// of at most `bucket_mb` MiB (the first one reduced, the last layers', at most `first_bucket_mb`),
// allreduced during backward with `overlap`, after it otherwise. Sizes and overlap change the
// update at most in the summation order of floats and compression by rounding the summed gradients
// to 16 bits, so all of them may change when a study resumes.
struct DdpSpec {
  double bucket_mb = 25.0;
  double first_bucket_mb = 1.0;
  bool overlap = true;
  // `compression: none | bf16 | fp16`: the 16-bit format gradients travel in (none: float32).
  std::optional<ReducedFloat> compression;
};

// One SageMaker-style metric definition: every match of `regex` in the program's output reports
// metric `name` with the value of the first capture group.
struct MetricRegex {
  std::string name;
  std::string regex;
  int line = 0;  // 1-based line of the entry in the config file
};

// Key `metrics_file:` beside `sweep:` (Katib's File metrics collector): the program writes its
// metrics to a file, read as it grows; its output is then not read for metrics. Each trial gets
// its own file, OUTPUT/trials/ID/<file name of path>: `path` where it occurs in the command's
// arguments or in an `environment:` value is replaced by it.
struct MetricsFileSpec {
  std::string path;   // absolute, as the Experiment gives it
  bool json = false;  // format JSON (one object per line) or TEXT (name=value, through filters)
  // TEXT only: Katib's metricsFormat regexes, each with two groups (name, value); none: Katib's
  // default.
  std::vector<std::string> filters;
};

// Key `sagemaker:` beside `sweep:` (a SageMaker tuning job's training jobs): each rank's program
// runs in SageMaker script mode's training environment (SM_* variables, the files under
// SAGEMAKER_BASE_DIR) with one folder of its own per trial (platforms/sagemaker/).
struct SageMakerSpec {
  std::string job_name;  // the tuning job's name; its training jobs are JOB-NNN (the trial id)
  // InputDataConfig's channels: name -> local folder (absolute), in the spec's order.
  std::vector<std::pair<std::string, std::string>> channels;
};

// Command trials (docs/design.md, "Tasks"): W&B's `program` and `command` inside `sweep:`, the keys
// beside it that say how to run and read the program.
struct CommandSpec {
  // `program`, resolved against the config file's folder (absolute); empty without one.
  std::string program;
  std::string program_as_written;  // `program` as the file gives it
  // `command`: W&B's template with its macros; W&B's default [${env}, ${interpreter},
  // ${program}, ${args}] when absent.
  std::vector<std::string> command;
  // What ${interpreter} becomes: `interpreter:` beside `sweep:`; by default "python" as in W&B,
  // or "python3" where no `python` is on the PATH (Debian).
  std::string interpreter;
  std::vector<std::string> metrics;             // `metrics:`: more metrics recorded per step
  std::vector<MetricRegex> metric_definitions;  // `metric_definitions:`
  std::optional<double> trial_timeout_s;        // a trial running longer fails
  // After SIGTERM (early stopping, a failure elsewhere in the group) the program has this long
  // to exit before SIGKILL (W&B's agent waits 30 s).
  double terminate_grace_s = 30.0;
  // `cuda_visible_devices: true`: each rank's program sees only its GPU (by node-local rank, as
  // the built-in tasks choose it); otherwise all GPUs, and LOCAL_RANK picks one.
  bool cuda_visible_devices = false;
  // `environment:` beside `sweep:` (a SageMaker job's Environment, a Katib trial's env): NAME,
  // value pairs set in every rank's program after hpo's own, values as written (any characters).
  std::vector<std::pair<std::string, std::string>> environment;
  std::optional<MetricsFileSpec> metrics_file;  // `metrics_file:`
  std::optional<SageMakerSpec> sagemaker;       // `sagemaker:`
};

// The keys a task owns beside `sweep:` (TaskDescription::option_keys), as written: each scalar
// under its dotted path ("model", "text.train"), with its line for messages. Read by the task
// (its description's CheckOptions at parse time, its runner on every rank) with the typed getters
// below, which name the file, line and key in every error.
struct TaskOption {
  std::string value;
  int line = 0;
};

struct TaskOptions {
  std::string file;  // the config file
  std::map<std::string, TaskOption> values;

  const TaskOption* Find(const std::string& key) const;
  // The option's value, or `fallback` when it is absent.
  std::string Get(const std::string& key, const std::string& fallback) const;
  // BadInput "FILE:LINE: KEY: message" (the key's line; FILE: KEY: when the key is absent).
  Status Error(const std::string& key, const std::string& message) const;
  // The option as an integer in [minimum, maximum], `fallback` when it is absent; BadInput
  // naming the key otherwise.
  Status GetInteger(const std::string& key, int64_t minimum, int64_t maximum, int64_t fallback,
                    int64_t* value) const;
  // The option as a finite number >= minimum, `fallback` when it is absent; BadInput otherwise.
  Status GetNumber(const std::string& key, double minimum, double fallback, double* value) const;
  // BadInput unless `section` is absent or a mapping whose keys are all in `accepted`.
  Status CheckSection(const std::string& section, const std::vector<std::string>& accepted) const;
};

// Key `warm_start:` beside `sweep:` (a path or a list of them): earlier studies whose trials seed
// this sweep's searcher and, where their epochs are this sweep's, its early stopping, as
// SageMaker's warm start does (coord/warm_start.hpp says which trials count and how).
struct WarmStartStudy {
  // As written, relative to the working directory as `output` is; a folder means its study.h5.
  std::string path;
  int line = 0;  // 1-based line of the entry in the config file
};

// Key `pbt:` beside `sweep:` (hpo's own): population-based training (Jaderberg et al. 2017, as
// Ray Tune's PopulationBasedTraining). The sweep's searcher draws the first `population` trials;
// every `perturbation_interval` epochs each member pauses at a checkpoint, and once every member
// has reached that epoch the bottom `quantile` of them (by the sweep metric) is replaced: each
// stops, and a new trial starts from a top member's checkpoint at that epoch with the top
// member's hyperparameters, those named in `mutations` perturbed (numbers x0.8 or x1.2, clamped
// into their range; with probability `resample_probability`, and always for categoricals, drawn
// again from the parameter's distribution). Needs checkpoints (checkpoint.interval > 0) and one
// objective; excludes early_terminate and median_stopping.
struct PbtSpec {
  bool enabled = false;
  int64_t population = 0;              // >= 2
  int64_t perturbation_interval = 1;   // >= 1, below epochs
  double quantile = 0.25;              // in (0, 0.5]
  std::vector<std::string> mutations;  // parameters of the sweep, not constants; at least one
  double resample_probability = 0.25;  // in [0, 1]
  int line = 0;                        // 1-based line of the `pbt:` key
  // `strict: true`: a command trial whose program starts over instead of from its checkpoint
  // (its first step is 1, not the checkpoint's epoch + 1) fails; otherwise one warning per
  // sweep, and the trial's message says `restarted`.
  bool strict = false;
};

struct SweepConfig {
  std::string path;  // as given; used in messages
  std::string text;  // the file's exact text, stored in the study file
  SweepSpec sweep;
  ExecutionSpec execution;
  SearchOptions search;
  MedianStoppingSpec median_stopping;
  BudgetSpec budget;
  CheckpointSpec checkpoint;
  DdpSpec ddp;
  std::vector<WarmStartStudy> warm_start;
  PbtSpec pbt;
  CommandSpec command;       // command sweeps only
  TaskOptions task_options;  // the task's own keys (TaskDescription::option_keys)
  // The metrics of one epoch (step), in EpochMetrics::values order: what the task reports
  // (TaskDescription::MetricNames), resolved when the config is parsed.
  std::vector<std::string> metric_names;
  // What the file held that hpo does not use, one "KEY (line N): why" each (a Katib Experiment's
  // cluster settings); rank 0 prints them as one warning before the sweep starts.
  std::vector<std::string> ignored_keys;
};

// How the sweep searches and stops trials, in words: "bayes search (curves), curve scheduler",
// "random search, ASHA stopping", "grid search, median stopping", "..., population-based
// training". The sweep banner and the comparison page's method column say it.
std::string DescribeSearchAndStopping(const SweepConfig& config);

// Execution keys given on the command line for a bare W&B sweep file (a file whose top level is
// a W&B sweep configuration, no `sweep:` around it): `hpo sweep --run-cap N --ranks-per-trial R
// --seed S`. A wrapped config must set them in the file instead.
struct BareSweepSettings {
  std::optional<int64_t> run_cap;
  std::optional<int64_t> ranks_per_trial;
  std::optional<int64_t> seed;
  bool any() const { return run_cap || ranks_per_trial || seed; }
};

class TaskCatalog;

// Parses and validates a config. Every error names the file, the key (dotted path, e.g.
// "sweep.parameters.lr.min") and its line: "FILE:LINE: KEY: what is wrong". Returns BadInput on any
// problem: malformed YAML, unknown keys, wrong types, min > max, log ranges with min <= 0, grid
// search over a continuous range, a hyperparameter the task does not know or whose range it cannot
// take, a metric the task does not report, a condition on or naming a parameter the sweep does not
// have, a parent that is not categorical or a value it does not take, a cycle of conditions.
// Tasks come from BuiltinTaskCatalog().
Status ParseConfig(const std::string& text, const std::string& path, SweepConfig* config);

// As above with the tasks of `catalog`, and `bare` for a bare W&B sweep file. A bare file is
// parsed with its own lines in messages; on success config->text is the equivalent wrapped config
// (the file's text under `sweep:` beside the settings), which every rank and a resumed study parse
// as they parse any config.
Status ParseConfig(const std::string& text, const std::string& path, const TaskCatalog& catalog,
                   const BareSweepSettings& bare, SweepConfig* config);

// What `method: bayes` means when the config leaves search.model or search.sampler out (ParseConfig
// calls it; bench/asha_replay.cpp and bench/search_quality.cpp too); every other method is left
// as it is.
// * With `sweep.early_terminate` and no model: search.model becomes curves_tpe, the curve
//   scheduler with TPE's draws, where the curve model can run: a single objective, `epochs` known
//   (not a command sweep without them), and neither `median_stopping` nor `asha:` (ASHA's
//   promotion variant, asked for by name) beside it. Why: on the recorded Fashion-MNIST curves
//   (bench/RESULTS.md) multivariate TPE with ASHA fitted its draws on the first rung's reports,
//   where settings that start fast and plateau lead, and drew them again and again; ASHA then
//   stopped the slow starters that reach the best values.
// * Without early stopping (no early_terminate, no median_stopping), model tpe and a single
//   objective, with no sampler: search.sampler becomes sobol, a start-up that covers the space.
//   Why: better median best in 10 of 12 cells of the peers' search-quality problems against
//   random start-up trials (bench/RESULTS.md); with early stopping it made TPE lock onto a plateau
//   that leads early, so there it stays random.
// `has_asha` / `has_median_stopping`: the config has those keys.
void ApplyDefaultSearch(bool has_asha, bool has_median_stopping, SweepConfig* config);

// The config a study stores (always wrapped), for reading the study: the search space, method,
// metric, early stopping and execution settings, with no check against this machine's files (a
// command sweep's `program` is not looked up and config->command stays empty), so that a study
// reads the same from any folder or host. BadInput when the text does not parse.
Status ParseStoredConfig(const std::string& text, const TaskCatalog& catalog, SweepConfig* config);

// Whether `config` may continue a study begun with the config text `study_config_text`: the same
// sweep (search space, method, metric, early stopping, search options, task, epochs, seed, the
// task's options but `data`) with possibly different run_cap, budgets, trial_retries, checkpoint,
// output, data, ranks_per_trial, threads_per_rank, trials_per_gpu and ddp. BadInput naming the
// first key that differs otherwise.
Status CheckSameSweep(const std::string& study_config_text, const SweepConfig& config);

// Reads `path` and parses it; a missing or unreadable file is BadInput naming the path.
Status LoadConfigFile(const std::string& path, SweepConfig* config);
Status LoadConfigFile(const std::string& path, const TaskCatalog& catalog,
                      const BareSweepSettings& bare, SweepConfig* config);

}  // namespace hpo
