#include <gtest/gtest.h>

#include <string>

#include "hpo/config.hpp"
#include "tasks/fashion_mnist/options.hpp"

namespace hpo {
namespace {

std::string Config(const std::string& keys) {
  return "task: fashion_mnist\n" + keys +
         "sweep:\n  method: grid\n  metric: {name: val_accuracy, goal: maximize}\n"
         "  parameters:\n    lr: {value: 0.1}\n";
}

TEST(FashionMnistOptionsTest, DefaultsAreDebiansFolderAndA6000ImageValidationSplit) {
  SweepConfig config;
  ASSERT_TRUE(ParseConfig(Config(""), "f.yaml", &config).ok());
  FashionMnistOptions options;
  ASSERT_TRUE(ReadFashionMnistOptions(config.task_options, &options).ok());
  EXPECT_EQ(options.folder, "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(options.validation_samples, 6000);
  EXPECT_EQ(options.train_samples, 0);
}

TEST(FashionMnistOptionsTest, KeysAreReadAndCheckedWithTheirLines) {
  SweepConfig config;
  ASSERT_TRUE(ParseConfig(Config("data: /d\nvalidation_samples: 500\ntrain_samples: 0x100\n"),
                          "f.yaml", &config)
                  .ok());
  FashionMnistOptions options;
  ASSERT_TRUE(ReadFashionMnistOptions(config.task_options, &options).ok());
  EXPECT_EQ(options.folder, "/d");
  EXPECT_EQ(options.validation_samples, 500);
  EXPECT_EQ(options.train_samples, 256);
  EXPECT_EQ(ParseConfig(Config("data: ''\n"), "f.yaml", &config).message(),
            "f.yaml:2: data: must not be empty");
  EXPECT_EQ(ParseConfig(Config("train_samples: many\n"), "f.yaml", &config).message(),
            "f.yaml:2: train_samples: must be an integer, got 'many'");
}

}  // namespace
}  // namespace hpo
