#include "tuning_job.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "config/foreign_spec_reader.hpp"
#include "program/metric_reader.hpp"

namespace hpo {

namespace {

namespace fs = std::filesystem;

// The SageMaker Python SDK stores script-mode values JSON-encoded: "\"train.py\"" -> train.py.
std::string Unquoted(const std::string& value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

// One of CategoricalParameterRanges at `at` -> a sweep parameter's `values`.
Status TranslateCategoricalRange(ForeignSpecReader& reader, const YAML::Node& range,
                                 const std::string& at, YAML::Node* spec) {
  HPO_RETURN_IF_ERROR(reader.Keys(range, at, {"Name", "Values"}));
  YAML::Node values_node;
  HPO_RETURN_IF_ERROR(reader.Required(range, at, "Values", &values_node));
  if (!values_node.IsSequence() || values_node.size() == 0) {
    return reader.Fail(values_node, at + ".Values", "must be a non-empty list");
  }
  YAML::Node values;
  for (size_t v = 0; v < values_node.size(); ++v) {
    std::string value;
    HPO_RETURN_IF_ERROR(
        reader.String(values_node[v], at + ".Values[" + std::to_string(v) + "]", &value));
    values.push_back(value);
  }
  (*spec)["values"] = values;
  return Status::Ok();
}

// One of Integer- or ContinuousParameterRanges at `at` -> a sweep parameter's distribution, min
// and max (ScalingType Logarithmic: a log distribution).
Status TranslateNumericRange(ForeignSpecReader& reader, const YAML::Node& range,
                             const std::string& at, const std::string& hpo_key, bool integer,
                             YAML::Node* spec) {
  HPO_RETURN_IF_ERROR(reader.Keys(range, at, {"Name", "MinValue", "MaxValue", "ScalingType"}));
  std::string scaling = "Auto";
  if (const YAML::Node scaling_node = range["ScalingType"]) {
    HPO_RETURN_IF_ERROR(reader.String(scaling_node, at + ".ScalingType", &scaling));
    if (scaling != "Auto" && scaling != "Linear" && scaling != "Logarithmic") {
      return reader.Fail(
          scaling_node, at + ".ScalingType",
          "'" + scaling + "' has no hpo equivalent; use Auto, Linear or Logarithmic");
    }
  }
  YAML::Node min_node;
  YAML::Node max_node;
  HPO_RETURN_IF_ERROR(reader.Required(range, at, "MinValue", &min_node));
  HPO_RETURN_IF_ERROR(reader.Required(range, at, "MaxValue", &max_node));
  reader.Origin(hpo_key + ".min", min_node, at + ".MinValue");
  reader.Origin(hpo_key + ".max", max_node, at + ".MaxValue");
  const bool logarithmic = scaling == "Logarithmic";
  if (integer) {
    int64_t min = 0;
    int64_t max = 0;
    HPO_RETURN_IF_ERROR(reader.Integer(min_node, at + ".MinValue", &min));
    HPO_RETURN_IF_ERROR(reader.Integer(max_node, at + ".MaxValue", &max));
    (*spec)["distribution"] = logarithmic ? "q_log_uniform_values" : "int_uniform";
    (*spec)["min"] = min;
    (*spec)["max"] = max;
    if (logarithmic) (*spec)["q"] = 1;
  } else {
    std::string min;
    std::string max;
    HPO_RETURN_IF_ERROR(reader.NumberText(min_node, at + ".MinValue", &min));
    HPO_RETURN_IF_ERROR(reader.NumberText(max_node, at + ".MaxValue", &max));
    (*spec)["distribution"] = logarithmic ? "log_uniform_values" : "uniform";
    (*spec)["min"] = min;
    (*spec)["max"] = max;
  }
  return Status::Ok();
}

Status TranslateRanges(ForeignSpecReader& reader, const YAML::Node& ranges,
                       YAML::Node* parameters) {
  const std::string path = "HyperParameterTuningJobConfig.ParameterRanges";
  HPO_RETURN_IF_ERROR(reader.Keys(
      ranges, path,
      {"IntegerParameterRanges", "ContinuousParameterRanges", "CategoricalParameterRanges"}));
  for (const char* kind :
       {"ContinuousParameterRanges", "IntegerParameterRanges", "CategoricalParameterRanges"}) {
    const YAML::Node list = ranges[kind];
    if (!list) continue;
    const std::string list_path = path + "." + kind;
    if (!list.IsSequence()) return reader.Fail(list, list_path, "must be a list");
    const bool categorical = std::string(kind) == "CategoricalParameterRanges";
    const bool integer = std::string(kind) == "IntegerParameterRanges";
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = list_path + "[" + std::to_string(i) + "]";
      std::string name;
      YAML::Node node;
      YAML::Node spec;
      HPO_RETURN_IF_ERROR(reader.RequiredString(list[i], at, "Name", &node, &name));
      const std::string hpo_key = "sweep.parameters." + name;
      reader.Origin(hpo_key, list[i], at);
      if (categorical) {
        HPO_RETURN_IF_ERROR(TranslateCategoricalRange(reader, list[i], at, &spec));
      } else {
        HPO_RETURN_IF_ERROR(TranslateNumericRange(reader, list[i], at, hpo_key, integer, &spec));
      }
      (*parameters)[name] = spec;
    }
  }
  return Status::Ok();
}

// Strategy (and Hyperband's StrategyConfig) -> sweep.method, search and early_terminate.
Status TranslateStrategy(ForeignSpecReader& reader, const YAML::Node& tuning, YAML::Node* sweep,
                         YAML::Node* config) {
  const std::string path = "HyperParameterTuningJobConfig";
  if (tuning["ParameterRanges"] && tuning["ParameterRanges"]["AutoParameters"]) {
    return reader.Fail(tuning["ParameterRanges"]["AutoParameters"],
                       path + ".ParameterRanges.AutoParameters",
                       "hpo cannot choose ranges for you; give them as Continuous, Integer or "
                       "CategoricalParameterRanges");
  }
  HPO_RETURN_IF_ERROR(
      reader.Keys(tuning, path,
                  {"Strategy", "StrategyConfig", "HyperParameterTuningJobObjective",
                   "ResourceLimits", "ParameterRanges", "TrainingJobEarlyStoppingType",
                   "TuningJobCompletionCriteria", "RandomSeed"}));
  YAML::Node node;
  std::string strategy;
  HPO_RETURN_IF_ERROR(reader.RequiredString(tuning, path, "Strategy", &node, &strategy));
  reader.Origin("sweep.method", node, path + ".Strategy");
  reader.Origin("search", node, path + ".Strategy");
  YAML::Node search;
  if (strategy == "Bayesian") {
    (*sweep)["method"] = "bayes";
    search["model"] = "gp";
    (*config)["search"] = search;
  } else if (strategy == "Random" || strategy == "Grid") {
    (*sweep)["method"] = strategy == "Random" ? "random" : "grid";
  } else if (strategy == "Hyperband") {
    (*sweep)["method"] = "random";
  } else {
    return reader.Fail(node, path + ".Strategy",
                       "must be Bayesian, Random, Grid or Hyperband, got '" + strategy + "'");
  }
  if (const YAML::Node strategy_config = tuning["StrategyConfig"]) {
    const std::string at = path + ".StrategyConfig";
    HPO_RETURN_IF_ERROR(reader.Keys(strategy_config, at, {"HyperbandStrategyConfig"}));
    if (strategy != "Hyperband") {
      return reader.Fail(strategy_config, at, "applies to Strategy Hyperband only");
    }
  }
  if (strategy == "Hyperband") {
    // SageMaker's Hyperband: rungs from MinResource (default 1) up by a factor of 3.
    int64_t min_resource = 1;
    const YAML::Node hyperband = tuning["StrategyConfig"]["HyperbandStrategyConfig"];
    if (hyperband) {
      const std::string at = path + ".StrategyConfig.HyperbandStrategyConfig";
      HPO_RETURN_IF_ERROR(reader.Keys(hyperband, at, {"MinResource", "MaxResource"}));
      if (hyperband["MinResource"]) {
        HPO_RETURN_IF_ERROR(
            reader.Integer(hyperband["MinResource"], at + ".MinResource", &min_resource));
      }
      if (hyperband["MaxResource"]) {
        int64_t max_resource = 0;
        HPO_RETURN_IF_ERROR(
            reader.Integer(hyperband["MaxResource"], at + ".MaxResource", &max_resource));
        (*config)["epochs"] = max_resource;
        reader.Origin("epochs", hyperband["MaxResource"], at + ".MaxResource");
      }
    }
    YAML::Node early;
    early["type"] = "hyperband";
    early["min_iter"] = min_resource;
    early["eta"] = 3;
    (*sweep)["early_terminate"] = early;
    reader.Origin("sweep.early_terminate", tuning["Strategy"], path + ".Strategy");
  }
  return Status::Ok();
}

// HyperParameterTuningJobObjective (and TuningJobCompletionCriteria) -> sweep.metric.
Status TranslateObjective(ForeignSpecReader& reader, const YAML::Node& tuning, YAML::Node* sweep) {
  const std::string path = "HyperParameterTuningJobConfig";
  YAML::Node node;
  YAML::Node objective;
  HPO_RETURN_IF_ERROR(
      reader.Required(tuning, path, "HyperParameterTuningJobObjective", &objective));
  const std::string objective_path = path + ".HyperParameterTuningJobObjective";
  HPO_RETURN_IF_ERROR(reader.Keys(objective, objective_path, {"Type", "MetricName"}));
  std::string type;
  std::string metric_name;
  HPO_RETURN_IF_ERROR(reader.RequiredString(objective, objective_path, "Type", &node, &type));
  if (type != "Maximize" && type != "Minimize") {
    return reader.Fail(node, objective_path + ".Type", "must be Maximize or Minimize");
  }
  HPO_RETURN_IF_ERROR(
      reader.RequiredString(objective, objective_path, "MetricName", &node, &metric_name));
  YAML::Node metric;
  metric["name"] = metric_name;
  metric["goal"] = type == "Maximize" ? "maximize" : "minimize";
  reader.Origin("sweep.metric", objective, objective_path);
  reader.Origin("sweep.metric.name", node, objective_path + ".MetricName");
  if (const YAML::Node criteria = tuning["TuningJobCompletionCriteria"]) {
    const std::string at = path + ".TuningJobCompletionCriteria";
    HPO_RETURN_IF_ERROR(reader.Keys(criteria, at, {"TargetObjectiveMetricValue"},
                                    {"BestObjectiveNotImproving", "ConvergenceDetected"}));
    if (const YAML::Node target = criteria["TargetObjectiveMetricValue"]) {
      std::string text;
      HPO_RETURN_IF_ERROR(reader.NumberText(target, at + ".TargetObjectiveMetricValue", &text));
      metric["target"] = text;
      reader.Origin("sweep.metric.target", target, at + ".TargetObjectiveMetricValue");
    }
  }
  (*sweep)["metric"] = metric;
  return Status::Ok();
}

// ResourceLimits, TrainingJobEarlyStoppingType and RandomSeed -> run_cap, time_budget_s,
// median_stopping and seed.
Status TranslateTuningLimits(ForeignSpecReader& reader, const YAML::Node& tuning,
                             YAML::Node* config) {
  const std::string path = "HyperParameterTuningJobConfig";
  YAML::Node limits;
  HPO_RETURN_IF_ERROR(reader.Required(tuning, path, "ResourceLimits", &limits));
  const std::string limits_path = path + ".ResourceLimits";
  HPO_RETURN_IF_ERROR(
      reader.Keys(limits, limits_path,
                  {"MaxNumberOfTrainingJobs", "MaxRuntimeInSeconds", "MaxParallelTrainingJobs"}));
  int64_t number = 0;
  if (const YAML::Node jobs = limits["MaxNumberOfTrainingJobs"]) {
    HPO_RETURN_IF_ERROR(reader.Integer(jobs, limits_path + ".MaxNumberOfTrainingJobs", &number));
    (*config)["run_cap"] = number;
    reader.Origin("run_cap", jobs, limits_path + ".MaxNumberOfTrainingJobs");
  }
  if (const YAML::Node runtime = limits["MaxRuntimeInSeconds"]) {
    HPO_RETURN_IF_ERROR(reader.Integer(runtime, limits_path + ".MaxRuntimeInSeconds", &number));
    (*config)["time_budget_s"] = number;
    reader.Origin("time_budget_s", runtime, limits_path + ".MaxRuntimeInSeconds");
  }
  if (const YAML::Node parallel = limits["MaxParallelTrainingJobs"]) {
    reader.Ignore(parallel, limits_path + ".MaxParallelTrainingJobs",
                  "hpo runs as many trials at once as the job has trial groups (mpirun ranks / "
                  "ranks_per_trial)");
  }
  if (const YAML::Node early = tuning["TrainingJobEarlyStoppingType"]) {
    std::string value;
    HPO_RETURN_IF_ERROR(reader.String(early, path + ".TrainingJobEarlyStoppingType", &value));
    if (value == "Auto") {
      YAML::Node median;
      median["min_trials"] = 5;
      (*config)["median_stopping"] = median;
      reader.Origin("median_stopping", early, path + ".TrainingJobEarlyStoppingType");
    } else if (value != "Off") {
      return reader.Fail(early, path + ".TrainingJobEarlyStoppingType", "must be Off or Auto");
    }
  }
  if (const YAML::Node seed = tuning["RandomSeed"]) {
    HPO_RETURN_IF_ERROR(reader.Integer(seed, path + ".RandomSeed", &number));
    (*config)["seed"] = number;
    reader.Origin("seed", seed, path + ".RandomSeed");
  }
  return Status::Ok();
}

Status TranslateTuningConfig(ForeignSpecReader& reader, const YAML::Node& tuning, YAML::Node* sweep,
                             YAML::Node* config) {
  HPO_RETURN_IF_ERROR(TranslateStrategy(reader, tuning, sweep, config));
  HPO_RETURN_IF_ERROR(TranslateObjective(reader, tuning, sweep));
  HPO_RETURN_IF_ERROR(TranslateTuningLimits(reader, tuning, config));
  const std::string path = "HyperParameterTuningJobConfig";
  YAML::Node ranges;
  HPO_RETURN_IF_ERROR(reader.Required(tuning, path, "ParameterRanges", &ranges));
  YAML::Node parameters;
  HPO_RETURN_IF_ERROR(TranslateRanges(reader, ranges, &parameters));
  if (parameters.size() == 0) {
    return reader.Fail(ranges, path + ".ParameterRanges", "holds no parameter range");
  }
  (*sweep)["parameters"] = parameters;
  return Status::Ok();
}

// StaticHyperParameters: sagemaker_program (found from the spec's folder) and the constants.
Status TranslateStatics(ForeignSpecReader& reader, const YAML::Node& job,
                        const std::string& spec_folder, YAML::Node* sweep) {
  const std::string path = "TrainingJobDefinition.StaticHyperParameters";
  YAML::Node statics;
  HPO_RETURN_IF_ERROR(
      reader.Required(job, "TrainingJobDefinition", "StaticHyperParameters", &statics));
  if (!statics.IsMap()) return reader.Fail(statics, path, "must be a mapping");
  std::string program;
  YAML::Node parameters = (*sweep)["parameters"];
  for (const auto& entry : statics) {
    const std::string name = entry.first.Scalar();
    const std::string at = path + "." + name;
    std::string value;
    HPO_RETURN_IF_ERROR(reader.String(entry.second, at, &value));
    if (name == "sagemaker_program") {
      program = Unquoted(value);
    } else if (name.rfind("sagemaker_", 0) == 0) {
      reader.Ignore(entry.first, at, "SageMaker's own setting");
    } else {
      YAML::Node constant;
      constant["value"] = Unquoted(value);
      parameters[name] = constant;
      reader.Origin("sweep.parameters." + name, entry.second, at);
    }
  }
  if (program.empty()) {
    return reader.Fail(statics, path + ".sagemaker_program",
                       "missing: hpo runs the training script of SageMaker script mode as a "
                       "command trial; a training image's own entrypoint cannot run here");
  }
  const fs::path resolved = fs::path(program).is_absolute()
                                ? fs::path(program)
                                : (fs::path(spec_folder) / program).lexically_normal();
  (*sweep)["program"] = resolved.string();
  reader.Origin("sweep.program", statics["sagemaker_program"], path + ".sagemaker_program");
  reader.Origin("interpreter", statics["sagemaker_program"], path + ".sagemaker_program");
  YAML::Node command;
  for (const char* element : {"${env}", "${interpreter}", "${program}", "${args_no_equals}"}) {
    command.push_back(element);
  }
  (*sweep)["command"] = command;
  return Status::Ok();
}

// The interpreter of the script, as the training toolkit chooses it: its `#!` line's
// (`#!/usr/bin/env python3` -> python3), /bin/sh for a .sh script; "" (hpo's default python) for a
// script without one. Read where the spec is read (rank 0), so a missing interpreter is refused
// before any trial runs.
std::string ScriptInterpreter(const std::string& program) {
  std::ifstream in(program);
  std::string line;
  if (in && std::getline(in, line) && line.rfind("#!", 0) == 0) {
    std::istringstream words(line.substr(2));
    std::string first;
    std::string second;
    words >> first >> second;
    if (fs::path(first).filename() == "env" && !second.empty()) return second;
    return first;
  }
  if (fs::path(program).extension() == ".sh") return "/bin/sh";
  return "";
}

// InputDataConfig: each channel's local folder. A file:// URI or a local path is used as it is;
// an s3:// one needs a copy beside the spec, laid out as in SageMaker's container
// (SPEC_FOLDER/input/data/CHANNEL: a folder, or a link to an FSx/EFS mount).
Status TranslateChannels(ForeignSpecReader& reader, const YAML::Node& channels,
                         const std::string& spec_folder, YAML::Node* sagemaker) {
  const std::string path = "TrainingJobDefinition.InputDataConfig";
  if (!channels.IsSequence()) return reader.Fail(channels, path, "must be a list");
  YAML::Node folders(YAML::NodeType::Map);
  for (size_t i = 0; i < channels.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    HPO_RETURN_IF_ERROR(reader.Keys(
        channels[i], at, {"ChannelName", "DataSource"},
        {"ContentType", "CompressionType", "RecordWrapperType", "InputMode", "ShuffleConfig"}));
    YAML::Node node;
    std::string name;
    HPO_RETURN_IF_ERROR(reader.RequiredString(channels[i], at, "ChannelName", &node, &name));
    const YAML::Node uri_node = channels[i]["DataSource"]["S3DataSource"]["S3Uri"];
    const YAML::Node file_node = channels[i]["DataSource"]["FileSystemDataSource"];
    std::string uri;
    if (uri_node && uri_node.IsScalar()) uri = uri_node.Scalar();
    if (file_node && file_node["DirectoryPath"]) uri = file_node["DirectoryPath"].Scalar();
    if (uri.rfind("file://", 0) == 0) uri = uri.substr(7);
    const fs::path beside = fs::path(spec_folder) / "input" / "data" / name;
    std::error_code error;
    std::string folder;
    if (!uri.empty() && uri.rfind("s3://", 0) != 0) {
      folder = fs::path(uri).is_absolute() ? uri : (fs::path(spec_folder) / uri).string();
    } else if (fs::is_directory(beside, error)) {
      folder = beside.string();
    } else {
      return reader.Fail(node, at + ".ChannelName",
                         "channel '" + name + "' is " + (uri.empty() ? "not a local folder" : uri) +
                             ", which hpo does not download: put a copy (or a link to a mounted "
                             "copy) at " +
                             beside.string() + ", as SageMaker lays it out, or give a file:// URI");
    }
    folders[name] = fs::absolute(folder).lexically_normal().string();
  }
  (*sagemaker)["channels"] = folders;
  return Status::Ok();
}

// Environment -> `environment:` (values as written: paths, '=', spaces).
Status TranslateEnvironment(ForeignSpecReader& reader, const YAML::Node& environment,
                            YAML::Node* config) {
  const std::string path = "TrainingJobDefinition.Environment";
  if (!environment.IsMap()) return reader.Fail(environment, path, "must be a mapping");
  YAML::Node variables(YAML::NodeType::Map);
  for (const auto& entry : environment) {
    std::string value;
    HPO_RETURN_IF_ERROR(reader.String(entry.second, path + "." + entry.first.Scalar(), &value));
    variables[entry.first.Scalar()] = value;
  }
  (*config)["environment"] = variables;
  reader.Origin("environment", environment, path);
  return Status::Ok();
}

// MetricDefinitions -> metric_definitions and metrics; the objective must be among them, as
// SageMaker checks at submission.
Status TranslateMetricDefinitions(ForeignSpecReader& reader, const YAML::Node& definitions,
                                  const std::string& list_path, const YAML::Node& objective_node,
                                  const YAML::Node& sweep, YAML::Node* config) {
  if (!definitions.IsSequence()) return reader.Fail(definitions, list_path, "must be a list");
  const std::string objective = sweep["metric"]["name"].Scalar();
  YAML::Node metrics;
  std::string names;
  bool objective_defined = false;
  for (size_t i = 0; i < definitions.size(); ++i) {
    const std::string entry = list_path + "[" + std::to_string(i) + "]";
    HPO_RETURN_IF_ERROR(reader.Keys(definitions[i], entry, {"Name", "Regex"}));
    YAML::Node name;
    YAML::Node regex;
    std::string name_text;
    std::string regex_text;
    HPO_RETURN_IF_ERROR(reader.RequiredString(definitions[i], entry, "Name", &name, &name_text));
    HPO_RETURN_IF_ERROR(reader.RequiredString(definitions[i], entry, "Regex", &regex, &regex_text));
    const Status checked = CheckMetricDefinitions({{name_text, regex_text}});
    if (!checked.ok()) {
      const std::string prefix = "metric_definitions[0].regex: ";
      std::string message = checked.message();
      if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
      return reader.Fail(regex, entry + ".Regex", message);
    }
    objective_defined = objective_defined || name_text == objective;
    if (name_text != objective) metrics.push_back(name_text);
    names += (names.empty() ? "" : ", ") + name_text;
  }
  if (!objective_defined) {
    return reader.Fail(objective_node,
                       "HyperParameterTuningJobConfig.HyperParameterTuningJobObjective.MetricName",
                       "'" + objective + "' is not among " + list_path + " (" + names +
                           "): no regex reads it from the script's output (SageMaker refuses "
                           "such a job too)");
  }
  (*config)["metric_definitions"] = definitions;  // Name/Regex, as hpo reads them
  reader.Origin("metric_definitions", definitions, list_path);
  reader.Origin("metrics", definitions, list_path);
  if (metrics.size() > 0) (*config)["metrics"] = metrics;
  return Status::Ok();
}

// StoppingCondition and ResourceConfig: the trial's time limit and ranks.
Status TranslateLimits(ForeignSpecReader& reader, const YAML::Node& job, YAML::Node* config) {
  const std::string path = "TrainingJobDefinition";
  if (const YAML::Node stopping = job["StoppingCondition"]) {
    const std::string at = path + ".StoppingCondition";
    HPO_RETURN_IF_ERROR(reader.Keys(stopping, at, {"MaxRuntimeInSeconds"},
                                    {"MaxWaitTimeInSeconds", "MaxPendingTimeInSeconds"}));
    if (const YAML::Node runtime = stopping["MaxRuntimeInSeconds"]) {
      int64_t seconds = 0;
      HPO_RETURN_IF_ERROR(reader.Integer(runtime, at + ".MaxRuntimeInSeconds", &seconds));
      (*config)["trial_timeout_s"] = seconds;
      reader.Origin("trial_timeout_s", runtime, at + ".MaxRuntimeInSeconds");
    }
  }
  if (const YAML::Node resources = job["ResourceConfig"]) {
    const std::string at = path + ".ResourceConfig";
    HPO_RETURN_IF_ERROR(reader.Keys(resources, at, {"InstanceCount"},
                                    {"InstanceType", "VolumeSizeInGB", "VolumeKmsKeyId",
                                     "KeepAlivePeriodInSeconds", "InstanceGroups"}));
    if (const YAML::Node count = resources["InstanceCount"]) {
      int64_t instances = 1;
      HPO_RETURN_IF_ERROR(reader.Integer(count, at + ".InstanceCount", &instances));
      if (instances != 1) (*config)["ranks_per_trial"] = instances;
      reader.Origin("ranks_per_trial", count, at + ".InstanceCount");
    }
  }
  return Status::Ok();
}

Status TranslateTrainingJob(ForeignSpecReader& reader, const YAML::Node& tuning,
                            const YAML::Node& job, const std::string& spec_folder,
                            YAML::Node* sweep, YAML::Node* config) {
  const std::string path = "TrainingJobDefinition";
  HPO_RETURN_IF_ERROR(reader.Keys(
      job, path,
      {"StaticHyperParameters", "AlgorithmSpecification", "Environment", "StoppingCondition",
       "ResourceConfig", "InputDataConfig"},
      {"DefinitionName", "TuningObjective", "HyperParameterRanges", "RoleArn", "OutputDataConfig",
       "VpcConfig", "EnableNetworkIsolation", "EnableInterContainerTrafficEncryption",
       "EnableManagedSpotTraining", "CheckpointConfig", "RetryStrategy"}));
  HPO_RETURN_IF_ERROR(TranslateStatics(reader, job, spec_folder, sweep));
  const std::string interpreter = ScriptInterpreter((*sweep)["program"].Scalar());
  if (!interpreter.empty()) (*config)["interpreter"] = interpreter;
  YAML::Node sagemaker = (*config)["sagemaker"];
  if (const YAML::Node channels = job["InputDataConfig"]) {
    HPO_RETURN_IF_ERROR(TranslateChannels(reader, channels, spec_folder, &sagemaker));
    reader.Origin("sagemaker.channels", channels, path + ".InputDataConfig");
  }
  if (const YAML::Node environment = job["Environment"]) {
    HPO_RETURN_IF_ERROR(TranslateEnvironment(reader, environment, config));
  }
  const YAML::Node objective_name = tuning["HyperParameterTuningJobObjective"]["MetricName"];
  const std::string definitions_path = path + ".AlgorithmSpecification.MetricDefinitions";
  if (const YAML::Node algorithm = job["AlgorithmSpecification"]) {
    const std::string at = path + ".AlgorithmSpecification";
    HPO_RETURN_IF_ERROR(reader.Keys(algorithm, at, {"MetricDefinitions"},
                                    {"TrainingImage", "AlgorithmName", "TrainingInputMode",
                                     "EnableSageMakerMetricsTimeSeries"}));
    if (const YAML::Node definitions = algorithm["MetricDefinitions"]) {
      HPO_RETURN_IF_ERROR(TranslateMetricDefinitions(reader, definitions, definitions_path,
                                                     objective_name, *sweep, config));
    }
  }
  if (!(*config)["metric_definitions"]) {
    return reader.Fail(objective_name,
                       "HyperParameterTuningJobConfig.HyperParameterTuningJobObjective.MetricName",
                       "no " + definitions_path +
                           " reads it from the script's output (SageMaker "
                           "refuses such a job too): give a Name and Regex for it");
  }
  return TranslateLimits(reader, job, config);
}

}  // namespace

bool IsSageMakerTuningJob(const YAML::Node& root) {
  return root.IsMap() && root["HyperParameterTuningJobConfig"];
}

Status TranslateSageMakerTuningJob(const config_internal::ErrorFormatter& errors,
                                   const YAML::Node& root, const std::string& path,
                                   std::string* config_text, TranslationNotes* notes) {
  ForeignSpecReader reader(errors, notes);
  if (root["TrainingJobDefinitions"]) {
    return reader.Fail(root["TrainingJobDefinitions"], "TrainingJobDefinitions",
                       "several training job definitions have no hpo equivalent; give one "
                       "TrainingJobDefinition");
  }
  if (root["WarmStartConfig"]) {
    return reader.Fail(root["WarmStartConfig"], "WarmStartConfig",
                       "a warm start from earlier tuning jobs named as SageMaker names them has "
                       "no hpo equivalent; write an hpo config with `warm_start:` naming their "
                       "study files (docs/config.md, Warm start)");
  }
  HPO_RETURN_IF_ERROR(reader.Keys(
      root, "",
      {"HyperParameterTuningJobName", "HyperParameterTuningJobConfig", "TrainingJobDefinition"},
      {"Tags", "Autotune"}));
  YAML::Node sweep;
  YAML::Node config;
  if (const YAML::Node name = root["HyperParameterTuningJobName"]) {
    sweep["name"] = name.Scalar();
  }
  HPO_RETURN_IF_ERROR(
      TranslateTuningConfig(reader, root["HyperParameterTuningJobConfig"], &sweep, &config));
  YAML::Node job;
  HPO_RETURN_IF_ERROR(reader.Required(root, "", "TrainingJobDefinition", &job));
  const std::string folder = fs::absolute(fs::path(path)).parent_path().string();
  YAML::Node sagemaker;
  sagemaker["job_name"] = sweep["name"] ? sweep["name"].Scalar() : std::string("hpo");
  config["sagemaker"] = sagemaker;
  HPO_RETURN_IF_ERROR(TranslateTrainingJob(reader, root["HyperParameterTuningJobConfig"], job,
                                           folder, &sweep, &config));

  *config_text =
      EmitHpoConfig("hpo sweep --config " + path +
                        ": a SageMaker tuning job, read as this hpo config (docs/config.md)",
                    sweep, config);
  return Status::Ok();
}

}  // namespace hpo
