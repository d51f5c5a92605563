// Private to the libraries: the entry points of every built-in task's folder, declared from the
// list in builtin_tasks.def. Each task's Describe() is torch-free (hpo_core); its Register() adds
// the description with its runner factory to a registry exactly as a user's own task is added
// (hpo_runtime).
#pragma once

#include <memory>

#include "hpo/task_catalog.hpp"

namespace hpo {

class TaskRegistry;

#define HPO_BUILTIN_TASK(NAME)                       \
  namespace tasks::NAME {                            \
  std::shared_ptr<const TaskDescription> Describe(); \
  void Register(TaskRegistry* registry);             \
  }
#include "tasks/builtin_tasks.def"
#undef HPO_BUILTIN_TASK

}  // namespace hpo
