// What the built-in tasks accept and report, without any torch dependency, so the config parser
// can reject unknown hyperparameters and metrics on rank 0 before anything trains.
#pragma once

#include <limits>
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
};

// The hyperparameters every built-in task takes: lr, batch_size (global, split across the trial's
// ranks), optimizer (sgd|adam|adamw), momentum, weight_decay, dropout, width.
const std::vector<HyperparameterInfo>& TaskHyperparameters(TaskKind task);

// Looks a hyperparameter up by name; nullptr when the task has none of that name.
const HyperparameterInfo* FindTaskHyperparameter(TaskKind task, const std::string& name);

// The metrics a task reports per epoch, in EpochMetrics::values order:
// train_loss, val_loss, val_accuracy, epoch_time_s.
const std::vector<std::string>& TaskMetricNames(TaskKind task);

// The trial's value for `name`: from the assignment if swept, else the task's default. A name
// that is neither swept nor one of the task's hyperparameters gives int64_t{0}.
ParamValue HyperparameterOrDefault(TaskKind task, const Assignment& params,
                                   const std::string& name);

}  // namespace hpo
