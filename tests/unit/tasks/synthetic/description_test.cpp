#include <gtest/gtest.h>

#include <string>

#include "hpo/config.hpp"
#include "tasks/synthetic/options.hpp"

namespace hpo {
namespace {

std::string Config(const std::string& section) {
  return "task: synthetic\n" + section +
         "sweep:\n  method: grid\n  metric: {name: val_loss}\n  parameters:\n"
         "    lr: {value: 0.1}\n";
}

TEST(SyntheticOptionsTest, SectionIsReadWithDefaultsForWhatItLeavesOut) {
  SweepConfig config;
  ASSERT_TRUE(ParseConfig(Config("synthetic:\n  train_samples: 100\n  classes: 3\n  noise: 0.25\n"),
                          "s.yaml", &config)
                  .ok());
  SyntheticOptions options;
  ASSERT_TRUE(ReadSyntheticOptions(config.task_options, &options).ok());
  EXPECT_EQ(options.train_samples, 100);
  EXPECT_EQ(options.classes, 3);
  EXPECT_DOUBLE_EQ(options.noise, 0.25);
  EXPECT_EQ(options.val_samples, SyntheticOptions().val_samples);
  EXPECT_EQ(options.features, SyntheticOptions().features);
}

TEST(SyntheticOptionsTest, BadValuesNameFileLineAndKey) {
  SweepConfig config;
  EXPECT_EQ(ParseConfig(Config("synthetic:\n  classes: 1\n"), "s.yaml", &config).message(),
            "s.yaml:3: synthetic.classes: must be >= 2, got 1");
  EXPECT_EQ(ParseConfig(Config("synthetic:\n  colour: red\n"), "s.yaml", &config).message(),
            "s.yaml:3: synthetic.colour: unknown key (accepted: train_samples, val_samples, "
            "test_samples, features, classes, noise)");
  EXPECT_EQ(ParseConfig(Config("synthetic:\n  noise: -1\n"), "s.yaml", &config).message(),
            "s.yaml:3: synthetic.noise: must be >= 0, got -1");
  EXPECT_EQ(ParseConfig(Config("synthetic: 5\n"), "s.yaml", &config).message(),
            "s.yaml:2: synthetic: must be a mapping of train_samples, val_samples, test_samples, "
            "features, classes, noise");
}

}  // namespace
}  // namespace hpo
