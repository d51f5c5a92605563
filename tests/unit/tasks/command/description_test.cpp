#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {
namespace {

// The sweep metric first, then `metrics:`, then the metric definitions' names, each once.
TEST(CommandDescriptionTest, MetricsAreTheSweepMetricThenTheNamedOnes) {
  const TaskDescription& command = *BuiltinTaskCatalog().Find(kCommandTaskName);
  SweepConfig config;
  config.sweep.metric.name = "val_loss";
  config.command.metrics = {"accuracy", "val_loss"};
  config.command.metric_definitions = {{"throughput", "tp=(\\S+)", 3}, {"accuracy", "a=(\\S+)", 4}};
  EXPECT_EQ(command.MetricNames(config),
            (std::vector<std::string>{"val_loss", "accuracy", "throughput"}));
  EXPECT_TRUE(command.free_parameters());
  EXPECT_TRUE(command.option_keys().empty());
}

}  // namespace
}  // namespace hpo
