#include <utility>

#include "hpo/task_runner.hpp"

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

}  // namespace hpo
