// A Katib Experiment as `hpo sweep --config` reads it (platforms/katib/experiment.hpp): Katib's own
// examples translate key by key, the cluster-only keys are listed for the warning, and each spec
// hpo cannot honour is one BadInput naming the file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {
namespace {

const std::string kDataDir = HPO_SOURCE_DIR "/tests/unit/data/katib/";

using Environment = std::vector<std::pair<std::string, std::string>>;

// The example's text with its program path pointing at this test's own script.
std::string Example(const std::string& name) {
  std::ifstream file(kDataDir + name);
  std::stringstream text;
  text << file.rdbuf();
  std::string result = text.str();
  for (size_t at = result.find("PROGRAM"); at != std::string::npos;
       at = result.find("PROGRAM", at)) {
    result.replace(at, 7, "/opt/train.py");
  }
  return result;
}

// `text` with the first `from` replaced by `to`.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Status Parse(const std::string& text, SweepConfig* config) {
  return ParseConfig(text, "experiment.yaml", BuiltinTaskCatalog(), BareSweepSettings(), config);
}

const ParameterSpec& Parameter(const SweepConfig& config, const std::string& name) {
  const auto found = std::find_if(config.sweep.parameters.begin(), config.sweep.parameters.end(),
                                  [&name](const ParameterSpec& spec) { return spec.name == name; });
  EXPECT_NE(found, config.sweep.parameters.end()) << name;
  return *found;
}

bool Listed(const SweepConfig& config, const std::string& piece) {
  return std::any_of(config.ignored_keys.begin(), config.ignored_keys.end(),
                     [&piece](const std::string& key) { return key.find(piece) == 0; });
}

TEST(KatibExperiment, KatibsRandomExampleReadsKeyByKey) {
  SweepConfig config;
  const Status parsed = Parse(Example("random.yaml"), &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(config.path, "experiment.yaml");
  EXPECT_EQ(config.sweep.method, SearchMethod::kRandom);
  EXPECT_EQ(config.sweep.metric.name, "Validation-accuracy");
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMaximize);
  ASSERT_TRUE(config.sweep.metric.target.has_value());
  EXPECT_EQ(*config.sweep.metric.target, 0.99);
  EXPECT_EQ(config.metric_names,
            (std::vector<std::string>{"Validation-accuracy", "Validation-loss"}));
  EXPECT_EQ(config.sweep.run_cap, 6);
  EXPECT_EQ(config.execution.seed, 10u);
  EXPECT_EQ(config.budget.max_failed_trials, std::optional<int64_t>(3));
  EXPECT_EQ(Parameter(config, "lr").distribution, Distribution::kUniform);
  EXPECT_EQ(Parameter(config, "lr").min, 0.01);
  EXPECT_EQ(Parameter(config, "lr").max, 0.03);
  EXPECT_EQ(Parameter(config, "momentum").distribution, Distribution::kQUniform);
  EXPECT_EQ(Parameter(config, "momentum").q, 0.1);
  EXPECT_EQ(config.command.command,
            (std::vector<std::string>{"python3", "/opt/train.py", "--epochs=1", "--batch-size=16",
                                      "--lr=${param:lr}", "--momentum=${param:momentum}"}));
  EXPECT_EQ(config.execution.ranks_per_trial, 1);
  // What only places the work on a cluster is listed, with its line, for one warning.
  EXPECT_TRUE(Listed(config, "metadata.namespace (line 7)"));
  EXPECT_TRUE(Listed(config, "spec.parallelTrialCount (line 21)"));
  EXPECT_TRUE(Listed(config, "spec.trialTemplate.trialSpec (line 46)"));
  EXPECT_TRUE(Listed(config, "spec.objective (line 11): Katib scores a trial by its best report"));
  // The study keeps the hpo config it reads as, which every rank and --resume parse again.
  SweepConfig again;
  const Status reparsed = Parse(config.text, &again);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << config.text;
  EXPECT_EQ(again.command.command, config.command.command);
  EXPECT_TRUE(again.ignored_keys.empty());
}

TEST(KatibExperiment, TpeMedianStopAndAPyTorchJobTrial) {
  SweepConfig config;
  const Status parsed = Parse(Example("tpe-pytorchjob.yaml"), &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(config.sweep.method, SearchMethod::kBayes);
  EXPECT_EQ(config.search.model, BayesModel::kTpe);
  EXPECT_EQ(config.search.startup_trials, 5);
  EXPECT_EQ(config.search.candidates, 32);
  EXPECT_TRUE(Listed(config,
                     "spec.algorithm.algorithmSettings[2].value (line 22): setting "
                     "'gamma' has no hpo equivalent"));
  EXPECT_FALSE(Listed(config, "spec.objective ("));  // metricStrategies: latest, as hpo
  EXPECT_EQ(config.sweep.metric.goal, Goal::kMinimize);
  EXPECT_TRUE(config.median_stopping.enabled);
  EXPECT_EQ(config.median_stopping.min_trials, 2);
  EXPECT_EQ(config.median_stopping.start_step, 2);
  EXPECT_EQ(config.execution.ranks_per_trial, 2);  // Master + 1 Worker
  EXPECT_EQ(Parameter(config, "lr").distribution, Distribution::kLogUniformValues);
  const ParameterSpec& layers = Parameter(config, "num-layers");
  EXPECT_EQ(layers.values,
            (std::vector<ParamValue>{int64_t{2}, int64_t{4}, int64_t{6}, int64_t{8}}));
  EXPECT_EQ(Parameter(config, "optimizer").values,
            (std::vector<ParamValue>{std::string("sgd"), std::string("adam")}));
  EXPECT_EQ(Parameter(config, "batch-size").values,
            (std::vector<ParamValue>{int64_t{32}, int64_t{64}, int64_t{128}}));
  EXPECT_EQ(config.command.command,
            (std::vector<std::string>{
                "python3", "/opt/train.py", "--lr=${param:lr}", "--num-layers=${param:num-layers}",
                "--optimizer=${param:optimizer}", "--batch-size=${param:batch-size}"}));
  EXPECT_EQ(config.command.environment, (Environment{{"OMP_NUM_THREADS", "1"}}));
}

// random.yaml's command passes the metrics file's path to the program, as Katib's File collector
// examples (examples/v1beta1/metrics-collector) do, and `collector` is its metricsCollectorSpec.
std::string WithCollector(const std::string& collector,
                          const std::string& log_path = "/katib/mnist.log") {
  const std::string with_log =
      Replace(Example("random.yaml"), "\"--epochs=1\"", "\"--log-path=" + log_path + "\"");
  return Replace(with_log, "  parallelTrialCount: 3", collector + "  parallelTrialCount: 3");
}

// Katib's file-metrics-collector.yaml example's collector: TEXT (the default) with its filter.
const char kKatibFileCollector[] =
    "  metricsCollectorSpec:\n"
    "    source:\n"
    "      filter:\n"
    "        metricsFormat:\n"
    "          - \"{metricName: ([\\\\w|-]+), metricValue: ((-?\\\\d+)(\\\\.\\\\d+)?)}\"\n"
    "      fileSystemPath:\n"
    "        path: \"/katib/mnist.log\"\n"
    "        kind: File\n"
    "    collector:\n"
    "      kind: File\n";

TEST(KatibExperiment, FileCollectorWithKatibsFilterIsMetricsFile) {
  SweepConfig config;
  const Status parsed = Parse(WithCollector(kKatibFileCollector), &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  ASSERT_TRUE(config.command.metrics_file.has_value());
  EXPECT_EQ(config.command.metrics_file->path, "/katib/mnist.log");
  EXPECT_FALSE(config.command.metrics_file->json);  // Katib's default format: TEXT
  // RE2's literal braces, escaped for std::regex (ECMAScript).
  EXPECT_EQ(
      config.command.metrics_file->filters,
      std::vector<std::string>{R"(\{metricName: ([\w|-]+), metricValue: ((-?\d+)(\.\d+)?)\})"});
  EXPECT_NE(config.text.find("metrics_file:\n"
                             "  path: /katib/mnist.log\n"
                             "  format: TEXT\n"
                             "  filters:\n"
                             "    - \"\\\\{metricName: ([\\\\w|-]+), metricValue: "
                             "((-?\\\\d+)(\\\\.\\\\d+)?)\\\\}\"\n"),
            std::string::npos)
      << config.text;
  EXPECT_EQ(config.command.command[2], "--log-path=/katib/mnist.log");
  SweepConfig again;  // the study's copy parses as the same
  const Status reparsed = Parse(config.text, &again);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << config.text;
  EXPECT_EQ(again.command.metrics_file->filters, config.command.metrics_file->filters);
}

// Found by fuzz_config: a backreference number near 2^63 overflowed std::regex's counter (UBSan).
TEST(KatibExperiment, AHugeBackreferenceInAFilterIsBadInput) {
  const std::string collector =
      Replace(kKatibFileCollector, "(\\\\.\\\\d+)?)}", "(\\\\.\\\\9223372036854775808)?)}");
  SweepConfig config;
  const Status status = Parse(WithCollector(collector), &config);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("is not a regular expression: a repetition count or "
                                  "backreference is over 1000"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(status.message().find("experiment.yaml:"), 0u) << status.message();
}

TEST(KatibExperiment, FileCollectorJsonAndKatibsDefaults) {
  SweepConfig config;
  const Status parsed = Parse(WithCollector("  metricsCollectorSpec:\n"
                                            "    source:\n"
                                            "      fileSystemPath:\n"
                                            "        path: /katib/mnist.json\n"
                                            "        kind: File\n"
                                            "        format: JSON\n"
                                            "    collector:\n"
                                            "      kind: File\n",
                                            "/katib/mnist.json"),
                              &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  ASSERT_TRUE(config.command.metrics_file.has_value());
  EXPECT_EQ(config.command.metrics_file->path, "/katib/mnist.json");
  EXPECT_TRUE(config.command.metrics_file->json);
  EXPECT_TRUE(config.command.metrics_file->filters.empty());
  // kind File alone: Katib's webhook fills in /var/log/katib/metrics.log and TEXT.
  const Status defaults =
      Parse(WithCollector("  metricsCollectorSpec:\n    collector:\n      kind: File\n",
                          "/var/log/katib/metrics.log"),
            &config);
  ASSERT_TRUE(defaults.ok()) << defaults.message();
  EXPECT_EQ(config.command.metrics_file->path, "/var/log/katib/metrics.log");
  EXPECT_FALSE(config.command.metrics_file->json);
}

TEST(KatibExperiment, StdOutWithKatibsDefaultFilterIsStdOut) {
  SweepConfig config;
  const Status parsed =
      Parse(WithCollector("  metricsCollectorSpec:\n"
                          "    source:\n"
                          "      filter:\n"
                          "        metricsFormat:\n"
                          "          - '([\\w|-]+)\\s*=\\s*([+-]?\\d*(\\.\\d+)?([Ee][+-]?\\d+)?)'\n"
                          "    collector:\n"
                          "      kind: StdOut\n"),
            &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_FALSE(config.command.metrics_file.has_value());
}

TEST(KatibExperiment, EnvValuesAreTheProgramsEnvironmentAsWritten) {
  const std::string env =
      "                env:\n"
      "                  - name: DATA_DIR\n"
      "                    value: /data/mnist train\n"
      "                  - name: EXTRA_ARGS\n"
      "                    value: \"--opt=a=b --dir=/tmp/x y\"\n"
      "                  - name: LEARNING_RATE\n"
      "                    value: \"${trialParameters.learningRate}\"\n"
      "                  - name: FROM_SECRET\n"
      "                    valueFrom:\n"
      "                      secretKeyRef: {name: s, key: k}\n"
      "                command:\n";
  SweepConfig config;
  const Status parsed =
      Parse(Replace(Example("random.yaml"), "                command:\n", env), &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(config.command.environment, (Environment{{"DATA_DIR", "/data/mnist train"},
                                                     {"EXTRA_ARGS", "--opt=a=b --dir=/tmp/x y"},
                                                     {"LEARNING_RATE", "${param:lr}"}}));
  EXPECT_EQ(config.command.command.front(), "python3");  // no /usr/bin/env in front
  EXPECT_TRUE(Listed(config,
                     "spec.trialTemplate.trialSpec.spec.template.spec.containers[0].env[3]"
                     " (line 61): only name and value are passed on"));
  SweepConfig again;
  const Status reparsed = Parse(config.text, &again);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << config.text;
  EXPECT_EQ(again.command.environment, config.command.environment);
}

// Found by fuzz_config: a list entry that is text where Katib has a mapping is passed over as
// before (an env entry without name and value; a metric strategy), not an uncaught exception.
TEST(KatibExperiment, TextWhereAnEntryMappingBelongsIsPassedOver) {
  std::string text = Replace(Example("random.yaml"), "                command:",
                             "                env:\n                  - JUST_TEXT\n"
                             "                command:");
  text = Replace(text, "    goal: 0.99", "    goal: 0.99\n    metricStrategies:\n      - latest");
  SweepConfig config;
  const Status status = Parse(text, &config);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(config.command.environment.empty());
  EXPECT_TRUE(Listed(config,
                     "spec.trialTemplate.trialSpec.spec.template.spec.containers[0].env[0]"
                     " (line 57): only name and value are passed on"));
  EXPECT_TRUE(Listed(config, "spec.objective (line 11): Katib scores a trial by its best report"));
}

struct BadSpec {
  const char* name;
  const char* example;
  const char* from;
  const char* to;
  const char* error;
};

class KatibBadSpec : public testing::TestWithParam<BadSpec> {};

TEST_P(KatibBadSpec, IsOneLineNamingFileLineAndKey) {
  const BadSpec& bad = GetParam();
  SweepConfig config;
  const Status status = Parse(Replace(Example(bad.example), bad.from, bad.to), &config);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message().find(bad.error), 0u) << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, KatibBadSpec,
    testing::Values(
        BadSpec{"TensorFlowEventCollector", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: TensorFlowEvent\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:23: spec.metricsCollectorSpec.collector.kind: 'TensorFlowEvent' "
                "has no hpo equivalent: hpo has no reader of TensorFlow event files"},
        BadSpec{"PrometheusCollector", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: PrometheusMetric\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:23: spec.metricsCollectorSpec.collector.kind: 'PrometheusMetric' "
                "has no hpo equivalent"},
        BadSpec{"FilePathNotPassed", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: File\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:22: spec.metricsCollectorSpec: /var/log/katib/metrics.log is "
                "named neither in the primary container's command nor in an env value"},
        BadSpec{"FileRelativePath", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: File\n    source:\n"
                "      fileSystemPath:\n        path: katib/metrics.log\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:26: spec.metricsCollectorSpec.source.fileSystemPath.path: must "
                "be an absolute path to a file, got 'katib/metrics.log'"},
        BadSpec{"FileDirectoryKind", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: File\n    source:\n"
                "      fileSystemPath:\n        path: /var/log/katib\n        kind: Directory\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:27: spec.metricsCollectorSpec.source.fileSystemPath.kind: must "
                "be File for the File collector, got 'Directory'"},
        BadSpec{"FileJsonWithFilter", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: File\n    source:\n"
                "      fileSystemPath: {path: /katib/m.json, format: JSON}\n"
                "      filter: {metricsFormat: ['(\\w+)=(\\d+)']}\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:26: spec.metricsCollectorSpec.source.filter: a filter applies to "
                "format TEXT only"},
        BadSpec{"FileFilterWithInlineFlags", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: File\n    source:\n"
                "      filter: {metricsFormat: ['(?i)(\\w+)=(\\d+)']}\n"
                "  parallelTrialCount: 3",
                "experiment.yaml:25: spec.metricsCollectorSpec.source.filter.metricsFormat[0]: "
                "'(?i)(\\w+)=(\\d+)' cannot be read here"},
        BadSpec{"CustomCollector", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    collector:\n      kind: Custom\n"
                "      customCollector: {name: c, image: i}\n  parallelTrialCount: 3",
                "experiment.yaml:23: spec.metricsCollectorSpec.collector.kind: 'Custom' has no "
                "hpo equivalent"},
        BadSpec{"MetricsFormat", "random.yaml", "  parallelTrialCount: 3",
                "  metricsCollectorSpec:\n    source:\n      filter:\n        metricsFormat:\n"
                "          - \"([\\\\w|-]+)\\\\s*:\\\\s*(\\\\d+)\"\n  parallelTrialCount: 3",
                "experiment.yaml:23: spec.metricsCollectorSpec.source: a custom source"},
        // Found by the hpo config's parser after translation: named at the spec's own line.
        BadSpec{"MinAboveMax", "random.yaml", "min: \"0.01\"", "min: \"0.05\"",
                "experiment.yaml:28: spec.parameters[0].feasibleSpace.min (read as "
                "sweep.parameters.lr.min): must be less than max (min 0.05, max 0.03)"},
        BadSpec{"ListForANumber", "random.yaml", "maxTrialCount: 6", "maxTrialCount: [6]",
                "experiment.yaml:22: spec.maxTrialCount: must be an integer, got a list"},
        BadSpec{"NoTrials", "random.yaml", "maxTrialCount: 6", "maxTrialCount: 0",
                "experiment.yaml:22: spec.maxTrialCount (read as run_cap): must be >= 1, got 0"},
        BadSpec{"Hyperband", "random.yaml", "algorithmName: random", "algorithmName: hyperband",
                "experiment.yaml:17: spec.algorithm.algorithmName: 'hyperband' has no hpo "
                "equivalent"},
        BadSpec{"UnknownTrialParameter", "random.yaml", "${trialParameters.momentum}",
                "${trialParameters.mom}",
                "experiment.yaml:60: spec.trialTemplate.trialSpec.spec.template.spec."
                "containers[0].command[5]: ${trialParameters.mom} is not among"},
        BadSpec{"MetadataReference", "random.yaml", "reference: momentum",
                "reference: ${trialSpec.Name}",
                "experiment.yaml:44: spec.trialTemplate.trialParameters[1].reference: "
                "'${trialSpec.Name}' is not a parameter"},
        BadSpec{"TfJob", "random.yaml", "kind: Job", "kind: TFJob",
                "experiment.yaml:47: spec.trialTemplate.trialSpec.kind: 'TFJob' trials have no "
                "hpo equivalent"},
        BadSpec{"NoCommand", "random.yaml", "command:", "unused:",
                "experiment.yaml:52: spec.trialTemplate.trialSpec.spec.template.spec."
                "containers[0]: the primary container has no command"},
        BadSpec{"NormalDistribution", "random.yaml", "max: \"0.03\"",
                "max: \"0.03\"\n        distribution: normal",
                "experiment.yaml:30: spec.parameters[0].feasibleSpace.distribution: 'normal' "
                "has no hpo equivalent"},
        BadSpec{"ConfigMapTemplate", "random.yaml", "primaryContainerName: training-container",
                "configMap:\n      configMapName: trial-template\n"
                "    primaryContainerName: training-container",
                "experiment.yaml:38: spec.trialTemplate.configMap: a trial template from a "
                "ConfigMap"},
        BadSpec{"OldApiVersion", "random.yaml", "kubeflow.org/v1beta1", "kubeflow.org/v1alpha3",
                "experiment.yaml:4: apiVersion: hpo reads Katib's kubeflow.org/v1beta1"},
        // Found by fuzz_config: text where the pod's spec mapping belongs.
        BadSpec{"PodSpecIsText", "random.yaml",
                "template:\n          spec:", "template:\n          spec: a pod\n          unused:",
                "experiment.yaml:49: spec.trialTemplate.trialSpec.spec.template.spec.containers: "
                "missing"},
        BadSpec{"NotANumber", "random.yaml", "min: \"0.01\"", "min: \"low\"",
                "experiment.yaml:28: spec.parameters[0].feasibleSpace.min: must be a number, "
                "got 'low'"}),
    [](const testing::TestParamInfo<BadSpec>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace hpo
