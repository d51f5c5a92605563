#include "cli/torch_hand_over.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

#include "common/diagnostic.hpp"
#include "tasks/builtin_tasks.hpp"

namespace hpo {

namespace {

// A factory for a libtorch task in the torch-free hpo: reached only by a rank that stayed here
// while rank 0 handed over (HandOverTorchSweep), so the sweep fails clearly instead of hanging.
TaskRunnerFactory TorchOnlyFactory(const std::string& task) {
  return [task](const SweepConfig&, const GroupLayout&, std::unique_ptr<TaskRunner>*) {
    return Status::Failure("the task " + task + " trains with libtorch, which this hpo does not " +
                           "load: it hands such sweeps to " + kTorchExecutableName +
                           " beside it, but this rank could not read the config to do so (every " +
                           "rank needs the config file)");
  };
}

void AddTorchOnly(TaskRegistry* registry, std::shared_ptr<const TaskDescription> description) {
  const std::string name = description->name();
  registry->Add(std::move(description), TorchOnlyFactory(name));
}

// hpo-torch in the folder of the executable running now.
std::filesystem::path TorchExecutablePath() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return self.parent_path() / kTorchExecutableName;
}

}  // namespace

const TaskRegistry& TorchFreeTaskRegistry() {
  static const TaskRegistry kRegistry = [] {
    TaskRegistry registry;
#define HPO_BUILTIN_TASK(NAME) AddTorchOnly(&registry, tasks::NAME::Describe());
#include "tasks/builtin_tasks.def"
#undef HPO_BUILTIN_TASK
    tasks::command::Register(&registry);
    return registry;
  }();
  return kRegistry;
}

void HandOverTorchSweep(const SweepConfig& config, char** argv, bool print_errors) {
  if (config.execution.task == kCommandTaskName) return;
  const std::filesystem::path torch = TorchExecutablePath();
  execv(torch.c_str(), argv);
  if (print_errors) {
    PrintDiagnostic("hpo: error: the task " + config.execution.task +
                    " trains with libtorch, which hpo hands over to " + torch.string() +
                    ": it cannot be started (" + std::strerror(errno) + "); reinstall hpo-mpi");
  }
  std::exit(static_cast<int>(ExitCode::kFailure));
}

}  // namespace hpo
