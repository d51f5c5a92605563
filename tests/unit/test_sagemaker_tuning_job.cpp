// A SageMaker tuning job as `hpo sweep --config` reads it (platforms/sagemaker/tuning_job.hpp): a
// script-mode PyTorch tuning job translates key by key, the AWS-only keys are listed for the
// warning, and each spec hpo cannot honour is one BadInput naming the file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {
namespace {

const std::string kDataDir = HPO_SOURCE_DIR "/tests/unit/data/sagemaker/";
const std::string kSpec = kDataDir + "tuning-job.json";

std::string Example() {
  std::ifstream file(kSpec);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Status Parse(const std::string& text, SweepConfig* config) {
  return ParseConfig(text, kSpec, BuiltinTaskCatalog(), BareSweepSettings(), config);
}

const ParameterSpec* Parameter(const SweepConfig& config, const std::string& name) {
  for (const ParameterSpec& spec : config.sweep.parameters) {
    if (spec.name == name) return &spec;
  }
  ADD_FAILURE() << "no parameter " << name;
  return nullptr;
}

bool Listed(const SweepConfig& config, const std::string& piece) {
  return std::any_of(config.ignored_keys.begin(), config.ignored_keys.end(),
                     [&piece](const std::string& key) { return key.find(piece) == 0; });
}

TEST(SageMakerTuningJob, AScriptModeTuningJobReadsKeyByKey) {
  SweepConfig config;
  const Status parsed = Parse(Example(), &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(config.sweep.method, SearchMethod::kBayes);
  EXPECT_EQ(config.search.model, BayesModel::kGp);  // SageMaker's Bayesian strategy is a GP
  EXPECT_EQ(config.sweep.metric.name, "validation:accuracy");
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMaximize);
  EXPECT_EQ(config.metric_names,
            (std::vector<std::string>{"validation:accuracy", "validation:loss"}));
  ASSERT_EQ(config.command.metric_definitions.size(), 2u);
  EXPECT_EQ(config.command.metric_definitions[1].name, "validation:loss");
  EXPECT_EQ(config.command.metric_definitions[1].regex, "Test set: Average loss: ([0-9\\.]+)");
  EXPECT_EQ(config.sweep.run_cap, 6);
  EXPECT_EQ(config.execution.seed, 7u);
  EXPECT_EQ(config.command.trial_timeout_s, std::optional<double>(3600.0));
  EXPECT_EQ(Parameter(config, "lr")->distribution, Distribution::kLogUniformValues);
  EXPECT_EQ(Parameter(config, "hidden-units")->distribution, Distribution::kIntUniform);
  EXPECT_EQ(Parameter(config, "hidden-units")->max, 128);
  EXPECT_EQ(Parameter(config, "optimizer")->values.size(), 2u);
  EXPECT_EQ(Parameter(config, "epochs")->distribution, Distribution::kConstant);
  EXPECT_EQ(config.command.program, kDataDir + "train.py");
  EXPECT_EQ(config.command.command, (std::vector<std::string>{"${env}", "${interpreter}",
                                                              "${program}", "${args_no_equals}"}));
  EXPECT_FALSE(config.median_stopping.enabled);  // TrainingJobEarlyStoppingType Off
  EXPECT_TRUE(Listed(config, "TrainingJobDefinition.RoleArn (line 43)"));
  // The S3 channel from its copy beside the spec, laid out as in SageMaker's container.
  ASSERT_TRUE(config.command.sagemaker.has_value());
  EXPECT_EQ(config.command.sagemaker->job_name, "pytorch-mnist-tuning");
  EXPECT_EQ(config.command.sagemaker->channels,
            (std::vector<std::pair<std::string, std::string>>{
                {"training", kDataDir + "input/data/training"}}));
  EXPECT_TRUE(Listed(config, "TrainingJobDefinition.AlgorithmSpecification.TrainingImage"));
  EXPECT_TRUE(Listed(config,
                     "HyperParameterTuningJobConfig.ResourceLimits."
                     "MaxParallelTrainingJobs (line 11)"));
  SweepConfig again;
  const Status reparsed = Parse(config.text, &again);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << config.text;
  EXPECT_EQ(again.command.program, config.command.program);
}

TEST(SageMakerTuningJob, HyperbandEarlyStoppingAndInstances) {
  std::string text = Replace(Example(), "\"Strategy\": \"Bayesian\",",
                             "\"Strategy\": \"Hyperband\",\n    \"StrategyConfig\": "
                             "{\"HyperbandStrategyConfig\": {\"MinResource\": 1, "
                             "\"MaxResource\": 9}},");
  text = Replace(text, "\"InstanceCount\": 1", "\"InstanceCount\": 2");
  text = Replace(text, "\"TrainingJobEarlyStoppingType\": \"Off\"",
                 "\"TrainingJobEarlyStoppingType\": \"Auto\"");
  SweepConfig config;
  const Status parsed = Parse(text, &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(config.sweep.method, SearchMethod::kRandom);
  EXPECT_TRUE(config.sweep.early_terminate.enabled);
  EXPECT_EQ(config.sweep.early_terminate.min_iter, 1);
  EXPECT_EQ(config.sweep.early_terminate.eta, 3);
  EXPECT_EQ(config.execution.epochs, 9);
  EXPECT_EQ(config.execution.ranks_per_trial, 2);
  EXPECT_TRUE(config.median_stopping.enabled);
}

struct BadSpec {
  const char* name;
  const char* from;
  const char* to;
  const char* error;
};

class SageMakerBadSpec : public testing::TestWithParam<BadSpec> {};

TEST_P(SageMakerBadSpec, IsOneLineNamingFileLineAndKey) {
  const BadSpec& bad = GetParam();
  SweepConfig config;
  const Status status = Parse(Replace(Example(), bad.from, bad.to), &config);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message().find(kSpec + bad.error), 0u) << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, SageMakerBadSpec,
    testing::Values(
        BadSpec{"NoScript", "\"sagemaker_program\": \"\\\"train.py\\\"\",", "",
                ":28: TrainingJobDefinition.StaticHyperParameters.sagemaker_program: missing"},
        BadSpec{"ReverseLogarithmic", "\"ScalingType\": \"Logarithmic\"",
                "\"ScalingType\": \"ReverseLogarithmic\"",
                ":15: HyperParameterTuningJobConfig.ParameterRanges.ContinuousParameterRanges[0]."
                "ScalingType: 'ReverseLogarithmic' has no hpo equivalent"},
        BadSpec{"WarmStart", "\"HyperParameterTuningJobName\"",
                "\"WarmStartConfig\": {\"WarmStartType\": \"TransferLearning\"},\n"
                "  \"HyperParameterTuningJobName\"",
                ":2: WarmStartConfig: a warm start"},
        BadSpec{"UnknownStrategy", "\"Strategy\": \"Bayesian\"", "\"Strategy\": \"Evolution\"",
                ":4: HyperParameterTuningJobConfig.Strategy: must be Bayesian, Random, Grid or "
                "Hyperband"},
        BadSpec{"AutoParameters", "\"CategoricalParameterRanges\"",
                "\"AutoParameters\": [{\"Name\": \"x\", \"ValueHint\": \"0.1\"}],\n"
                "      \"CategoricalParameterRanges\"",
                ":20: HyperParameterTuningJobConfig.ParameterRanges.AutoParameters: hpo cannot "
                "choose ranges"},
        BadSpec{"NotAnInteger", "\"MinValue\": \"16\"", "\"MinValue\": \"sixteen\"",
                ":18: HyperParameterTuningJobConfig.ParameterRanges.IntegerParameterRanges[0]."
                "MinValue: must be an integer, got 'sixteen'"},
        // Found by the hpo config's parser after translation: named at the spec's own line.
        BadSpec{"MinAboveMax", "\"MinValue\": \"16\"", "\"MinValue\": \"256\"",
                ":18: HyperParameterTuningJobConfig.ParameterRanges.IntegerParameterRanges[0]."
                "MinValue (read as sweep.parameters.hidden-units.min): must be less than max"},
        BadSpec{"NoTrainingJobs", "\"MaxNumberOfTrainingJobs\": 6",
                "\"MaxNumberOfTrainingJobs\": 0",
                ":10: HyperParameterTuningJobConfig.ResourceLimits.MaxNumberOfTrainingJobs (read "
                "as run_cap): must be >= 1"},
        // A value of the wrong shape that the translator does not check itself ends as one
        // error at its line too (TranslateForeignSpec), not an uncaught yaml-cpp exception.
        BadSpec{"DataSourceIsText", "\"DataSource\": {",
                "\"DataSource\": \"s3://example-bucket/data\", \"ContentType\": {",
                ":47: this SageMaker tuning job has a value of the wrong shape here (operator[] "
                "call on a scalar (key: \"S3DataSource\"))"},
        BadSpec{"RegexWithoutGroup", "\"Regex\": \"Test set: Average loss: ([0-9\\\\.]+)\"",
                "\"Regex\": \"Test set\"",
                ":40: TrainingJobDefinition.AlgorithmSpecification.MetricDefinitions[1].Regex: "
                "'Test set' "
                "has no capture group"}),
    [](const testing::TestParamInfo<BadSpec>& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Platform, SageMakerBadSpec,
    testing::Values(
        BadSpec{"S3ChannelWithoutCopy", "\"ChannelName\": \"training\"",
                "\"ChannelName\": \"validation\"",
                ":46: TrainingJobDefinition.InputDataConfig[0].ChannelName: channel 'validation' "
                "is s3://example-bucket/pytorch-mnist/data, which hpo does not download: put a "
                "copy"},
        BadSpec{"ObjectiveWithoutDefinition", "\"Name\": \"validation:accuracy\", \"Regex\"",
                "\"Name\": \"validation:acc\", \"Regex\"",
                ":7: HyperParameterTuningJobConfig.HyperParameterTuningJobObjective.MetricName: "
                "'validation:accuracy' is not among "
                "TrainingJobDefinition.AlgorithmSpecification.MetricDefinitions (validation:acc, "
                "validation:loss)"},
        BadSpec{"InterpreterMissing", "\"sagemaker_program\": \"\\\"train.py\\\"\"",
                "\"sagemaker_program\": \"\\\"needs_missing_python.py\\\"\"",
                ":30: TrainingJobDefinition.StaticHyperParameters.sagemaker_program (read as "
                "interpreter): the interpreter '/opt/no-such-venv/bin/python'"}),
    [](const testing::TestParamInfo<BadSpec>& info) { return std::string(info.param.name); });

TEST(SageMakerTuningJob, EnvironmentValuesAreKeptAsWritten) {
  const std::string text =
      Replace(Example(), "\"StoppingCondition\"",
              "\"Environment\": {\"DATA_ROOT\": \"/fsx/reviews/train\", \"OPTS\": \"a=b c\"},\n"
              "    \"StoppingCondition\"");
  SweepConfig config;
  const Status parsed = Parse(text, &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(config.command.environment,
            (std::vector<std::pair<std::string, std::string>>{{"DATA_ROOT", "/fsx/reviews/train"},
                                                              {"OPTS", "a=b c"}}));
  SweepConfig again;  // the translated config, as every other rank and a resumed study read it
  const Status reparsed = Parse(config.text, &again);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << config.text;
  EXPECT_EQ(again.command.environment, config.command.environment);
}

}  // namespace
}  // namespace hpo
