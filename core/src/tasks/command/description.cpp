// The command task, torch-free: the user's own program (W&B `program` or `command`) takes any
// hyperparameter and reports the metrics its config names.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "hpo/task_catalog.hpp"
#include "tasks/builtin_tasks.hpp"

namespace hpo {
namespace {

// The user's own program (W&B `program`/`command`): any hyperparameter, and the metrics are the
// sweep metric, then the further objectives, then `metrics:`, then the names of
// `metric_definitions`, each once.
class CommandDescription final : public TaskDescription {
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
    for (const MetricSpec& objective : config.sweep.objectives) add(objective.name);
    for (const std::string& name : config.command.metrics) add(name);
    for (const MetricRegex& definition : config.command.metric_definitions) add(definition.name);
    return names;
  }

 private:
  std::string name_ = kCommandTaskName;
};

}  // namespace

namespace tasks::command {

std::shared_ptr<const TaskDescription> Describe() {
  static const auto kDescription = std::make_shared<const CommandDescription>();
  return kDescription;
}

}  // namespace tasks::command
}  // namespace hpo
