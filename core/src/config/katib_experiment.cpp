#include "katib_experiment.hpp"

#include "foreign_spec_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace hpo {

namespace {

using config_internal::ParseIntegerScalar;

// algorithmSettings as name -> (value node, path).
Status ReadSettings(ForeignSpecReader& reader, const YAML::Node& list, const std::string& path,
                    std::map<std::string, std::pair<YAML::Node, std::string>>* settings) {
  if (!list) return Status::Ok();
  if (!list.IsSequence()) return reader.Fail(list, path, "must be a list of {name, value}");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    HPO_RETURN_IF_ERROR(reader.Keys(list[i], at, {"name", "value"}));
    std::string name;
    YAML::Node name_node;
    HPO_RETURN_IF_ERROR(reader.RequiredString(list[i], at, "name", &name_node, &name));
    YAML::Node value;
    HPO_RETURN_IF_ERROR(reader.Required(list[i], at, "value", &value));
    (*settings)[name] = {value, at + ".value"};
  }
  return Status::Ok();
}

Status TranslateAlgorithm(ForeignSpecReader& reader, const YAML::Node& algorithm, YAML::Node* sweep,
                          YAML::Node* config) {
  const std::string path = "spec.algorithm";
  HPO_RETURN_IF_ERROR(reader.Keys(algorithm, path, {"algorithmName", "algorithmSettings"}));
  YAML::Node name_node;
  HPO_RETURN_IF_ERROR(reader.Required(algorithm, path, "algorithmName", &name_node));
  std::string name;
  HPO_RETURN_IF_ERROR(reader.String(name_node, path + ".algorithmName", &name));
  const std::map<std::string, std::pair<const char*, const char*>> kAlgorithms = {
      // Katib's name -> (method, search.model or sampler)
      {"random", {"random", ""}},
      {"grid", {"grid", ""}},
      {"sobol", {"random", "sobol"}},
      {"tpe", {"bayes", "tpe_independent"}},
      {"multivariate-tpe", {"bayes", "tpe"}},
      {"bayesianoptimization", {"bayes", "gp"}},
  };
  const auto found = kAlgorithms.find(name);
  if (found == kAlgorithms.end()) {
    return reader.Fail(name_node, path + ".algorithmName",
                       "'" + name +
                           "' has no hpo equivalent; use random, grid, sobol, tpe, "
                           "multivariate-tpe or bayesianoptimization (for Hyperband, random or "
                           "bayes with sweep.early_terminate in an hpo config)");
  }
  (*sweep)["method"] = found->second.first;
  reader.Origin("sweep.method", name_node, path + ".algorithmName");
  reader.Origin("search", algorithm, path);
  const std::string model = found->second.second;
  YAML::Node search;
  if (model == "sobol") {
    search["sampler"] = "sobol";
  } else if (!model.empty()) {
    search["model"] = model;
  }
  std::map<std::string, std::pair<YAML::Node, std::string>> settings;
  HPO_RETURN_IF_ERROR(
      ReadSettings(reader, algorithm["algorithmSettings"], path + ".algorithmSettings", &settings));
  for (const auto& [setting, value] : settings) {
    int64_t number = 0;
    if (setting == "random_state") {
      HPO_RETURN_IF_ERROR(reader.Integer(value.first, value.second, &number));
      (*config)["seed"] = number;
      reader.Origin("seed", value.first, value.second);
    } else if ((setting == "n_startup_trials" || setting == "n_initial_points") &&
               found->second.first == std::string("bayes")) {
      HPO_RETURN_IF_ERROR(reader.Integer(value.first, value.second, &number));
      search["startup_trials"] = number;
      reader.Origin("search.startup_trials", value.first, value.second);
    } else if (setting == "n_ei_candidates" && model != "gp" && !model.empty()) {
      HPO_RETURN_IF_ERROR(reader.Integer(value.first, value.second, &number));
      search["candidates"] = number;
      reader.Origin("search.candidates", value.first, value.second);
    } else {
      reader.Ignore(value.first, value.second, "setting '" + setting + "' has no hpo equivalent");
    }
  }
  if (search.size() > 0) (*config)["search"] = search;
  return Status::Ok();
}

Status TranslateEarlyStopping(ForeignSpecReader& reader, const YAML::Node& early,
                              YAML::Node* config) {
  const std::string path = "spec.earlyStopping";
  HPO_RETURN_IF_ERROR(reader.Keys(early, path, {"algorithmName", "algorithmSettings"}));
  YAML::Node name_node;
  HPO_RETURN_IF_ERROR(reader.Required(early, path, "algorithmName", &name_node));
  std::string name;
  HPO_RETURN_IF_ERROR(reader.String(name_node, path + ".algorithmName", &name));
  if (name != "medianstop") {
    return reader.Fail(name_node, path + ".algorithmName",
                       "'" + name + "' has no hpo equivalent; use medianstop");
  }
  std::map<std::string, std::pair<YAML::Node, std::string>> settings;
  HPO_RETURN_IF_ERROR(
      ReadSettings(reader, early["algorithmSettings"], path + ".algorithmSettings", &settings));
  // Katib's defaults: min_trials_required 3, start_step 4.
  int64_t min_trials = 3;
  int64_t start_step = 4;
  for (const auto& [setting, value] : settings) {
    if (setting == "min_trials_required") {
      HPO_RETURN_IF_ERROR(reader.Integer(value.first, value.second, &min_trials));
    } else if (setting == "start_step") {
      HPO_RETURN_IF_ERROR(reader.Integer(value.first, value.second, &start_step));
    } else {
      return reader.Fail(value.first, value.second,
                         "medianstop has no setting '" + setting +
                             "' (it has min_trials_required and start_step)");
    }
  }
  YAML::Node median;
  median["min_trials"] = min_trials;
  median["start_step"] = start_step;
  (*config)["median_stopping"] = median;
  reader.Origin("median_stopping", early, path);
  for (const auto& [setting, value] : settings) {
    reader.Origin(std::string("median_stopping.") +
                      (setting == "min_trials_required" ? "min_trials" : setting),
                  value.first, value.second);
  }
  return Status::Ok();
}

Status TranslateParameter(ForeignSpecReader& reader, const YAML::Node& item, const std::string& at,
                          std::string* name, YAML::Node* spec) {
  HPO_RETURN_IF_ERROR(reader.Keys(item, at, {"name", "parameterType", "feasibleSpace"}));
  YAML::Node node;
  HPO_RETURN_IF_ERROR(reader.Required(item, at, "name", &node));
  HPO_RETURN_IF_ERROR(reader.String(node, at + ".name", name));
  const std::string hpo_key = "sweep.parameters." + *name;
  reader.Origin(hpo_key, item, at);
  std::string type;
  YAML::Node type_node;
  HPO_RETURN_IF_ERROR(reader.RequiredString(item, at, "parameterType", &type_node, &type));
  YAML::Node space;
  HPO_RETURN_IF_ERROR(reader.Required(item, at, "feasibleSpace", &space));
  const std::string space_path = at + ".feasibleSpace";
  HPO_RETURN_IF_ERROR(
      reader.Keys(space, space_path, {"min", "max", "step", "list", "distribution"}));
  if (type == "categorical" || type == "discrete") {
    YAML::Node list;
    HPO_RETURN_IF_ERROR(reader.Required(space, space_path, "list", &list));
    if (!list.IsSequence() || list.size() == 0) {
      return reader.Fail(list, space_path + ".list", "must be a non-empty list");
    }
    YAML::Node values;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string value_path = space_path + ".list[" + std::to_string(i) + "]";
      if (type == "categorical") {
        std::string value;
        HPO_RETURN_IF_ERROR(reader.String(list[i], value_path, &value));
        values.push_back(value);
      } else {
        int64_t integer = 0;
        if (list[i].IsScalar() && ParseIntegerScalar(list[i].Scalar(), &integer)) {
          values.push_back(integer);
        } else {
          std::string text;
          HPO_RETURN_IF_ERROR(reader.NumberText(list[i], value_path, &text));
          values.push_back(text);
        }
      }
    }
    (*spec)["values"] = values;
    return Status::Ok();
  }
  if (type != "double" && type != "int") {
    return reader.Fail(type_node, at + ".parameterType",
                       "must be double, int, categorical or discrete, got '" + type + "'");
  }
  std::string distribution = "uniform";
  if (const YAML::Node node = space["distribution"]) {
    HPO_RETURN_IF_ERROR(reader.String(node, space_path + ".distribution", &distribution));
    if (distribution != "uniform" && distribution != "logUniform") {
      return reader.Fail(node, space_path + ".distribution",
                         "'" + distribution +
                             "' has no hpo equivalent with min and max; use uniform or "
                             "logUniform (or normal in an hpo config, with mu and sigma)");
    }
  }
  YAML::Node min_node;
  YAML::Node max_node;
  HPO_RETURN_IF_ERROR(reader.Required(space, space_path, "min", &min_node));
  HPO_RETURN_IF_ERROR(reader.Required(space, space_path, "max", &max_node));
  reader.Origin(hpo_key + ".min", min_node, space_path + ".min");
  reader.Origin(hpo_key + ".max", max_node, space_path + ".max");
  const YAML::Node step_node = space["step"];
  if (type == "int") {
    int64_t min = 0;
    int64_t max = 0;
    HPO_RETURN_IF_ERROR(reader.Integer(min_node, space_path + ".min", &min));
    HPO_RETURN_IF_ERROR(reader.Integer(max_node, space_path + ".max", &max));
    if (distribution == "logUniform") {
      return reader.Fail(space["distribution"], space_path + ".distribution",
                         "logUniform of an int has no hpo equivalent; use a double");
    }
    int64_t step = 1;
    if (step_node) HPO_RETURN_IF_ERROR(reader.Integer(step_node, space_path + ".step", &step));
    if (step < 1) return reader.Fail(step_node, space_path + ".step", "must be >= 1");
    if (step == 1) {
      (*spec)["distribution"] = "int_uniform";
      (*spec)["min"] = min;
      (*spec)["max"] = max;
      return Status::Ok();
    }
    YAML::Node values;
    for (int64_t value = min; value <= max && values.size() < 10000; value += step) {
      values.push_back(value);
    }
    if (values.size() == 0) return reader.Fail(min_node, space_path + ".min", "must be <= max");
    (*spec)["values"] = values;
    return Status::Ok();
  }
  std::string min;
  std::string max;
  HPO_RETURN_IF_ERROR(reader.NumberText(min_node, space_path + ".min", &min));
  HPO_RETURN_IF_ERROR(reader.NumberText(max_node, space_path + ".max", &max));
  (*spec)["min"] = min;
  (*spec)["max"] = max;
  if (step_node) {
    if (distribution == "logUniform") {
      return reader.Fail(step_node, space_path + ".step",
                         "a step with logUniform has no hpo equivalent");
    }
    std::string step;
    HPO_RETURN_IF_ERROR(reader.NumberText(step_node, space_path + ".step", &step));
    (*spec)["distribution"] = "q_uniform";
    (*spec)["q"] = step;
    return Status::Ok();
  }
  (*spec)["distribution"] = distribution == "logUniform" ? "log_uniform_values" : "uniform";
  return Status::Ok();
}

// ${trialParameters.X} -> ${param:REFERENCE}; BadInput for an X that is not a trialParameter.
Status ReplaceTrialParameters(ForeignSpecReader& reader, const YAML::Node& node,
                              const std::string& path,
                              const std::map<std::string, std::string>& references,
                              std::string* text) {
  const std::string prefix = "${trialParameters.";
  std::string result;
  size_t copied = 0;
  for (size_t pos = text->find(prefix); pos != std::string::npos; pos = text->find(prefix, pos)) {
    const size_t end = text->find('}', pos);
    if (end == std::string::npos) break;
    const std::string name = text->substr(pos + prefix.size(), end - pos - prefix.size());
    const auto found = references.find(name);
    if (found == references.end()) {
      return reader.Fail(node, path,
                         "${trialParameters." + name +
                             "} is not among trialTemplate's "
                             "trialParameters");
    }
    result.append(*text, copied, pos - copied);
    result += "${param:" + found->second + "}";
    pos = end + 1;
    copied = pos;
  }
  result.append(*text, copied, std::string::npos);
  *text = std::move(result);
  return Status::Ok();
}

// The container spec list of a trialSpec and the ranks of one trial.
Status FindContainers(ForeignSpecReader& reader, const YAML::Node& trial_spec,
                      const std::string& path, YAML::Node* containers, std::string* containers_path,
                      int64_t* ranks) {
  HPO_RETURN_IF_ERROR(reader.Keys(trial_spec, path, {"apiVersion", "kind", "spec"}, {"metadata"}));
  YAML::Node kind_node;
  HPO_RETURN_IF_ERROR(reader.Required(trial_spec, path, "kind", &kind_node));
  std::string kind;
  HPO_RETURN_IF_ERROR(reader.String(kind_node, path + ".kind", &kind));
  YAML::Node spec;
  HPO_RETURN_IF_ERROR(reader.Required(trial_spec, path, "spec", &spec));
  *ranks = 1;
  YAML::Node pod;
  std::string pod_path;
  if (kind == "Job") {
    pod = spec["template"]["spec"];
    pod_path = path + ".spec.template.spec";
  } else if (kind == "PyTorchJob") {
    const YAML::Node replicas = spec["pytorchReplicaSpecs"];
    const std::string replicas_path = path + ".spec.pytorchReplicaSpecs";
    if (!replicas || !replicas["Master"]) {
      return reader.Fail(spec, replicas_path, "a PyTorchJob trial needs a Master replica");
    }
    *ranks = 0;
    for (const char* role : {"Master", "Worker"}) {
      const YAML::Node replica = replicas[role];
      if (!replica) continue;
      int64_t count = 1;
      if (replica["replicas"]) {
        HPO_RETURN_IF_ERROR(
            reader.Integer(replica["replicas"], replicas_path + "." + role + ".replicas", &count));
      }
      *ranks += count;
    }
    pod = replicas["Master"]["template"]["spec"];
    pod_path = replicas_path + ".Master.template.spec";
  } else {
    return reader.Fail(kind_node, path + ".kind",
                       "'" + kind +
                           "' trials have no hpo equivalent; use a batch/v1 Job or a "
                           "PyTorchJob (its Master and Worker replicas become one trial's ranks)");
  }
  if (!pod || !pod["containers"] || !pod["containers"].IsSequence()) {
    return reader.Fail(spec, pod_path + ".containers", "missing");
  }
  *containers = pod["containers"];
  *containers_path = pod_path + ".containers";
  return Status::Ok();
}

Status TranslateTrialTemplate(ForeignSpecReader& reader, const YAML::Node& templ, YAML::Node* sweep,
                              YAML::Node* config) {
  const std::string path = "spec.trialTemplate";
  if (templ["configMap"]) {
    return reader.Fail(templ["configMap"], path + ".configMap",
                       "a trial template from a ConfigMap cannot be read here; give it inline "
                       "as trialSpec");
  }
  HPO_RETURN_IF_ERROR(
      reader.Keys(templ, path, {"primaryContainerName", "trialParameters", "trialSpec"},
                  {"retain", "primaryPodLabels", "successCondition", "failureCondition"}));
  std::map<std::string, std::string> references;  // trialParameter name -> parameter name
  if (const YAML::Node list = templ["trialParameters"]) {
    if (!list.IsSequence()) return reader.Fail(list, path + ".trialParameters", "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = path + ".trialParameters[" + std::to_string(i) + "]";
      HPO_RETURN_IF_ERROR(reader.Keys(list[i], at, {"name", "reference", "description"}));
      std::string name;
      std::string reference;
      YAML::Node node;
      HPO_RETURN_IF_ERROR(reader.RequiredString(list[i], at, "name", &node, &name));
      HPO_RETURN_IF_ERROR(reader.RequiredString(list[i], at, "reference", &node, &reference));
      const YAML::Node parameters = (*sweep)["parameters"];
      if (!parameters[reference]) {
        return reader.Fail(node, at + ".reference",
                           "'" + reference +
                               "' is not a parameter of spec.parameters (hpo has no trial "
                               "metadata such as ${trialSpec.Name} to pass)");
      }
      references[name] = reference;
    }
  }
  YAML::Node trial_spec;
  HPO_RETURN_IF_ERROR(reader.Required(templ, path, "trialSpec", &trial_spec));
  YAML::Node containers;
  std::string containers_path;
  int64_t ranks = 1;
  HPO_RETURN_IF_ERROR(FindContainers(reader, trial_spec, path + ".trialSpec", &containers,
                                     &containers_path, &ranks));
  std::string primary;
  if (const YAML::Node node = templ["primaryContainerName"]) {
    HPO_RETURN_IF_ERROR(reader.String(node, path + ".primaryContainerName", &primary));
  }
  YAML::Node container;
  std::string container_path;
  for (size_t i = 0; i < containers.size(); ++i) {
    const YAML::Node name = containers[i]["name"];
    const bool named = name && name.IsScalar() && name.Scalar() == primary;
    if (named || (primary.empty() && containers.size() == 1)) {
      container = containers[i];
      container_path = containers_path + "[" + std::to_string(i) + "]";
    } else {
      reader.Ignore(containers[i], containers_path + "[" + std::to_string(i) + "]",
                    "a container other than the primary one");
    }
  }
  if (!container) {
    return reader.Fail(containers, containers_path,
                       primary.empty() ? "several containers and no primaryContainerName"
                                       : "no container named '" + primary + "'");
  }
  YAML::Node command;
  if (const YAML::Node env = container["env"]) {
    if (!env.IsSequence()) return reader.Fail(env, container_path + ".env", "must be a list");
    for (size_t i = 0; i < env.size(); ++i) {
      const std::string at = container_path + ".env[" + std::to_string(i) + "]";
      if (!env[i]["name"] || !env[i]["value"]) {
        reader.Ignore(env[i], at, "only name and value are passed on");
        continue;
      }
      if (command.size() == 0) command.push_back("/usr/bin/env");
      std::string assignment = env[i]["name"].Scalar() + "=" + env[i]["value"].Scalar();
      HPO_RETURN_IF_ERROR(ReplaceTrialParameters(reader, env[i], at, references, &assignment));
      command.push_back(assignment);
    }
  }
  const size_t before = command.size();
  for (const char* key : {"command", "args"}) {
    const YAML::Node list = container[key];
    if (!list) continue;
    if (!list.IsSequence()) return reader.Fail(list, container_path + "." + key, "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = container_path + "." + key + "[" + std::to_string(i) + "]";
      std::string element;
      HPO_RETURN_IF_ERROR(reader.String(list[i], at, &element));
      HPO_RETURN_IF_ERROR(ReplaceTrialParameters(reader, list[i], at, references, &element));
      command.push_back(element);
    }
  }
  if (command.size() == before) {
    return reader.Fail(container, container_path,
                       "the primary container has no command: hpo runs it on this job's ranks "
                       "and cannot know its image's entrypoint");
  }
  reader.Ignore(trial_spec, path + ".trialSpec",
                "only the primary container's command, args and env values are used (its "
                "image, resources and the rest do not apply on this job's ranks)");
  (*sweep)["command"] = command;
  if (ranks != 1) (*config)["ranks_per_trial"] = ranks;
  return Status::Ok();
}

Status TranslateCollector(ForeignSpecReader& reader, const YAML::Node& spec) {
  const std::string path = "spec.metricsCollectorSpec";
  HPO_RETURN_IF_ERROR(reader.Keys(spec, path, {"collector", "source"}));
  if (const YAML::Node collector = spec["collector"]) {
    HPO_RETURN_IF_ERROR(reader.Keys(collector, path + ".collector", {"kind"}));
    std::string kind;
    YAML::Node kind_node;
    HPO_RETURN_IF_ERROR(reader.Required(collector, path + ".collector", "kind", &kind_node));
    HPO_RETURN_IF_ERROR(reader.String(kind_node, path + ".collector.kind", &kind));
    if (kind != "StdOut") {
      return reader.Fail(kind_node, path + ".collector.kind",
                         "'" + kind +
                             "' has no hpo equivalent; hpo reads metrics from the program's "
                             "output (StdOut): name=value pairs, JSON or dict lines");
    }
  }
  if (const YAML::Node source = spec["source"]) {
    return reader.Fail(source, path + ".source",
                       "a custom source or metricsFormat has no hpo equivalent; hpo reads "
                       "name=value pairs (Katib's default format), JSON and dict lines, and "
                       "metric_definitions in an hpo config");
  }
  return Status::Ok();
}

}  // namespace

bool IsKatibExperiment(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  const YAML::Node kind = root["kind"];
  const YAML::Node api = root["apiVersion"];
  return kind && kind.IsScalar() && kind.Scalar() == "Experiment" && api && api.IsScalar() &&
         api.Scalar().rfind("kubeflow.org/", 0) == 0;
}

Status TranslateKatibExperiment(const config_internal::ErrorFormatter& errors,
                                const YAML::Node& root, const std::string& path,
                                std::string* config_text, TranslationNotes* notes) {
  ForeignSpecReader reader(errors, notes);
  HPO_RETURN_IF_ERROR(
      reader.Keys(root, "", {"apiVersion", "kind", "metadata", "spec"}, {"status"}));
  if (root["apiVersion"].Scalar() != "kubeflow.org/v1beta1") {
    return reader.Fail(root["apiVersion"], "apiVersion",
                       "hpo reads Katib's kubeflow.org/v1beta1 Experiments, got '" +
                           root["apiVersion"].Scalar() + "'");
  }
  YAML::Node sweep;
  YAML::Node config;
  if (const YAML::Node metadata = root["metadata"]) {
    HPO_RETURN_IF_ERROR(reader.Keys(metadata, "metadata", {"name"},
                                    {"namespace", "labels", "annotations", "generateName"}));
    if (metadata["name"]) sweep["name"] = metadata["name"].Scalar();
  }
  YAML::Node spec;
  HPO_RETURN_IF_ERROR(reader.Required(root, "", "spec", &spec));
  HPO_RETURN_IF_ERROR(reader.Keys(
      spec, "spec",
      {"objective", "algorithm", "earlyStopping", "parameters", "trialTemplate",
       "metricsCollectorSpec", "maxTrialCount", "maxFailedTrialCount", "parallelTrialCount"},
      {"resumePolicy"}));

  YAML::Node objective;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "objective", &objective));
  HPO_RETURN_IF_ERROR(reader.Keys(
      objective, "spec.objective",
      {"type", "goal", "objectiveMetricName", "additionalMetricNames", "metricStrategies"}));
  YAML::Node metric;
  std::string type;
  std::string metric_name;
  YAML::Node node;
  HPO_RETURN_IF_ERROR(reader.RequiredString(objective, "spec.objective", "type", &node, &type));
  if (type != "maximize" && type != "minimize") {
    return reader.Fail(node, "spec.objective.type", "must be maximize or minimize");
  }
  HPO_RETURN_IF_ERROR(reader.RequiredString(objective, "spec.objective", "objectiveMetricName",
                                            &node, &metric_name));
  metric["name"] = metric_name;
  metric["goal"] = type;
  reader.Origin("sweep.metric", objective, "spec.objective");
  reader.Origin("sweep.metric.name", node, "spec.objective.objectiveMetricName");
  if (const YAML::Node goal = objective["goal"]) {
    std::string target;
    HPO_RETURN_IF_ERROR(reader.NumberText(goal, "spec.objective.goal", &target));
    metric["target"] = target;
    reader.Origin("sweep.metric.target", goal, "spec.objective.goal");
  }
  sweep["metric"] = metric;
  if (const YAML::Node additional = objective["additionalMetricNames"]) {
    if (!additional.IsSequence()) {
      return reader.Fail(additional, "spec.objective.additionalMetricNames", "must be a list");
    }
    YAML::Node metrics;
    for (size_t i = 0; i < additional.size(); ++i) {
      std::string name;
      HPO_RETURN_IF_ERROR(reader.String(
          additional[i], "spec.objective.additionalMetricNames[" + std::to_string(i) + "]", &name));
      metrics.push_back(name);
    }
    config["metrics"] = metrics;
    reader.Origin("metrics", additional, "spec.objective.additionalMetricNames");
  }
  // Katib scores a trial by its best report of the objective unless told `latest`; hpo by its
  // last report.
  bool latest = false;
  if (const YAML::Node strategies = objective["metricStrategies"]) {
    for (size_t i = 0; strategies.IsSequence() && i < strategies.size(); ++i) {
      const YAML::Node name_node = strategies[i]["name"];
      const YAML::Node value = strategies[i]["value"];
      if (name_node && name_node.Scalar() == metric_name && value && value.Scalar() == "latest") {
        latest = true;
      }
    }
  }
  if (!latest) {
    reader.Ignore(objective, "spec.objective",
                  "Katib scores a trial by its best report of " + metric_name +
                      "; hpo by its last (metricStrategies value latest)");
  }

  YAML::Node algorithm;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "algorithm", &algorithm));
  HPO_RETURN_IF_ERROR(TranslateAlgorithm(reader, algorithm, &sweep, &config));
  if (const YAML::Node early = spec["earlyStopping"]) {
    HPO_RETURN_IF_ERROR(TranslateEarlyStopping(reader, early, &config));
  }
  for (const auto& [key, hpo_key] : {std::pair{"maxTrialCount", "run_cap"},
                                     std::pair{"maxFailedTrialCount", "max_failed_trials"}}) {
    if (const YAML::Node count = spec[key]) {
      int64_t value = 0;
      HPO_RETURN_IF_ERROR(reader.Integer(count, std::string("spec.") + key, &value));
      config[hpo_key] = value;
      reader.Origin(hpo_key, count, std::string("spec.") + key);
    }
  }
  if (const YAML::Node parallel = spec["parallelTrialCount"]) {
    reader.Ignore(parallel, "spec.parallelTrialCount",
                  "hpo runs as many trials at once as the job has trial groups (mpirun ranks / "
                  "ranks_per_trial)");
  }

  YAML::Node parameters_list;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "parameters", &parameters_list));
  if (!parameters_list.IsSequence() || parameters_list.size() == 0) {
    return reader.Fail(parameters_list, "spec.parameters", "must be a non-empty list");
  }
  YAML::Node parameters;
  for (size_t i = 0; i < parameters_list.size(); ++i) {
    std::string name;
    YAML::Node parameter;
    HPO_RETURN_IF_ERROR(TranslateParameter(reader, parameters_list[i],
                                           "spec.parameters[" + std::to_string(i) + "]", &name,
                                           &parameter));
    parameters[name] = parameter;
  }
  sweep["parameters"] = parameters;

  YAML::Node templ;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "trialTemplate", &templ));
  reader.Origin("sweep.command", templ, "spec.trialTemplate");
  reader.Origin("ranks_per_trial", templ, "spec.trialTemplate");
  HPO_RETURN_IF_ERROR(TranslateTrialTemplate(reader, templ, &sweep, &config));
  if (const YAML::Node collector = spec["metricsCollectorSpec"]) {
    HPO_RETURN_IF_ERROR(TranslateCollector(reader, collector));
  }

  *config_text = EmitHpoConfig("hpo sweep --config " + path +
                                   ": a Katib Experiment, read as this hpo config (docs/config.md)",
                               sweep, config);
  return Status::Ok();
}

}  // namespace hpo
