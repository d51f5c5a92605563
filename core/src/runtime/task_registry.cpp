#include <utility>

#include "builtin_tasks.hpp"
#include "hpo/model_task.hpp"
#include "hpo/task_runner.hpp"
#include "train/text_classification_task.hpp"
#include "train/torchscript_task.hpp"

namespace hpo {

void TaskRegistry::Add(std::shared_ptr<const TaskDescription> description,
                       TaskRunnerFactory factory) {
  const std::string name = description->name();
  catalog_.Add(std::move(description));
  factories_[name] = std::move(factory);
}

const TaskRunnerFactory* TaskRegistry::FindFactory(const std::string& name) const {
  const auto found = factories_.find(name);
  return found == factories_.end() ? nullptr : &found->second;
}

const TaskRegistry& BuiltinTaskRegistry() {
  static const TaskRegistry kRegistry = [] {
    const TaskCatalog& catalog = BuiltinTaskCatalog();
    TaskRegistry registry;
    AddModelTask(&registry, catalog.Share("fashion_mnist"), MakeBuiltinClassifier);
    AddModelTask(&registry, catalog.Share("synthetic"), MakeBuiltinClassifier);
    AddModelTask(&registry, catalog.Share(kTorchScriptTaskName), TorchScriptTask::Make);
    AddModelTask(&registry, catalog.Share(kTextClassificationTaskName),
                 TextClassificationTask::Make);
    registry.Add(catalog.Share(kCommandTaskName), MakeCommandRunner);
    return registry;
  }();
  return kRegistry;
}

}  // namespace hpo
