#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cli/torch_hand_over.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/task_runner.hpp"

namespace hpo {
namespace {

// The tasks builtin_tasks.def lists (each folder's name is its task's), sorted as catalogs list
// them.
std::vector<std::string> ListedTasks() {
  std::vector<std::string> names = {
#define HPO_BUILTIN_TASK(NAME) #NAME,
#include "tasks/builtin_tasks.def"
#undef HPO_BUILTIN_TASK
  };
  std::sort(names.begin(), names.end());
  return names;
}

// Every task of builtin_tasks.def is described (rank 0 checks configs with it) and has a runner.
TEST(BuiltinTasksTest, EveryListedTaskIsDescribedAndRunnable) {
  const std::vector<std::string> expected = ListedTasks();
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(BuiltinTaskCatalog().names(), expected);
  EXPECT_EQ(BuiltinTaskRegistry().catalog().names(), expected);
  for (const std::string& name : expected) {
    EXPECT_NE(BuiltinTaskRegistry().FindFactory(name), nullptr) << name;
    EXPECT_EQ(BuiltinTaskCatalog().Find(name)->name(), name);
  }
}

// The torch-free hpo describes every built-in task as hpo-torch does, runs command trials itself,
// and fails any other task's runner naming hpo-torch (reached only by a rank that did not hand
// over).
TEST(BuiltinTasksTest, TheTorchFreeRegistryRunsOnlyCommandTrials) {
  const TaskRegistry& registry = TorchFreeTaskRegistry();
  EXPECT_EQ(registry.catalog().names(), ListedTasks());
  SweepConfig config;
  GroupLayout layout;
  for (const std::string& name : ListedTasks()) {
    const TaskRunnerFactory* factory = registry.FindFactory(name);
    ASSERT_NE(factory, nullptr) << name;
    if (name == kCommandTaskName) continue;
    std::unique_ptr<TaskRunner> runner;
    const Status status = (*factory)(config, layout, &runner);
    EXPECT_EQ(status.code(), Status::Code::kFailure) << name;
    EXPECT_NE(status.message().find("the task " + name + " trains with libtorch"),
              std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find(kTorchExecutableName), std::string::npos);
    EXPECT_EQ(runner, nullptr);
  }
}

// A key of one task in another task's config names the task that takes it.
TEST(BuiltinTasksTest, AnotherTasksOptionNamesItsTask) {
  const std::string text =
      "task: synthetic\nvalidation_samples: 500\nsweep:\n  method: grid\n"
      "  metric: {name: val_loss}\n  parameters:\n    lr: {value: 0.1}\n";
  SweepConfig config;
  const Status status = ParseConfig(text, "t.yaml", &config);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "t.yaml:2: validation_samples: is an option of task fashion_mnist, not of task "
            "synthetic");
}

}  // namespace
}  // namespace hpo
