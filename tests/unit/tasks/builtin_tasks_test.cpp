#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hpo/task_catalog.hpp"
#include "hpo/task_runner.hpp"

namespace hpo {
namespace {

// Every task of builtin_tasks.def is described (rank 0 checks configs with it) and has a runner.
TEST(BuiltinTasksTest, EveryListedTaskIsDescribedAndRunnable) {
  const std::vector<std::string> expected = {"command", "fashion_mnist", "synthetic",
                                             "text_classification", "torchscript"};
  EXPECT_EQ(BuiltinTaskCatalog().names(), expected);
  EXPECT_EQ(BuiltinTaskRegistry().catalog().names(), expected);
  for (const std::string& name : expected) {
    EXPECT_NE(BuiltinTaskRegistry().FindFactory(name), nullptr) << name;
    EXPECT_EQ(BuiltinTaskCatalog().Find(name)->name(), name);
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
