// Command sweeps in the config: W&B's program/command, the keys beside `sweep:` for them, and bare
// W&B sweep files with their command-line settings.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

class CommandConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hpo-command-config-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "programs");
    std::ofstream(dir_ / "programs" / "train.py") << "print('hi')\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  Status Parse(const std::string& text, SweepConfig* config,
               const BareSweepSettings& bare = BareSweepSettings()) {
    return ParseConfig(text, (dir_ / "sweep.yaml").string(), BuiltinTaskCatalog(), bare, config);
  }

  static void ExpectError(const Status& status, const std::string& piece) {
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), Status::Code::kBadInput);
    EXPECT_NE(status.message().find(piece), std::string::npos) << status.message();
  }

  fs::path dir_;
};

constexpr const char* kCommandSweep = R"(sweep:
  program: programs/train.py
  method: random
  run_cap: 4
  metric:
    name: Eval|hits@10
    goal: maximize
  parameters:
    optimizer.config.learning_rate:
      distribution: log_uniform_values
      min: 1.0e-5
      max: 1.0e-2
    num_neg:
      values: [1, 5, 10]
    use_bias:
      values: [true, false]
metrics: [train_loss, val_auroc]
interpreter: sh
)";

TEST_F(CommandConfigTest, ACommandSweepTakesAnyNamesAndResolvesTheProgram) {
  SweepConfig config;
  const Status status = Parse(kCommandSweep, &config);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(config.execution.task, kCommandTaskName);
  EXPECT_EQ(config.execution.epochs, kUnboundedEpochs);
  EXPECT_EQ(config.command.program, (dir_ / "programs" / "train.py").string());
  const std::vector<std::string> wandb_default = {"${env}", "${interpreter}", "${program}",
                                                  "${args}"};
  EXPECT_EQ(config.command.command, wandb_default);
  EXPECT_EQ(config.command.interpreter, "sh");
  const std::vector<std::string> metrics = {"Eval|hits@10", "train_loss", "val_auroc"};
  EXPECT_EQ(config.metric_names, metrics);
  ASSERT_EQ(config.sweep.parameters.size(), 3u);
  EXPECT_EQ(config.sweep.parameters[0].name, "optimizer.config.learning_rate");
  EXPECT_FALSE(config.sweep.parameters[1].boolean);
  EXPECT_TRUE(config.sweep.parameters[2].boolean);
  EXPECT_EQ(config.sweep.parameters[2].type, ParamType::kString);
  EXPECT_EQ(std::get<std::string>(config.sweep.parameters[2].values[0]), "true");
  EXPECT_EQ(config.command.terminate_grace_s, 30.0);
  EXPECT_FALSE(config.command.trial_timeout_s.has_value());
}

TEST_F(CommandConfigTest, EpochsBoundTheRungsWhenGiven) {
  std::string text = kCommandSweep;
  text += "epochs: 9\n";
  text.replace(text.find("  parameters:"), 0,
               "  early_terminate: {type: hyperband, min_iter: 1, eta: 3}\n");
  SweepConfig config;
  const Status status = Parse(text, &config);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(config.execution.epochs, 9);
  EXPECT_TRUE(config.sweep.early_terminate.enabled);
}

TEST_F(CommandConfigTest, BadCommandSweepsNameFileKeyAndLine) {
  SweepConfig config;
  std::string text = kCommandSweep;
  ExpectError(Parse("task: synthetic\n" + text, &config),
              "sweep.yaml:3: sweep.program: a sweep runs either a built-in `task:` (line 1)");
  text = kCommandSweep;
  text.replace(text.find("programs/train.py"), 17, "programs/missing.py");
  ExpectError(Parse(text, &config), "sweep.yaml:2: sweep.program: no such file: ");
  text = kCommandSweep;
  text.replace(text.find("  method:"), 0, "  command: ['${env}', '${interpreter}', '${foo}']\n");
  ExpectError(Parse(text, &config), "sweep.yaml:3: sweep.command: ");
  ExpectError(Parse(text, &config), "${foo}");
  text = kCommandSweep;
  text.replace(text.find("interpreter: sh"), 15, "interpreter: no-such-python-here");
  ExpectError(Parse(text, &config), "interpreter: the interpreter 'no-such-python-here' is not");
  text = kCommandSweep;
  text.replace(text.find("  method:"), 0, "  command: ['${program}', '${args}']\n");
  ExpectError(Parse(text, &config), "is not executable");
  text = kCommandSweep + std::string("data: /tmp\n");
  ExpectError(Parse(text, &config),
              "sweep.yaml:19: data: is an option of task fashion_mnist, torchscript, not of a "
              "command sweep");
  text = kCommandSweep;
  text.replace(text.find("  parameters:"), 0,
               "  early_terminate: {type: hyperband, min_iter: 1}\n");
  text += "search: {model: curves}\n";  // without epochs it aborted rank 0 (std::bad_alloc)
  ExpectError(Parse(text, &config),
              "sweep.yaml:20: search.model: curves predicts each trial's value at its last step: "
              "a command sweep needs `epochs`");
  ExpectError(Parse(text + "epochs: 0\n", &config), "epochs");
  ASSERT_TRUE(Parse(text + "epochs: 8\n", &config).ok());
  ExpectError(Parse("task: synthetic\nepochs: 2\nmetrics: [a]\nsweep:\n  method: grid\n"
                    "  metric: {name: val_loss}\n  parameters:\n    lr: {value: 0.1}\n",
                    &config),
              "sweep.yaml:3: metrics: applies to command sweeps");
}

TEST_F(CommandConfigTest, MetricDefinitionsAreChecked) {
  SweepConfig config;
  std::string text = kCommandSweep + std::string(
                                         "metric_definitions:\n"
                                         "  - {name: val_auroc, regex: 'auroc: ([0-9.]+)'}\n");
  const Status good = Parse(text, &config);
  ASSERT_TRUE(good.ok()) << good.message();
  ASSERT_EQ(config.command.metric_definitions.size(), 1u);
  EXPECT_EQ(config.command.metric_definitions[0].regex, "auroc: ([0-9.]+)");
  text =
      kCommandSweep + std::string("metric_definitions:\n  - {name: val_auroc, regex: 'auroc'}\n");
  ExpectError(Parse(text, &config), "sweep.yaml:20: metric_definitions[0].regex: ");
  ExpectError(Parse(text, &config), "capture group");
  text = kCommandSweep + std::string("metric_definitions:\n  - {name: val_auroc, regex: '(x'}\n");
  ExpectError(Parse(text, &config), "sweep.yaml:20: metric_definitions[0].regex: ");
  text = kCommandSweep + std::string("metric_definitions:\n  - {name: other, regex: '(x)'}\n");
  ExpectError(Parse(text, &config), "metric_definitions[0].name: 'other' is neither the sweep");
}

TEST_F(CommandConfigTest, MetricDefinitionsInSageMakersSpellingAndForTheStep) {
  SweepConfig config;
  // SageMaker's MetricDefinitions as they are (Name, Regex), and a definition of the epoch.
  std::string text = kCommandSweep + std::string(
                                         "metric_definitions:\n"
                                         "  - {Name: val_auroc, Regex: 'auroc: ([0-9.]+)'}\n"
                                         "  - {name: epoch, regex: 'Epoch ([0-9]+)/'}\n");
  const Status good = Parse(text, &config);
  ASSERT_TRUE(good.ok()) << good.message();
  ASSERT_EQ(config.command.metric_definitions.size(), 2u);
  EXPECT_EQ(config.command.metric_definitions[0].name, "val_auroc");
  EXPECT_EQ(config.command.metric_definitions[0].regex, "auroc: ([0-9.]+)");
  EXPECT_EQ(config.command.metric_definitions[1].name, "epoch");
  text = kCommandSweep +
         std::string("metric_definitions:\n  - {name: val_auroc, Name: val_auroc, regex: '(x)'}\n");
  ExpectError(Parse(text, &config), "metric_definitions[0].Name: give `name` or `Name`, not both");
  text = kCommandSweep + std::string("metric_definitions:\n  - {Name: val_auroc}\n");
  ExpectError(Parse(text, &config), "regex");
}

constexpr const char* kBareFile = R"(# a W&B sweep file, as W&B's docs write it
program: programs/train.py
project: sentiment
entity: someone
name: bert-sweep
method: bayes
metric:
  name: val_loss
  goal: minimize
parameters:
  lr:
    distribution: log_uniform_values
    min: 1.0e-5
    max: 1.0e-3
  batch_size:
    values: [16, 32]
)";

TEST_F(CommandConfigTest, ABareWandbFileRunsWithCommandLineSettings) {
  SweepConfig config;
  ExpectError(Parse(kBareFile, &config), "pass --run-cap N");
  BareSweepSettings bare;
  bare.run_cap = 6;
  bare.seed = 11;
  bare.ranks_per_trial = 2;
  const Status status = Parse(kBareFile, &config, bare);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(config.execution.task, kCommandTaskName);
  EXPECT_EQ(config.sweep.run_cap, 6);
  EXPECT_EQ(config.execution.seed, 11u);
  EXPECT_EQ(config.execution.ranks_per_trial, 2);
  EXPECT_EQ(config.sweep.name, "bert-sweep");
  // Its text is the equivalent wrapped config, which parses (as other ranks and a resumed study
  // parse it) to the same sweep.
  EXPECT_NE(config.text.find("sweep:\n"), std::string::npos) << config.text;
  SweepConfig again;
  const Status reparsed = Parse(config.text, &again);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << config.text;
  EXPECT_EQ(again.sweep.run_cap, 6);
  EXPECT_EQ(again.execution.seed, 11u);
  EXPECT_EQ(again.execution.ranks_per_trial, 2);
  EXPECT_EQ(again.command.program, config.command.program);
  EXPECT_TRUE(CheckSameSweep(config.text, again).ok());
  bare.seed = 12;
  SweepConfig other_seed;
  ASSERT_TRUE(Parse(kBareFile, &other_seed, bare).ok());
  ExpectError(CheckSameSweep(config.text, other_seed), "seed");
  bare.seed = 11;
  bare.run_cap = 9;  // more trials may be run on resume
  SweepConfig more;
  ASSERT_TRUE(Parse(kBareFile, &more, bare).ok());
  EXPECT_TRUE(CheckSameSweep(config.text, more).ok());

  // A bare file's own errors carry its own lines and keys.
  std::string bad = kBareFile;
  bad.replace(bad.find("min: 1.0e-5"), 11, "min: -1");
  ExpectError(Parse(bad, &config, bare), "sweep.yaml:13: parameters.lr.min");
  ExpectError(Parse(std::string(kBareFile) + "run_cap: 3\n", &config, bare),
              "the file sets run_cap; drop --run-cap");
  ExpectError(
      Parse("method: random\nmetric: {name: x}\nparameters: {a: {value: 1}}\n", &config, bare),
      "program");
  ExpectError(Parse(kCommandSweep, &config, bare), "--run-cap is for a bare W&B sweep file");
}

}  // namespace
}  // namespace hpo
