// BuiltinTaskCatalog: the descriptions of the tasks listed in builtin_tasks.def.
#include "hpo/task_catalog.hpp"
#include "tasks/builtin_tasks.hpp"

namespace hpo {

const TaskCatalog& BuiltinTaskCatalog() {
  static const TaskCatalog kCatalog = [] {
    TaskCatalog catalog;
#define HPO_BUILTIN_TASK(NAME) catalog.Add(tasks::NAME::Describe());
#include "tasks/builtin_tasks.def"
#undef HPO_BUILTIN_TASK
    return catalog;
  }();
  return kCatalog;
}

}  // namespace hpo
