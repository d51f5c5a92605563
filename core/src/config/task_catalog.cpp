#include "hpo/task_catalog.hpp"

#include <algorithm>
#include <limits>
#include <memory>
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
  std::vector<HyperparameterInfo> list = TrainerHyperparameters();
  list.push_back(
      Numeric("dropout", ParamType::kFloat, 0.0, {0.0, 1.0, false, true}, "dropout probability"));
  list.push_back(Numeric("width", ParamType::kInt, int64_t{16}, {1, 4096, false, false},
                         "width of the model's hidden layers"));
  return list;
}

// A built-in libtorch classifier: fashion_mnist or synthetic.
class ClassifierTask final : public TaskDescription {
 public:
  explicit ClassifierTask(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return ClassifierHyperparameters();
  }
  std::vector<std::string> MetricNames(const SweepConfig&) const override {
    return ClassifierMetricNames();
  }

 private:
  std::string name_;
};

// A task with fixed lists (MakeTaskDescription).
class FixedTaskDescription final : public TaskDescription {
 public:
  FixedTaskDescription(std::string name, std::vector<HyperparameterInfo> hyperparameters,
                       std::vector<std::string> metric_names)
      : name_(std::move(name)),
        hyperparameters_(std::move(hyperparameters)),
        metric_names_(std::move(metric_names)) {}
  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return hyperparameters_;
  }
  std::vector<std::string> MetricNames(const SweepConfig&) const override { return metric_names_; }

 private:
  std::string name_;
  std::vector<HyperparameterInfo> hyperparameters_;
  std::vector<std::string> metric_names_;
};

// The user's own program (W&B `program`/`command`): any hyperparameter, and the metrics are the
// sweep metric, then `metrics:`, then the names of `metric_definitions`, each once.
class CommandTask final : public TaskDescription {
 public:
  const std::string& name() const override { return name_; }
  bool free_parameters() const override { return true; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    static const std::vector<HyperparameterInfo> kNone;
    return kNone;
  }
  std::vector<std::string> MetricNames(const SweepConfig& config) const override {
    std::vector<std::string> names = {config.sweep.metric.name};
    auto add = [&names](const std::string& name) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    for (const std::string& name : config.command.metrics) add(name);
    for (const MetricRegex& definition : config.command.metric_definitions) add(definition.name);
    return names;
  }

 private:
  std::string name_ = kCommandTaskName;
};

}  // namespace

const HyperparameterInfo* TaskDescription::FindHyperparameter(const std::string& name) const {
  for (const HyperparameterInfo& info : hyperparameters()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

void TaskCatalog::Add(std::shared_ptr<const TaskDescription> description) {
  const std::string name = description->name();
  tasks_[name] = std::move(description);
}

const TaskDescription* TaskCatalog::Find(const std::string& name) const {
  const auto found = tasks_.find(name);
  return found == tasks_.end() ? nullptr : found->second.get();
}

std::shared_ptr<const TaskDescription> TaskCatalog::Share(const std::string& name) const {
  const auto found = tasks_.find(name);
  return found == tasks_.end() ? nullptr : found->second;
}

std::vector<std::string> TaskCatalog::names() const {
  std::vector<std::string> names;
  for (const auto& entry : tasks_) names.push_back(entry.first);
  return names;
}

const TaskCatalog& BuiltinTaskCatalog() {
  static const TaskCatalog kCatalog = [] {
    TaskCatalog catalog;
    catalog.Add(std::make_shared<ClassifierTask>("fashion_mnist"));
    catalog.Add(std::make_shared<ClassifierTask>("synthetic"));
    catalog.Add(std::make_shared<CommandTask>());
    return catalog;
  }();
  return kCatalog;
}

const std::vector<HyperparameterInfo>& ClassifierHyperparameters() {
  static const std::vector<HyperparameterInfo> kClassifierHyperparameters =
      BuildClassifierHyperparameters();
  return kClassifierHyperparameters;
}

const std::vector<std::string>& ClassifierMetricNames() {
  static const std::vector<std::string> kClassifierMetrics =
      ModelTaskMetricNames({"val_loss", "val_accuracy", "val_macro_f1"});
  return kClassifierMetrics;
}

std::vector<HyperparameterInfo> TrainerHyperparameters() {
  return {
      Numeric("lr", ParamType::kFloat, 0.01, {0.0, kInfinity, true, false},
              "learning rate of the optimizer"),
      Numeric("batch_size", ParamType::kInt, int64_t{64}, {1, 65536, false, false},
              "global batch size, split across the trial's ranks"),
      Choice("optimizer", "adam", {"sgd", "adam", "adamw"}, "sgd, adam or adamw"),
      Numeric("momentum", ParamType::kFloat, 0.9, {0.0, 1.0, false, true}, "momentum of sgd"),
      Numeric("weight_decay", ParamType::kFloat, 0.0, {0.0, kInfinity, false, false},
              "weight decay of the optimizer"),
      Numeric("warmup_ratio", ParamType::kFloat, 0.0, {0.0, 1.0, false, true},
              "fraction of all steps with a linear lr warm-up, then linear decay (0: constant)"),
  };
}

std::vector<std::string> ModelTaskMetricNames(const std::vector<std::string>& validation_metrics) {
  std::vector<std::string> names = {"train_loss"};
  names.insert(names.end(), validation_metrics.begin(), validation_metrics.end());
  names.push_back("epoch_time_s");
  return names;
}

ParamValue HyperparameterOrDefault(const std::vector<HyperparameterInfo>& hyperparameters,
                                   const Assignment& params, const std::string& name) {
  if (const ParamValue* value = FindParam(params, name)) return *value;
  for (const HyperparameterInfo& info : hyperparameters) {
    if (info.name == name) return info.default_value;
  }
  return ParamValue();
}

std::shared_ptr<const TaskDescription> MakeTaskDescription(
    std::string name, std::vector<HyperparameterInfo> hyperparameters,
    std::vector<std::string> metric_names) {
  return std::make_shared<FixedTaskDescription>(std::move(name), std::move(hyperparameters),
                                                std::move(metric_names));
}

}  // namespace hpo
