#include "hpo/task_catalog.hpp"

#include <limits>
#include <utility>

namespace hpo {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Bounds {
  double min;
  double max;
  bool min_exclusive;
  bool max_exclusive;
};

HyperparameterInfo Numeric(const char* name, ParamType type, ParamValue default_value,
                           Bounds bounds, const char* help) {
  HyperparameterInfo info;
  info.name = name;
  info.type = type;
  info.default_value = std::move(default_value);
  info.min = bounds.min;
  info.max = bounds.max;
  info.min_exclusive = bounds.min_exclusive;
  info.max_exclusive = bounds.max_exclusive;
  info.help = help;
  return info;
}

HyperparameterInfo Choice(const char* name, std::string default_value,
                          std::vector<std::string> choices, const char* help) {
  HyperparameterInfo info;
  info.name = name;
  info.type = ParamType::kString;
  info.default_value = std::move(default_value);
  info.choices = std::move(choices);
  info.help = help;
  return info;
}

std::vector<HyperparameterInfo> BuildClassifierHyperparameters() {
  return {
      Numeric("lr", ParamType::kFloat, 0.01, {0.0, kInfinity, true, false},
              "learning rate of the optimizer"),
      Numeric("batch_size", ParamType::kInt, int64_t{64}, {1, 65536, false, false},
              "global batch size, split across the trial's ranks"),
      Choice("optimizer", "adam", {"sgd", "adam", "adamw"}, "sgd, adam or adamw"),
      Numeric("momentum", ParamType::kFloat, 0.9, {0.0, 1.0, false, true}, "momentum of sgd"),
      Numeric("weight_decay", ParamType::kFloat, 0.0, {0.0, kInfinity, false, false},
              "weight decay of the optimizer"),
      Numeric("dropout", ParamType::kFloat, 0.0, {0.0, 1.0, false, true}, "dropout probability"),
      Numeric("width", ParamType::kInt, int64_t{16}, {1, 4096, false, false},
              "width of the model's hidden layers"),
  };
}

}  // namespace

const std::vector<HyperparameterInfo>& TaskHyperparameters(TaskKind) {
  // Both built-in tasks train a classifier with the same knobs.
  static const std::vector<HyperparameterInfo> kClassifierHyperparameters =
      BuildClassifierHyperparameters();
  return kClassifierHyperparameters;
}

const HyperparameterInfo* FindTaskHyperparameter(TaskKind task, const std::string& name) {
  for (const HyperparameterInfo& info : TaskHyperparameters(task)) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const std::vector<std::string>& TaskMetricNames(TaskKind) {
  static const std::vector<std::string> kClassifierMetrics = {"train_loss", "val_loss",
                                                              "val_accuracy", "epoch_time_s"};
  return kClassifierMetrics;
}

ParamValue HyperparameterOrDefault(TaskKind task, const Assignment& params,
                                   const std::string& name) {
  if (const ParamValue* value = FindParam(params, name)) return *value;
  if (const HyperparameterInfo* info = FindTaskHyperparameter(task, name)) {
    return info->default_value;
  }
  return ParamValue();
}

}  // namespace hpo
