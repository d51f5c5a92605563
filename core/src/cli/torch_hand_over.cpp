#include "cli/torch_hand_over.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
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

// How long a rank other than 0 waits before it says that hpo-torch cannot be started.
constexpr std::chrono::seconds kOtherRanksSpeakAfter(10);

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

void HandOverTorchSweep(const SweepConfig& config, char** argv, const std::string& rank) {
  if (config.execution.task == kCommandTaskName) return;
  const std::filesystem::path torch = TorchExecutablePath();
  execv(torch.c_str(), argv);
  const std::string why = std::strerror(errno);
  // Rank 0 speaks for the job; the others wait a moment first (the launcher ends them once rank 0
  // has failed: had one failed first, the launcher could end rank 0 before it spoke) and speak
  // only where rank 0 did not fail.
  if (rank != "0") std::this_thread::sleep_for(kOtherRanksSpeakAfter);
  PrintDiagnostic("hpo: error" + (rank == "0" ? std::string() : " on rank " + rank) +
                  ": the task " + config.execution.task +
                  " trains with libtorch, which hpo hands over to " + torch.string() +
                  ": it cannot be started (" + why + "); reinstall hpo-mpi");
  std::exit(static_cast<int>(ExitCode::kFailure));
}

}  // namespace hpo
