// BuiltinTaskRegistry: every task listed in builtin_tasks.def, each registered by its own folder
// as a user's task would be.
#include "hpo/task_runner.hpp"
#include "tasks/builtin_tasks.hpp"

namespace hpo {

const TaskRegistry& BuiltinTaskRegistry() {
  static const TaskRegistry kRegistry = [] {
    TaskRegistry registry;
#define HPO_BUILTIN_TASK(NAME) tasks::NAME::Register(&registry);
#include "tasks/builtin_tasks.def"
#undef HPO_BUILTIN_TASK
    return registry;
  }();
  return kRegistry;
}

}  // namespace hpo
