// The config parser: good configs parse to the expected structure; every kind of mistake is a
// BadInput naming the file, the line and the key.
#include <dirent.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"

namespace hpo {
namespace {

constexpr char kPath[] = "test.yaml";

Status Parse(const std::string& text, SweepConfig* config) {
  return ParseConfig(text, kPath, config);
}

// The search options `text` parses to (a failure to parse fails the test).
SearchOptions SearchOf(const std::string& text) {
  SweepConfig config;
  const Status status = Parse(text, &config);
  EXPECT_TRUE(status.ok()) << status.message();
  return config.search;
}

const ParameterSpec& FindParameter(const SweepConfig& config, const std::string& name) {
  for (const ParameterSpec& parameter : config.sweep.parameters) {
    if (parameter.name == name) return parameter;
  }
  ADD_FAILURE() << "no parameter " << name;
  static const ParameterSpec kNone;
  return kNone;
}

constexpr char kFullConfig[] = R"(# A random sweep over every kind of parameter.
task: synthetic
epochs: 3
seed: 42
ranks_per_trial: 2
sweep:
  method: random
  run_cap: 10
  name: demo
  description: every kind of parameter
  metric:
    name: val_accuracy
    goal: maximize
  parameters:
    lr:
      distribution: log_uniform_values
      min: 0.0001
      max: 0.1
    batch_size:
      values: [32, 64, 128]
    optimizer:
      values: [sgd, adam]
    momentum:
      value: 0.9
    dropout:
      min: 0.0
      max: 0.5
    width:
      min: 8
      max: 64
    weight_decay:
      values: [0, 0.0001]
)";

TEST(ConfigTest, FullConfigParsesToExpectedStructure) {
  SweepConfig config;
  ASSERT_TRUE(Parse(kFullConfig, &config).ok()) << Parse(kFullConfig, &config).message();
  EXPECT_EQ(config.path, kPath);
  EXPECT_EQ(config.text, kFullConfig);
  EXPECT_EQ(config.execution.task, "synthetic");
  EXPECT_EQ(config.execution.epochs, 3);
  EXPECT_EQ(config.execution.seed, 42u);
  EXPECT_EQ(config.execution.ranks_per_trial, 2);
  EXPECT_EQ(config.sweep.method, SearchMethod::kRandom);
  EXPECT_EQ(config.sweep.run_cap, 10);
  EXPECT_EQ(config.sweep.name, "demo");
  EXPECT_EQ(config.sweep.description, "every kind of parameter");
  EXPECT_EQ(config.sweep.metric.name, "val_accuracy");
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMaximize);

  ASSERT_EQ(config.sweep.parameters.size(), 7u);
  const std::vector<std::string> file_order = {"lr",      "batch_size", "optimizer",   "momentum",
                                               "dropout", "width",      "weight_decay"};
  for (size_t i = 0; i < file_order.size(); ++i) {
    EXPECT_EQ(config.sweep.parameters[i].name, file_order[i]);
  }

  const ParameterSpec& lr = FindParameter(config, "lr");
  EXPECT_EQ(lr.distribution, Distribution::kLogUniformValues);
  EXPECT_EQ(lr.type, ParamType::kFloat);
  EXPECT_DOUBLE_EQ(lr.min, 0.0001);
  EXPECT_DOUBLE_EQ(lr.max, 0.1);
  EXPECT_EQ(lr.line, 15);

  const ParameterSpec& batch_size = FindParameter(config, "batch_size");
  EXPECT_EQ(batch_size.distribution, Distribution::kCategorical);
  EXPECT_EQ(batch_size.type, ParamType::kInt);
  EXPECT_EQ(batch_size.values, (std::vector<ParamValue>{int64_t{32}, int64_t{64}, int64_t{128}}));
  EXPECT_EQ(batch_size.line, 19);

  const ParameterSpec& optimizer = FindParameter(config, "optimizer");
  EXPECT_EQ(optimizer.distribution, Distribution::kCategorical);
  EXPECT_EQ(optimizer.type, ParamType::kString);
  EXPECT_EQ(optimizer.values, (std::vector<ParamValue>{std::string("sgd"), std::string("adam")}));

  const ParameterSpec& momentum = FindParameter(config, "momentum");
  EXPECT_EQ(momentum.distribution, Distribution::kConstant);
  EXPECT_EQ(momentum.type, ParamType::kFloat);
  EXPECT_EQ(momentum.values, (std::vector<ParamValue>{0.9}));

  const ParameterSpec& dropout = FindParameter(config, "dropout");
  EXPECT_EQ(dropout.distribution, Distribution::kUniform);  // 0.0 is a float: not int_uniform
  EXPECT_EQ(dropout.type, ParamType::kFloat);

  const ParameterSpec& width = FindParameter(config, "width");
  EXPECT_EQ(width.distribution, Distribution::kIntUniform);
  EXPECT_EQ(width.type, ParamType::kInt);
  EXPECT_EQ(width.min, 8);
  EXPECT_EQ(width.max, 64);
  EXPECT_EQ(width.line, 28);

  const ParameterSpec& weight_decay = FindParameter(config, "weight_decay");
  EXPECT_EQ(weight_decay.type, ParamType::kFloat);  // integers and floats mixed
  EXPECT_EQ(weight_decay.values, (std::vector<ParamValue>{0.0, 0.0001}));
}

TEST(ConfigTest, DefaultsApplyWhenKeysAreAbsent) {
  const std::string text = R"(task: fashion_mnist
sweep:
  method: grid
  metric: {name: val_loss}
  parameters:
    lr: {value: 0.1}
)";
  SweepConfig config;
  ASSERT_TRUE(Parse(text, &config).ok()) << Parse(text, &config).message();
  EXPECT_EQ(config.execution.task, "fashion_mnist");
  EXPECT_EQ(config.execution.epochs, 1);
  EXPECT_EQ(config.execution.ranks_per_trial, 1);
  EXPECT_EQ(config.execution.threads_per_rank, 1);
  EXPECT_EQ(config.execution.seed, 0u);
  EXPECT_EQ(config.execution.output, "runs/study");
  EXPECT_TRUE(config.task_options.values.empty());
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMinimize);
  EXPECT_FALSE(config.sweep.run_cap.has_value());
  ASSERT_EQ(config.sweep.parameters.size(), 1u);
  EXPECT_EQ(config.sweep.parameters[0].distribution, Distribution::kConstant);
}

TEST(ConfigTest, ExecutionKeysAndTaskOptionsAreRead) {
  const std::string text = R"(task: fashion_mnist
data: /tmp/data
output: out/study
threads_per_rank: 4
validation_samples: 500
train_samples: 2000
sweep:
  method: grid
  metric: {name: train_loss}
  parameters:
    width: {min: 2, max: 4}
)";
  SweepConfig config;
  ASSERT_TRUE(Parse(text, &config).ok()) << Parse(text, &config).message();
  EXPECT_EQ(config.execution.output, "out/study");
  EXPECT_EQ(config.execution.threads_per_rank, 4);
  // The task's own keys are its options, with their lines, for the task to read.
  EXPECT_EQ(config.task_options.Get("data", ""), "/tmp/data");
  EXPECT_EQ(config.task_options.Find("data")->line, 2);
  EXPECT_EQ(config.task_options.Get("validation_samples", ""), "500");
  EXPECT_EQ(config.task_options.Get("train_samples", ""), "2000");
  // Grid search enumerates an integer range, as W&B's grid search does.
  EXPECT_EQ(config.sweep.parameters[0].distribution, Distribution::kIntUniform);
}

TEST(ConfigTest, TrialsPerGpuIsReadAndMayChangeOnResume) {
  const std::string base =
      "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric: {name: val_loss}\n"
      "  parameters:\n    lr: {values: [0.1]}\n";
  SweepConfig plain;
  ASSERT_TRUE(Parse(base, &plain).ok());
  EXPECT_EQ(plain.execution.trials_per_gpu, 1);
  SweepConfig shared;
  const Status status = Parse(base + "ranks_per_trial: 1\ntrials_per_gpu: 4\n", &shared);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(shared.execution.trials_per_gpu, 4);
  // Where trials run does not change their results, so a study may resume with another K.
  EXPECT_TRUE(CheckSameSweep(base, shared).ok()) << CheckSameSweep(base, shared).message();
  EXPECT_TRUE(CheckSameSweep(shared.text, plain).ok());
}

TEST(ConfigTest, WandbSpecificsAreHonoured) {
  const std::string text = R"(task: synthetic
sweep:
  project: demo
  entity: someone
  method: random
  run_cap: 3
  metric:
    name: val_loss
  parameters:
    optimizer:
      values: [sgd, adam, adamw]
      probabilities: [0.5, 0.25, 0.25]
    weight_decay:
      distribution: q_log_normal
      mu: -5
      sigma: 1
      q: 0.001
    lr:
      distribution: log_normal
    momentum:
      distribution: beta
      a: 2
    batch_size:
      values: ["64"]
)";
  SweepConfig config;
  Status status = Parse(text, &config);
  // batch_size "64" is quoted: a string, which an integer hyperparameter refuses.
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("test.yaml:23: sweep.parameters.batch_size: batch_size takes "
                                  "integers"),
            std::string::npos)
      << status.message();

  const std::string without_batch_size = text.substr(0, text.find("    batch_size:"));
  ASSERT_TRUE(Parse(without_batch_size, &config).ok())
      << Parse(without_batch_size, &config).message();
  const ParameterSpec& optimizer = FindParameter(config, "optimizer");
  EXPECT_EQ(optimizer.distribution, Distribution::kCategoricalWithProbabilities);
  EXPECT_EQ(optimizer.probabilities, (std::vector<double>{0.5, 0.25, 0.25}));
  const ParameterSpec& weight_decay = FindParameter(config, "weight_decay");
  EXPECT_EQ(weight_decay.distribution, Distribution::kQLogNormal);
  EXPECT_DOUBLE_EQ(weight_decay.mu, -5.0);
  EXPECT_DOUBLE_EQ(weight_decay.q, 0.001);
  const ParameterSpec& lr = FindParameter(config, "lr");
  EXPECT_EQ(lr.distribution, Distribution::kLogNormal);
  EXPECT_DOUBLE_EQ(lr.mu, 0.0);  // W&B defaults
  EXPECT_DOUBLE_EQ(lr.sigma, 1.0);
  const ParameterSpec& momentum = FindParameter(config, "momentum");
  EXPECT_EQ(momentum.distribution, Distribution::kBeta);
  EXPECT_DOUBLE_EQ(momentum.a, 2.0);
  EXPECT_DOUBLE_EQ(momentum.b, 1.0);
}

TEST(ConfigTest, NonNumericScalarsAreStringsHoldingTheirText) {
  const std::string text = R"(task: synthetic
sweep:
  method: grid
  metric: {name: val_loss}
  parameters:
    optimizer:
      values: ["sgd", adam]
    lr:
      values: [1, 0.5, 2.5e-3]
)";
  SweepConfig config;
  ASSERT_TRUE(Parse(text, &config).ok()) << Parse(text, &config).message();
  EXPECT_EQ(FindParameter(config, "optimizer").values,
            (std::vector<ParamValue>{std::string("sgd"), std::string("adam")}));
  const ParameterSpec& lr = FindParameter(config, "lr");
  EXPECT_EQ(lr.type, ParamType::kFloat);
  EXPECT_EQ(lr.values, (std::vector<ParamValue>{1.0, 0.5, 0.0025}));
}

TEST(ConfigTest, ParsingIsDeterministic) {
  SweepConfig first;
  SweepConfig second;
  ASSERT_TRUE(Parse(kFullConfig, &first).ok());
  ASSERT_TRUE(Parse(first.text, &second).ok());
  ASSERT_EQ(first.sweep.parameters.size(), second.sweep.parameters.size());
  for (size_t i = 0; i < first.sweep.parameters.size(); ++i) {
    const ParameterSpec& a = first.sweep.parameters[i];
    const ParameterSpec& b = second.sweep.parameters[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.distribution, b.distribution);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.values, b.values);
    EXPECT_EQ(a.min, b.min);
    EXPECT_EQ(a.max, b.max);
    EXPECT_EQ(a.line, b.line);
  }
}

TEST(ConfigTest, BayesWithEarlyStoppingSearchOptionsAndBudgets) {
  const std::string text = R"(task: synthetic
epochs: 27
sweep:
  method: bayes
  run_cap: 50
  metric:
    name: val_accuracy
    goal: maximize
    target: 0.95
  early_terminate:
    type: hyperband
    min_iter: 1
    eta: 3
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
search:
  model: tpe
  startup_trials: 5
  candidates: 64
median_stopping:
  min_trials: 3
  start_step: 2
time_budget_s: 3600.5
max_failed_trials: 0
trial_retries: 2
checkpoint: {interval: 3, grace_period_s: 120}
)";
  SweepConfig config;
  ASSERT_TRUE(Parse(text, &config).ok()) << Parse(text, &config).message();
  EXPECT_EQ(config.sweep.method, SearchMethod::kBayes);
  EXPECT_EQ(config.sweep.run_cap, 50);
  ASSERT_TRUE(config.sweep.metric.target.has_value());
  EXPECT_DOUBLE_EQ(*config.sweep.metric.target, 0.95);

  const HyperbandSpec& hyperband = config.sweep.early_terminate;
  EXPECT_TRUE(hyperband.enabled);
  EXPECT_EQ(hyperband.min_iter, 1);
  EXPECT_FALSE(hyperband.max_iter.has_value());
  EXPECT_FALSE(hyperband.s.has_value());
  EXPECT_EQ(hyperband.eta, 3);

  EXPECT_EQ(config.search.model, BayesModel::kTpe);
  EXPECT_EQ(config.search.startup_trials, 5);
  EXPECT_EQ(config.search.candidates, 64);
  EXPECT_EQ(config.search.sampler, RandomSampler::kIndependent);

  EXPECT_TRUE(config.median_stopping.enabled);
  EXPECT_EQ(config.median_stopping.min_trials, 3);
  EXPECT_EQ(config.median_stopping.start_step, 2);

  ASSERT_TRUE(config.budget.time_budget_s.has_value());
  EXPECT_DOUBLE_EQ(*config.budget.time_budget_s, 3600.5);
  EXPECT_EQ(config.budget.max_failed_trials, 0);
  EXPECT_EQ(config.budget.trial_retries, 2);
  EXPECT_EQ(config.checkpoint.interval, 3);
  EXPECT_DOUBLE_EQ(config.checkpoint.grace_period_s, 120.0);
}

TEST(ConfigTest, BayesWithEarlyTerminateAndNoModelMeansTheCurveSchedulerWithTpeDraws) {
  // What users write (W&B's bayes + hyperband, no search: keys) gets curves_tpe; a model named,
  // another method, no early_terminate, asha: or median_stopping beside it keep their meaning.
  std::string bayes = kFullConfig;
  bayes.replace(bayes.find("method: random"), 14, "method: bayes");
  const std::string hyperband = "  early_terminate: {type: hyperband, min_iter: 1}\n";
  const auto model_of = [](const std::string& text) { return SearchOf(text).model; };
  SweepConfig config;
  ASSERT_TRUE(Parse(bayes + hyperband, &config).ok());
  EXPECT_EQ(config.search.model, BayesModel::kCurvesTpe);
  EXPECT_FALSE(config.search.model_given);
  EXPECT_EQ(DescribeSearchAndStopping(config), "bayes search (curves_tpe), curve scheduler");
  EXPECT_EQ(model_of(bayes), BayesModel::kTpe);  // no early_terminate
  EXPECT_EQ(model_of(bayes + hyperband + "search: {model: tpe}\n"), BayesModel::kTpe);
  EXPECT_EQ(model_of(bayes + hyperband + "search: {startup_trials: 5}\n"), BayesModel::kCurvesTpe);
  EXPECT_EQ(model_of(bayes + hyperband + "asha: {promotion: true}\n"), BayesModel::kTpe);
  EXPECT_EQ(model_of(bayes + hyperband + "median_stopping: {min_trials: 3}\n"), BayesModel::kTpe);
  EXPECT_EQ(model_of(std::string(kFullConfig) + hyperband), BayesModel::kTpe);  // random
  // The stored text parses to the same sweep, so a study resumes under it.
  EXPECT_TRUE(CheckSameSweep(config.text, config).ok());
}

TEST(ConfigTest, BayesWithoutEarlyStoppingStartsFromASobolDesign) {
  // The start-up trials of bayes (TPE, one objective, no early stopping) cover the space unless
  // the config names a sampler; with early stopping, another model or several objectives they
  // stay random draws, and random keeps independent draws.
  const std::string base = R"(task: synthetic
epochs: 9
sweep:
  method: bayes
  run_cap: 20
  metric: {name: val_loss}
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    width: {values: [16, 32]}
)";
  const auto sampler_of = [](const std::string& text) { return SearchOf(text).sampler; };
  SweepConfig config;
  ASSERT_TRUE(Parse(base, &config).ok());
  EXPECT_EQ(config.search.sampler, RandomSampler::kSobol);
  EXPECT_FALSE(config.search.sampler_given);
  EXPECT_TRUE(CheckSameSweep(config.text, config).ok());  // a study resumes under its text
  EXPECT_EQ(sampler_of(base + "search: {model: tpe, startup_trials: 8}\n"), RandomSampler::kSobol);
  EXPECT_EQ(sampler_of(base + "search: {sampler: random}\n"), RandomSampler::kIndependent);
  EXPECT_EQ(sampler_of(base + "search: {model: gp}\n"), RandomSampler::kIndependent);
  EXPECT_EQ(sampler_of(base + "median_stopping: {min_trials: 3}\n"), RandomSampler::kIndependent);
  std::string hyperband = base;
  hyperband.replace(hyperband.find("  metric:"), 0,
                    "  early_terminate: {type: hyperband, min_iter: 1}\n");
  EXPECT_EQ(sampler_of(hyperband), RandomSampler::kIndependent);
  std::string random = base;
  random.replace(random.find("method: bayes"), 13, "method: random");
  EXPECT_EQ(sampler_of(random), RandomSampler::kIndependent);
}

TEST(ConfigTest, EarlyTerminateWithMaxIterAndS) {
  // W&B's example: max_iter 27, s 2 (eta defaults to 3) gives rungs at 27/9 = 3 and 27/3 = 9.
  const std::string text = R"(task: synthetic
epochs: 27
sweep:
  method: random
  run_cap: 4
  early_terminate: {type: hyperband, max_iter: 27, s: 2}
  metric: {name: val_loss}
  parameters:
    lr: {values: [0.1]}
)";
  SweepConfig config;
  ASSERT_TRUE(Parse(text, &config).ok()) << Parse(text, &config).message();
  const HyperbandSpec& hyperband = config.sweep.early_terminate;
  EXPECT_TRUE(hyperband.enabled);
  EXPECT_FALSE(hyperband.min_iter.has_value());
  EXPECT_EQ(hyperband.max_iter, 27);
  EXPECT_EQ(hyperband.s, 2);
  EXPECT_EQ(hyperband.eta, 3);
  EXPECT_TRUE(hyperband.strict);  // W&B's schema default
  SweepConfig lenient;
  const std::string with_strict =
      std::string(text).replace(text.find("s: 2}"), 5, "s: 2, strict: false}");
  ASSERT_TRUE(Parse(with_strict, &lenient).ok()) << Parse(with_strict, &lenient).message();
  EXPECT_FALSE(lenient.sweep.early_terminate.strict);
  // It changes which trials stop, so a study cannot resume under the other setting.
  EXPECT_FALSE(CheckSameSweep(text, lenient).ok());
}

TEST(ConfigTest, DdpKeysAreReadDefaultToPytorchDdpAndMayChangeOnResume) {
  const std::string base =
      "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric: {name: val_loss}\n"
      "  parameters:\n    lr: {values: [0.1]}\n";
  SweepConfig plain;
  ASSERT_TRUE(Parse(base, &plain).ok());
  EXPECT_DOUBLE_EQ(plain.ddp.bucket_mb, 25.0);
  EXPECT_DOUBLE_EQ(plain.ddp.first_bucket_mb, 1.0);
  EXPECT_TRUE(plain.ddp.overlap);
  EXPECT_FALSE(plain.ddp.compression.has_value());
  SweepConfig tuned;
  const Status status = Parse(
      base + "ddp: {bucket_mb: 4, first_bucket_mb: 0.25, overlap: false, compression: fp16}\n",
      &tuned);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_DOUBLE_EQ(tuned.ddp.bucket_mb, 4.0);
  EXPECT_DOUBLE_EQ(tuned.ddp.first_bucket_mb, 0.25);
  EXPECT_FALSE(tuned.ddp.overlap);
  EXPECT_EQ(tuned.ddp.compression, ReducedFloat::kFloat16);
  for (const auto& [name, expected] :
       {std::pair<std::string, std::optional<ReducedFloat>>{"bf16", ReducedFloat::kBFloat16},
        {"none", std::nullopt}}) {
    SweepConfig named;
    ASSERT_TRUE(Parse(base + "ddp: {compression: " + name + "}\n", &named).ok()) << name;
    EXPECT_EQ(named.ddp.compression, expected) << name;
  }
  // Bucketing and overlap change only the order floats are summed in, compression the rounding
  // of the sums, so a study may resume with other values.
  EXPECT_TRUE(CheckSameSweep(base, tuned).ok()) << CheckSameSweep(base, tuned).message();
  EXPECT_TRUE(CheckSameSweep(tuned.text, plain).ok());
}

TEST(ConfigTest, SearchAndStoppingDefaultsWhenAbsent) {
  SweepConfig config;
  ASSERT_TRUE(Parse(kFullConfig, &config).ok());
  EXPECT_FALSE(config.sweep.metric.target.has_value());
  EXPECT_FALSE(config.sweep.early_terminate.enabled);
  EXPECT_EQ(config.search.model, BayesModel::kTpe);
  EXPECT_EQ(config.search.startup_trials, 10);
  EXPECT_EQ(config.search.candidates, 24);
  EXPECT_EQ(config.search.sampler, RandomSampler::kIndependent);
  EXPECT_FALSE(config.median_stopping.enabled);
  EXPECT_FALSE(config.budget.time_budget_s.has_value());
  EXPECT_FALSE(config.budget.max_failed_trials.has_value());
  EXPECT_EQ(config.budget.trial_retries, 0);
  EXPECT_EQ(config.checkpoint.interval, 1);
  EXPECT_DOUBLE_EQ(config.checkpoint.grace_period_s, 60.0);
}

TEST(ConfigTest, EveryBayesModelParsesByItsNameAndIsDescribed) {
  const std::string text = std::string(kFullConfig) +
                           "  early_terminate: {type: hyperband, min_iter: 1}\n"
                           "search: {model: MODEL}\n";
  std::string bayes = text;
  bayes.replace(bayes.find("method: random"), 14, "method: bayes");
  for (const BayesModel model : kBayesModels) {
    std::string with_model = bayes;
    with_model.replace(with_model.find("MODEL"), 5, BayesModelName(model));
    SweepConfig config;
    const Status status = Parse(with_model, &config);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(config.search.model, model);
    const std::string stopping = PredictsCurves(model) ? ", curve scheduler" : ", ASHA stopping";
    EXPECT_EQ(DescribeSearchAndStopping(config),
              std::string("bayes search (") + BayesModelName(model) + ")" + stopping);
  }
  std::string random = text;
  random.replace(random.find("MODEL"), 5, "curves");
  SweepConfig config;
  ASSERT_TRUE(Parse(random, &config).ok());
  EXPECT_EQ(DescribeSearchAndStopping(config), "random search, curve scheduler");
  ASSERT_TRUE(Parse(kFullConfig, &config).ok());
  EXPECT_EQ(DescribeSearchAndStopping(config), "random search");
}

TEST(ConfigTest, EmptyMedianStoppingEnablesItsDefaultsAndSobolSuitsRandom) {
  const std::string text = R"(task: synthetic
epochs: 2
sweep:
  method: random
  run_cap: 4
  metric: {name: val_loss}
  parameters:
    lr: {min: 0.001, max: 0.1}
search:
  sampler: sobol
median_stopping: {}
time_budget_s: 90
)";
  SweepConfig config;
  ASSERT_TRUE(Parse(text, &config).ok()) << Parse(text, &config).message();
  EXPECT_EQ(config.search.sampler, RandomSampler::kSobol);
  EXPECT_TRUE(config.median_stopping.enabled);
  EXPECT_EQ(config.median_stopping.min_trials, MedianStoppingSpec().min_trials);
  EXPECT_EQ(config.median_stopping.start_step, MedianStoppingSpec().start_step);
  EXPECT_DOUBLE_EQ(config.budget.time_budget_s.value_or(0.0), 90.0);
}

TEST(ConfigTest, GridAndBayesTakeTheDefaultRandomSampler) {
  for (const char* method : {"grid", "bayes"}) {
    const std::string text = std::string("task: synthetic\nsweep:\n  method: ") + method +
                             "\n  run_cap: 4\n  metric: {name: val_loss}\n  parameters:\n"
                             "    lr: {values: [0.1]}\nsearch: {sampler: random}\n";
    SweepConfig config;
    const Status status = Parse(text, &config);
    EXPECT_TRUE(status.ok()) << method << ": " << status.message();
    EXPECT_EQ(config.search.sampler, RandomSampler::kIndependent);
  }
}

struct BadConfig {
  const char* name;
  const char* text;
  const char* expected;  // a substring of the message, with the line and the key
};

// A minimal valid config; the cases below each break it in one way.
//   task: synthetic
//   sweep:
//     method: random
//     run_cap: 4
//     metric:
//       name: val_loss
//     parameters:
//       lr:
//         values: [0.1, 0.01]
const BadConfig kBadConfigs[] = {
    {"UnknownTopLevelKey",
     "task: synthetic\ncolour: blue\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: colour: unknown key"},
    {"UnknownSweepKey",
     "task: synthetic\nsweep:\n  method: random\n  bogus: 1\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:4: sweep.bogus: unknown key"},
    {"UnknownParameterKey",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n      step: 2\n",
     "test.yaml:10: sweep.parameters.lr.step: unknown key"},
    {"MinIsNotANumber",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min: abc\n      max: 0.1\n",
     "test.yaml:9: sweep.parameters.lr.min: must be a number, got 'abc'"},
    {"EpochsIsAFloat",
     "task: synthetic\nepochs: 1.5\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: epochs: must be an integer, got '1.5'"},
    {"MinIsEmpty",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min:\n      max: 0.1\n",
     "test.yaml:9: sweep.parameters.lr.min: must be a number, got nothing"},
    {"RunCapIsAList",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: [4]\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:4: sweep.run_cap: must be an integer, got a list"},
    {"TaskIsAList",
     "task: [synthetic]\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\nsynthetic: {features: 8}\n",
     "test.yaml:1: task: must be a string, got a list"},
    {"TaskIsEmpty",
     "task:\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:1: task: must be a string, got nothing"},
    {"RunCapNegative",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: -1\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:4: sweep.run_cap: must be >= 1, got -1"},
    {"MinGreaterThanMax",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min: 0.5\n      max: 0.1\n",
     "test.yaml:9: sweep.parameters.lr.min: must be less than max (min 0.5, max 0.1)"},
    {"LogUniformValuesMinZero",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      distribution: log_uniform_values\n      min: 0\n"
     "      max: 0.1\n",
     "test.yaml:10: sweep.parameters.lr.min: must be > 0 for log_uniform_values"},
    {"EmptyValues",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: []\n",
     "test.yaml:9: sweep.parameters.lr.values: must be a non-empty list"},
    {"GridOverAContinuousRange",
     "task: synthetic\nsweep:\n  method: grid\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min: 0.001\n      max: 0.1\n",
     "test.yaml:7: sweep.parameters.lr: grid search needs `values`"},
    {"GridWithProbabilities",
     "task: synthetic\nsweep:\n  method: grid\n  metric:\n    name: val_loss\n"
     "  parameters:\n    optimizer:\n      values: [sgd, adam]\n      probabilities: [0.5, 0.5]\n",
     "test.yaml:7: sweep.parameters.optimizer: grid search needs `values`"},
    {"RandomWithoutRunCap",
     "task: synthetic\nsweep:\n  method: random\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: sweep.run_cap: missing required key"},
    {"UnknownHyperparameter",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    colour:\n      values: [1, 2]\n",
     "test.yaml:8: sweep.parameters.colour: unknown hyperparameter for task synthetic "
     "(accepted: lr, batch_size, optimizer, momentum, weight_decay, warmup_ratio, dropout, width)"},
    {"UnknownMetric",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: accuracy\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:6: sweep.metric.name: unknown metric 'accuracy'; task synthetic reports "
     "train_loss, val_loss, val_accuracy, val_macro_f1, epoch_time_s"},
    {"BadGoal",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "    goal: lowest\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:7: sweep.metric.goal: must be minimize or maximize, got 'lowest'"},
    {"OptimizerNotAmongChoices",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    optimizer:\n      values:\n        - sgd\n        - rmsprop\n",
     "test.yaml:11: sweep.parameters.optimizer.values[1]: 'rmsprop' is not a valid optimizer "
     "(accepted: sgd, adam, adamw)"},
    {"FloatDistributionForBatchSize",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    batch_size:\n      distribution: uniform\n      min: 16\n      max: 256\n",
     "test.yaml:9: sweep.parameters.batch_size.distribution: batch_size takes integers"},
    {"FloatValuesForBatchSize",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    batch_size:\n      values: [32, 64.5]\n",
     "test.yaml:8: sweep.parameters.batch_size: batch_size takes integers (integer values or an "
     "int_uniform range with integer min and max), got float values"},
    {"NormalForLearningRate",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      distribution: normal\n      mu: 0.01\n      sigma: 0.001\n",
     "test.yaml:9: sweep.parameters.lr.distribution: normal can draw values in (-inf, inf), not "
     "all inside lr's valid range (0, inf)"},
    {"UniformFromZeroForLearningRate",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min: 0.0\n      max: 0.1\n",
     "test.yaml:9: sweep.parameters.lr.min: uniform can draw values in [0, 0.1], not all inside "
     "lr's valid range (0, inf)"},
    {"DropoutMaxOne",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    dropout:\n      min: 0.0\n      max: 1.0\n",
     "test.yaml:10: sweep.parameters.dropout.max: uniform can draw values in [0, 1], not all "
     "inside dropout's valid range [0, 1)"},
    {"MomentumValueOutOfRange",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    momentum:\n      value: 1.5\n",
     "test.yaml:9: sweep.parameters.momentum.value: 1.5 is outside momentum's valid range [0, 1)"},
    {"BayesWithoutRunCap",
     "task: synthetic\nsweep:\n  method: bayes\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: sweep.run_cap: missing required key (bayes search needs a cap on its number of "
     "trials)"},
    {"CustomMethodNotSupported",
     "task: synthetic\nsweep:\n  method: custom\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:3: sweep.method: method 'custom' is not supported yet (supported: grid, random, "
     "bayes)"},
    {"UnknownMethod",
     "task: synthetic\nsweep:\n  method: anneal\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:3: sweep.method: must be grid, random or bayes, got 'anneal'"},
    {"EarlyTerminateWithOneEpoch",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1\n  metric:\n    name: val_loss\n  parameters:\n"
     "    lr:\n      values: [0.1]\n",
     "test.yaml:7: sweep.early_terminate.min_iter: must be < epochs (min_iter 1, epochs 1): a rung "
     "at or past the last epoch can never stop anything"},
    {"MetricTargetNotANumber",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "    target: low\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:7: sweep.metric.target: must be a number, got 'low'"},
    {"MetricImputeNotSupported",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "    impute: worst\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:7: sweep.metric.impute: not supported yet"},
    {"MalformedYaml", "task: synthetic\nsweep:\n  method: random\n  parameters: [0.1, 0.2\n",
     "test.yaml:5: invalid YAML: "},
    {"TwoDocuments", "task: synthetic\n---\ntask: synthetic\n",
     "test.yaml:2: invalid YAML: a config holds one document; another one starts here"},
    {"NotAMapping", "- task\n- sweep\n",
     "test.yaml:1: (top level): the config must be a YAML mapping"},
    {"EpochsZero",
     "task: synthetic\nepochs: 0\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: epochs: must be >= 1, got 0"},
    {"RanksPerTrialZero",
     "task: synthetic\nranks_per_trial: 0\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: ranks_per_trial: must be >= 1, got 0"},
    {"TrialsPerGpuZero",
     "task: synthetic\ntrials_per_gpu: 0\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: trials_per_gpu: must be >= 1, got 0"},
    {"TrialsPerGpuWithSeveralRanksPerTrial",
     "task: synthetic\nranks_per_trial: 2\ntrials_per_gpu: 2\nsweep:\n  method: random\n"
     "  run_cap: 4\n  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:3: trials_per_gpu: trials_per_gpu > 1 places one-rank trial groups on a shared GPU "
     "and needs ranks_per_trial: 1, got ranks_per_trial 2"},
    {"NegativeSeed",
     "task: synthetic\nseed: -3\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: seed: must be >= 0, got -3"},
    {"ValidationSamplesTooMany",
     "task: fashion_mnist\nvalidation_samples: 60000\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: validation_samples: must be in [1, 59999], got 60000"},
    {"SyntheticOneClass",
     "task: synthetic\nsynthetic:\n  classes: 1\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:3: synthetic.classes: must be >= 2, got 1"},
    {"ProbabilitiesDoNotSumToOne",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    optimizer:\n      values: [sgd, adam]\n      probabilities: [0.5, 0.4]\n",
     "test.yaml:10: sweep.parameters.optimizer.probabilities: must sum to 1, they sum to 0.9"},
    {"ProbabilitiesCountDiffers",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    optimizer:\n      values: [sgd, adam]\n      probabilities: [1.0]\n",
     "test.yaml:10: sweep.parameters.optimizer.probabilities: must give one probability per value "
     "(2 values, 1 probabilities)"},
    {"QNotPositive",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      distribution: q_uniform\n      min: 0.1\n      max: 1\n"
     "      q: 0\n",
     "test.yaml:12: sweep.parameters.lr.q: must be > 0, got 0"},
    {"NoMultipleOfQInRange",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      distribution: q_uniform\n      min: 0.01\n      max: 0.09\n"
     "      q: 0.1\n",
     "test.yaml:12: sweep.parameters.lr.q: no multiple of q=0.1 lies in [0.01, 0.09]"},
    {"NestedParameters",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    model:\n      parameters:\n        width:\n          values: [8]\n",
     "test.yaml:9: sweep.parameters.model.parameters: not supported yet"},
    {"MissingTask",
     "sweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n  parameters:\n"
     "    lr:\n      values: [0.1]\n",
     "test.yaml:1: task: missing required key"},
    {"UnknownTask",
     "task: cifar10\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:1: task: must be one of fashion_mnist, synthetic, text_classification, "
     "torchscript, "
     "got 'cifar10'"},
    {"MissingSweep", "task: synthetic\nepochs: 2\n", "test.yaml:1: sweep: missing required key"},
    {"MissingMetricName",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    goal: minimize\n"
     "  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:5: sweep.metric.name: missing required key"},
    {"MissingParameters",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n",
     "test.yaml:2: sweep.parameters: missing required key"},
    {"NoParameters",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters: {}\n",
     "test.yaml:7: sweep.parameters: must list at least one parameter"},
    {"UnknownDistribution",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      distribution: gaussian\n",
     "test.yaml:9: sweep.parameters.lr.distribution: unknown distribution 'gaussian'"},
    {"KeyNotValidForDistribution",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      distribution: log_normal\n      min: 0.1\n",
     "test.yaml:10: sweep.parameters.lr.min: not valid with distribution log_normal (it takes: "
     "mu, sigma)"},
    {"MissingMaxForRange",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min: 0.1\n",
     "test.yaml:8: sweep.parameters.lr.max: missing required key"},
    {"FloatMinForExplicitIntUniform",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    width:\n      distribution: int_uniform\n      min: 1.5\n      max: 8\n",
     "test.yaml:10: sweep.parameters.width.min: must be an integer for int_uniform"},
    {"StringValuesForNumericHyperparameter",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [fast, 0.1]\n",
     "test.yaml:8: sweep.parameters.lr: lr takes numbers, got string values"},
    {"NumbersForStringHyperparameter",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    optimizer:\n      values: [1, 2]\n",
     "test.yaml:8: sweep.parameters.optimizer: optimizer takes one of sgd, adam, adamw, got int "
     "values"},
    {"ParameterIsNotAMapping",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr: 0.1\n",
     "test.yaml:8: sweep.parameters.lr: must be a mapping"},
    {"DuplicateKey",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  run_cap: 5\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:5: sweep.run_cap: duplicate key"},
    {"NegativeSigma",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    weight_decay:\n      distribution: log_normal\n      sigma: -1\n",
     "test.yaml:10: sweep.parameters.weight_decay.sigma: must be >= 0"},
    {"BetaShapeZero",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    dropout:\n      distribution: beta\n      a: 0\n",
     "test.yaml:10: sweep.parameters.dropout.a: must be > 0, got 0"},
    {"BatchSizeIntRangeBelowOne",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    batch_size:\n      min: 0\n      max: 64\n",
     "test.yaml:9: sweep.parameters.batch_size.min: int_uniform can draw values in [0, 64], not "
     "all inside batch_size's valid range [1, 65536]"},
    {"EpochsOutOfRange",
     "task: synthetic\nepochs: 99999999999999999999\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n",
     "test.yaml:2: epochs: '99999999999999999999' is out of range for a 64-bit integer"},
    {"NumberUnderflows",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      min: 1e-400\n      max: 0.1\n",
     "test.yaml:9: sweep.parameters.lr.min: '1e-400' is out of range for a 64-bit float"},
    {"NonFiniteValue",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1, .inf]\n",
     "test.yaml:9: sweep.parameters.lr.values[1]: must be a finite number, got '.inf'"},
    {"EarlyTerminateTypeNotHyperband",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: median\n    min_iter: 1\n",
     "test.yaml:12: sweep.early_terminate.type: must be hyperband, got 'median'"},
    {"EarlyTerminateMissingType",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    min_iter: 1\n",
     "test.yaml:11: sweep.early_terminate.type: missing required key (hyperband)"},
    {"EarlyTerminateEtaOne",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1\n    eta: 1\n",
     "test.yaml:14: sweep.early_terminate.eta: must be >= 2, got 1"},
    {"EarlyTerminateEtaFloat",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1\n    eta: 2.5\n",
     "test.yaml:14: sweep.early_terminate.eta: must be an integer, got '2.5'"},
    {"EarlyTerminateMinIterAtEpochs",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 9\n",
     "test.yaml:13: sweep.early_terminate.min_iter: must be < epochs (min_iter 9, epochs 9): "
     "a rung at or past the last epoch can never stop anything"},
    {"EarlyTerminateMinIterZero",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 0\n",
     "test.yaml:13: sweep.early_terminate.min_iter: must be >= 1, got 0"},
    {"EarlyTerminateMinIterFloat",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1.5\n",
     "test.yaml:13: sweep.early_terminate.min_iter: must be an integer, got '1.5'"},
    {"EarlyTerminateMaxIterPastEpochs",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    max_iter: 10\n    s: 2\n",
     "test.yaml:13: sweep.early_terminate.max_iter: must be <= epochs (max_iter 10, epochs 9)"},
    {"EarlyTerminateFirstRungBelowOne",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    max_iter: 8\n    s: 2\n",
     "test.yaml:14: sweep.early_terminate.s: max_iter / eta^s must be >= 1 (max_iter 8, eta 3, "
     "s 2): its first rung would be epoch 0"},
    {"EarlyTerminateMaxIterWithoutS",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    max_iter: 9\n",
     "test.yaml:11: sweep.early_terminate.s: missing required key (max_iter needs s, the "
     "number of rungs below it)"},
    {"EarlyTerminateSWithoutMaxIter",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    s: 2\n",
     "test.yaml:13: sweep.early_terminate.s: is only used with max_iter"},
    {"EarlyTerminateNoIterations",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    eta: 2\n",
     "test.yaml:11: sweep.early_terminate: needs min_iter, or max_iter and s"},
    {"EarlyTerminateMinIterAndMaxIter",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1\n    max_iter: 9\n    s: 2\n",
     "test.yaml:14: sweep.early_terminate.max_iter: give either min_iter, or max_iter and s, "
     "not both"},
    {"EarlyTerminateUnknownKey",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    bands: [1, 3]\n",
     "test.yaml:13: sweep.early_terminate.bands: unknown key (accepted keys: type, min_iter, "
     "max_iter, s, eta, strict)"},
    {"AshaPromotionNotBoolean",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1\nasha:\n  promotion: sometimes\n",
     "test.yaml:15: asha.promotion: must be true or false"},
    {"AshaWithoutEarlyTerminate",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\nasha:\n"
     "  promotion: true\n",
     "test.yaml:11: asha: needs sweep.early_terminate (type hyperband)"},
    {"EarlyTerminateStrictNotBoolean",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n"
     "    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n  early_terminate:\n"
     "    type: hyperband\n    min_iter: 1\n    strict: sometimes\n",
     "test.yaml:14: sweep.early_terminate.strict: must be true or false"},
    {"EarlyTerminateNotAMapping",
     "task: synthetic\nepochs: 9\nsweep:\n  method: random\n  run_cap: 4\n"
     "  early_terminate: hyperband\n  metric:\n    name: val_loss\n  parameters:\n    lr:\n"
     "      values: [0.1]\n",
     "test.yaml:6: sweep.early_terminate: must be a mapping"},
    {"SearchUnknownKey",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  model: tpe\n  kernel: rbf\n",
     "test.yaml:13: search.kernel: unknown key (accepted keys: model, startup_trials, "
     "candidates, sampler)"},
    {"SearchModelWithRandom",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  model: tpe\n",
     "test.yaml:12: search.model: only used by method bayes (this sweep's method is random; "
     "method random takes model curves alone)"},
    {"CurvesWithRandomWithoutEarlyTerminate",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  model: curves\n",
     "test.yaml:12: search.model: with method random, curves only decides which trials go on; it "
     "needs sweep.early_terminate (type hyperband)"},
    {"StartupTrialsWithRandomWithoutCurves",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  startup_trials: 4\n",
     "test.yaml:12: search.startup_trials: only used by method bayes (this sweep's method is "
     "random)"},
    {"MedianStoppingBesideRandomCurves",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  early_terminate: {type: hyperband, min_iter: 1}\n"
     "  parameters:\n    lr:\n      values: [0.1]\nsearch: {model: curves}\n"
     "median_stopping: {min_trials: 2}\n",
     "test.yaml:13: median_stopping: search.model curves decides which trials go on from its "
     "predictions; remove median_stopping or choose another model"},
    {"SearchCandidatesWithGp",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  model: gp\n  candidates: 8\n",
     "test.yaml:13: search.candidates: only used by model tpe (model gp scores its own candidate "
     "set)"},
    {"SearchCandidatesWithGrid",
     "task: synthetic\nepochs: 3\nsweep:\n  method: grid\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  candidates: 8\n",
     "test.yaml:11: search.candidates: only used by method bayes (this sweep's method is grid)"},
    {"SearchStartupTrialsZero",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  startup_trials: 0\n",
     "test.yaml:12: search.startup_trials: must be >= 1, got 0"},
    {"SearchCandidatesFloat",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  candidates: 2.5\n",
     "test.yaml:12: search.candidates: must be an integer, got '2.5'"},
    {"SearchUnknownModel",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  model: forest\n",
     "test.yaml:12: search.model: must be tpe, tpe_independent, gp, curves or curves_tpe, got "
     "'forest'"},
    {"SearchSobolWithGrid",
     "task: synthetic\nepochs: 3\nsweep:\n  method: grid\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  sampler: sobol\n",
     "test.yaml:11: search.sampler: sobol is only used by methods random and bayes (this "
     "sweep's method is grid)"},
    {"SearchUnknownSampler",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search:\n  sampler: halton\n",
     "test.yaml:12: search.sampler: must be random or sobol, got 'halton'"},
    {"SearchNotAMapping",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "search: tpe\n",
     "test.yaml:11: search: must be a mapping"},
    {"MedianStoppingStartStepAtEpochs",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "median_stopping:\n  start_step: 3\n",
     "test.yaml:12: median_stopping.start_step: must be < epochs (start_step 3, epochs 3): the "
     "rule never stops a trial at its last epoch"},
    {"MedianStoppingBesideTheCurveModel",
     "task: synthetic\nepochs: 3\nsweep:\n  method: bayes\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  early_terminate: {type: hyperband, min_iter: 1}\n"
     "  parameters:\n    lr:\n      values: [0.1]\nsearch: {model: curves}\n"
     "median_stopping: {min_trials: 2}\n",
     "test.yaml:13: median_stopping: search.model curves decides which trials go on from its "
     "predictions; remove median_stopping or choose another model"},
    {"MedianStoppingMinTrialsZero",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "median_stopping:\n  min_trials: 0\n",
     "test.yaml:12: median_stopping.min_trials: must be >= 1, got 0"},
    {"MedianStoppingUnknownKey",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "median_stopping:\n  min_steps: 2\n",
     "test.yaml:12: median_stopping.min_steps: unknown key (accepted keys: min_trials, "
     "start_step)"},
    {"MedianStoppingNotAMapping",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "median_stopping: true\n",
     "test.yaml:11: median_stopping: must be a mapping"},
    {"MedianStoppingWithOneEpoch",
     "task: synthetic\nsweep:\n  method: random\n  run_cap: 4\n  metric:\n    name: val_loss\n"
     "  parameters:\n    lr:\n      values: [0.1]\nmedian_stopping: {}\n",
     "test.yaml:10: median_stopping.start_step: must be < epochs (start_step 1, the default, "
     "epochs 1)"},
    {"TimeBudgetZero",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "time_budget_s: 0\n",
     "test.yaml:11: time_budget_s: must be > 0, got 0"},
    {"TimeBudgetNegative",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "time_budget_s: -2.5\n",
     "test.yaml:11: time_budget_s: must be > 0, got -2.5"},
    {"TimeBudgetNotANumber",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "time_budget_s: 1h\n",
     "test.yaml:11: time_budget_s: must be a number, got '1h'"},
    {"TimeBudgetInfinite",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "time_budget_s: .inf\n",
     "test.yaml:11: time_budget_s: must be a finite number, got '.inf'"},
    {"PeerTimeoutZero",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "peer_timeout_s: 0\n",
     "test.yaml:11: peer_timeout_s: must be > 0, got 0"},
    {"MaxFailedTrialsNegative",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "max_failed_trials: -1\n",
     "test.yaml:11: max_failed_trials: must be >= 0, got -1"},
    {"MaxFailedTrialsFloat",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "max_failed_trials: 2.0\n",
     "test.yaml:11: max_failed_trials: must be an integer, got '2.0'"},
    {"TrialRetriesNegative",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "trial_retries: -1\n",
     "test.yaml:11: trial_retries: must be in [0, 100], got -1"},
    {"CheckpointUnknownKey",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "checkpoint:\n  every: 2\n",
     "test.yaml:12: checkpoint.every: unknown key"},
    {"CheckpointNegativeInterval",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "checkpoint:\n  interval: -1\n",
     "test.yaml:12: checkpoint.interval: must be >= 0, got -1"},
    {"CheckpointZeroGrace",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "checkpoint:\n  grace_period_s: 0\n",
     "test.yaml:12: checkpoint.grace_period_s: must be > 0, got 0"},
    {"DdpUnknownKey",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "ddp:\n  bucket_size: 2\n",
     "test.yaml:12: ddp.bucket_size: unknown key"},
    {"DdpZeroBucket",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "ddp:\n  bucket_mb: 0\n",
     "test.yaml:12: ddp.bucket_mb: must be > 0, got 0"},
    {"DdpNegativeFirstBucket",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "ddp:\n  first_bucket_mb: -1\n",
     "test.yaml:12: ddp.first_bucket_mb: must be > 0, got -1"},
    {"DdpOverlapNotBoolean",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "ddp:\n  overlap: sometimes\n",
     "test.yaml:12: ddp.overlap: must be true or false"},
    {"DdpUnknownCompression",
     "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 4\n"
     "  metric:\n    name: val_loss\n  parameters:\n    lr:\n      values: [0.1]\n"
     "ddp:\n  compression: int8\n",
     "test.yaml:12: ddp.compression: must be one of none, bf16, fp16, got 'int8'"},
};

// Names the case in test listings instead of dumping its bytes.
void PrintTo(const BadConfig& bad_config, std::ostream* out) { *out << bad_config.name; }

class BadConfigTest : public testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, IsBadInputNamingLineAndKey) {
  SweepConfig config;
  const Status status = Parse(GetParam().text, &config);
  ASSERT_FALSE(status.ok()) << "accepted:\n" << GetParam().text;
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(GetParam().expected), std::string::npos)
      << "message:  " << status.message() << "\nexpected: " << GetParam().expected;
}

INSTANTIATE_TEST_SUITE_P(Table, BadConfigTest, testing::ValuesIn(kBadConfigs),
                         [](const testing::TestParamInfo<BadConfig>& info) {
                           return std::string(info.param.name);
                         });

TEST(ConfigTest, LoadConfigFileKeepsTextAndPath) {
  const std::string path = testing::TempDir() + "hpo_test_config.yaml";
  {
    std::ofstream file(path);
    file << kFullConfig;
  }
  SweepConfig config;
  const Status status = LoadConfigFile(path, &config);
  std::remove(path.c_str());
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(config.path, path);
  EXPECT_EQ(config.text, kFullConfig);
  EXPECT_EQ(config.sweep.parameters.size(), 7u);
}

TEST(ConfigTest, LoadConfigFileReportsAMissingFile) {
  SweepConfig config;
  const Status status = LoadConfigFile("/nonexistent/sweep.yaml", &config);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "/nonexistent/sweep.yaml: cannot read config: No such file or directory");
}

TEST(ConfigTest, ErrorsNameTheFileAsGiven) {
  SweepConfig config;
  const Status status = ParseConfig("task: synthetic\n", "configs/mine.yaml", &config);
  EXPECT_EQ(status.message(),
            "configs/mine.yaml:1: sweep: missing required key "
            "(a Weights & Biases sweep configuration)");
}

std::vector<std::string> ShippedConfigFiles() {
  const std::string folder = HPO_SOURCE_DIR "/configs";
  std::vector<std::string> files;
  if (DIR* directory = opendir(folder.c_str())) {
    while (const dirent* entry = readdir(directory)) {
      const std::string name = entry->d_name;
      const size_t dot = name.rfind('.');
      if (dot != std::string::npos && (name.substr(dot) == ".yaml" || name.substr(dot) == ".yml")) {
        files.push_back(folder + "/" + name);
      }
    }
    closedir(directory);
  }
  return files;
}

// The shipped configs are run from the checkout's root, where their data paths point.
// data/20newsgroups is fetched by install-deps.sh, which only warns when the download fails: a
// config reading it is checked only where it is there.
TEST(ConfigTest, EveryShippedConfigParses) {
  const std::vector<std::string> files = ShippedConfigFiles();
  if (files.empty()) GTEST_SKIP() << "no *.yaml under " HPO_SOURCE_DIR "/configs yet";
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(HPO_SOURCE_DIR);
  const bool corpus_fetched = std::filesystem::exists("data/20newsgroups/test.tsv");
  for (const std::string& file : files) {
    SweepConfig config;
    const Status status = LoadConfigFile(file, &config);
    if (!corpus_fetched && status.message().find("data/20newsgroups/") != std::string::npos) {
      std::printf("not checked without the fetched corpus: %s\n", status.message().c_str());
      continue;
    }
    EXPECT_TRUE(status.ok()) << status.message();
  }
  std::filesystem::current_path(previous);
}

}  // namespace
}  // namespace hpo
