// The torch-free half of the task seam (docs/design.md, "Tasks"): what a kind of task takes and
// reports, so rank 0 validates a config against it before anything trains. Every kind of task
// (the built-in libtorch tasks, command trials, a user's own) is one TaskDescription in a
// TaskCatalog; the parser, coordinator, study and report never learn which kind ran. The other
// half, the per-rank runner, is hpo/task_runner.hpp.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"

namespace hpo {

// One hyperparameter a task reads from a trial's Assignment.
struct HyperparameterInfo {
  std::string name;
  ParamType type;  // kInt parameters also accept integral-valued ints only; kFloat accepts ints too
  ParamValue default_value;
  double min = -std::numeric_limits<double>::infinity();  // valid numeric range, inclusive
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;
  std::vector<std::string> choices;  // for kString: the accepted values
  std::string help;
  // True when a checkpoint taken under one value does not load under another (the value shapes
  // the model or picks the optimizer's kind): population-based training refuses it as a mutation.
  bool binds_checkpoint = false;
};

// A named matrix a task reports about the best model on the test split (e.g. the confusion
// matrix: rows = true class, columns = predicted class, labels = class names). Stored in the
// study as /test_NAME.
struct MetricTable {
  std::string name;
  int64_t rows = 0;
  int64_t columns = 0;
  std::vector<double> values;  // row-major, rows * columns
  std::vector<std::string> labels;
};

// What one kind of task takes and reports. Immutable once built; thread-safe. Implementations
// must not depend on torch or MPI (rank 0 validates configs with them before anything starts).
class TaskDescription {
 public:
  virtual ~TaskDescription() = default;

  // The name a config selects it by (`task: NAME`); command sweeps are the task "command".
  virtual const std::string& name() const = 0;

  // Whether every hyperparameter name is accepted as it is (the user's program reads them).
  virtual bool free_parameters() const { return false; }

  // The hyperparameters the task takes (empty when free_parameters()).
  virtual const std::vector<HyperparameterInfo>& hyperparameters() const = 0;

  // The metrics of one epoch (or step) for `config`, in EpochMetrics::values order. Called once
  // the sweep is parsed (config.task_options set); the sweep metric must be among them.
  virtual std::vector<std::string> MetricNames(const SweepConfig& config) const = 0;

  // Top-level config keys the task owns beside `sweep:` (e.g. `model`), read into
  // SweepConfig::task_options (scalars under dotted paths).
  virtual std::vector<std::string> option_keys() const { return {}; }

  // Checks a parsed config against the task (its options, parameter names): BadInput naming the
  // file, line and key (TaskOptions::Error). Called on rank 0 before anything runs.
  virtual Status CheckOptions(const SweepConfig& config) const {
    (void)config;
    return Status::Ok();
  }

  // Whether a trial's checkpoint holds only under its own value of `parameter`, so that a child
  // that loads it with another value fails (population-based training refuses such mutations).
  // The default: the hyperparameter's binds_checkpoint; false for a name the task does not list.
  virtual bool BindsCheckpoint(const std::string& parameter, const SweepConfig& config) const;

  // Looks a hyperparameter up by name; nullptr when the task has none of that name.
  const HyperparameterInfo* FindHyperparameter(const std::string& name) const;
};

// A numeric hyperparameter accepting [min, max] (an end left out when its *_exclusive is true).
HyperparameterInfo NumericHyperparameter(std::string name, ParamType type, ParamValue default_value,
                                         double min, double max, std::string help,
                                         bool min_exclusive = false, bool max_exclusive = false);
// A string hyperparameter taking one of `choices`.
HyperparameterInfo ChoiceHyperparameter(std::string name, std::string default_value,
                                        std::vector<std::string> choices, std::string help);
// `info` with binds_checkpoint set: BindingCheckpoint(NumericHyperparameter("width", ...)).
HyperparameterInfo BindingCheckpoint(HyperparameterInfo info);

// A description with a fixed list of hyperparameters and of metrics (whatever the config), for a
// user's own task: MakeTaskDescription("my_task", hyperparameters, metric_names).
std::shared_ptr<const TaskDescription> MakeTaskDescription(
    std::string name, std::vector<HyperparameterInfo> hyperparameters,
    std::vector<std::string> metric_names);

// The tasks a run knows, by name. Not thread-safe while adding; read-only afterwards.
class TaskCatalog {
 public:
  // Adds (or replaces) the description under its name.
  void Add(std::shared_ptr<const TaskDescription> description);
  // nullptr when no task of that name was added.
  const TaskDescription* Find(const std::string& name) const;
  // The same, shared (null when absent): for building a TaskRegistry from a catalog.
  std::shared_ptr<const TaskDescription> Share(const std::string& name) const;
  // Every task's name, sorted, for messages.
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::shared_ptr<const TaskDescription>> tasks_;
};

// The name of the command-trial task: a sweep with W&B's `program` or `command` and no `task:`.
inline constexpr const char* kCommandTaskName = "command";

// The descriptions of the built-in tasks (core/src/tasks/builtin_tasks.def: fashion_mnist,
// synthetic, torchscript, text_classification and command).
const TaskCatalog& BuiltinTaskCatalog();

// The optimizer's hyperparameters every libtorch task (hpo/model_task.hpp) takes, read by the DDP
// trainer: lr, batch_size (global, split across the trial's ranks), optimizer (sgd|adam|adamw),
// momentum, weight_decay, warmup_ratio (linear warm-up over that fraction of all steps, then
// linear decay to 0, as BERT fine-tuning does; 0, the default, keeps lr constant). Start a task's
// list with these.
std::vector<HyperparameterInfo> TrainerHyperparameters();

// The metrics of every epoch of a libtorch task, in order: train_loss, then `validation_metrics`
// (what its Summarize gives for "val_"), then epoch_time_s.
std::vector<std::string> ModelTaskMetricNames(const std::vector<std::string>& validation_metrics);

// The trial's value for `name`: from the assignment if swept, else the hyperparameter's default
// in `hyperparameters`. A name that is neither gives int64_t{0}.
ParamValue HyperparameterOrDefault(const std::vector<HyperparameterInfo>& hyperparameters,
                                   const Assignment& params, const std::string& name);

}  // namespace hpo
