#include "hpo/task_catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <utility>

#include "common/infinity.hpp"

namespace hpo {

namespace {

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

}  // namespace

bool TaskDescription::BindsCheckpoint(const std::string& parameter, const SweepConfig&) const {
  const HyperparameterInfo* info = FindHyperparameter(parameter);
  return info != nullptr && info->binds_checkpoint;
}

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

std::vector<HyperparameterInfo> TrainerHyperparameters() {
  return {
      NumericHyperparameter("lr", ParamType::kFloat, 0.01, 0.0, kInfinity,
                            "learning rate of the optimizer", true, false),
      NumericHyperparameter("batch_size", ParamType::kInt, int64_t{64}, 1, 65536,
                            "global batch size, split across the trial's ranks"),
      BindingCheckpoint(ChoiceHyperparameter("optimizer", "adam", {"sgd", "adam", "adamw"},
                                             "sgd, adam or adamw")),
      NumericHyperparameter("momentum", ParamType::kFloat, 0.9, 0.0, 1.0, "momentum of sgd", false,
                            true),
      NumericHyperparameter("weight_decay", ParamType::kFloat, 0.0, 0.0, kInfinity,
                            "weight decay of the optimizer"),
      NumericHyperparameter(
          "warmup_ratio", ParamType::kFloat, 0.0, 0.0, 1.0,
          "fraction of all steps with a linear lr warm-up, then linear decay (0: constant)", false,
          true),
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

HyperparameterInfo NumericHyperparameter(std::string name, ParamType type, ParamValue default_value,
                                         double min, double max, std::string help,
                                         bool min_exclusive, bool max_exclusive) {
  HyperparameterInfo info;
  info.name = std::move(name);
  info.type = type;
  info.default_value = std::move(default_value);
  info.min = min;
  info.max = max;
  info.min_exclusive = min_exclusive;
  info.max_exclusive = max_exclusive;
  info.help = std::move(help);
  return info;
}

HyperparameterInfo ChoiceHyperparameter(std::string name, std::string default_value,
                                        std::vector<std::string> choices, std::string help) {
  HyperparameterInfo info;
  info.name = std::move(name);
  info.type = ParamType::kString;
  info.default_value = std::move(default_value);
  info.choices = std::move(choices);
  info.help = std::move(help);
  return info;
}

HyperparameterInfo BindingCheckpoint(HyperparameterInfo info) {
  info.binds_checkpoint = true;
  return info;
}

std::shared_ptr<const TaskDescription> MakeTaskDescription(
    std::string name, std::vector<HyperparameterInfo> hyperparameters,
    std::vector<std::string> metric_names) {
  return std::make_shared<FixedTaskDescription>(std::move(name), std::move(hyperparameters),
                                                std::move(metric_names));
}

}  // namespace hpo
