#include "experiment.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/foreign_spec_reader.hpp"
#include "platforms/katib/metrics_file.hpp"

namespace hpo {

namespace {

using config_internal::ParseIntegerScalar;

// `node`'s member `key`, or an undefined node where either is missing or `node` is not a mapping
// (yaml-cpp throws when a missing node is indexed or assigned).
YAML::Node KatibMember(const YAML::Node& node, const char* key) {
  if (!node || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node member = node[key];
  return member ? member : YAML::Node(YAML::NodeType::Undefined);
}

// Whether a value is given: Go reads a missing key, null and "" alike as "", which Katib's
// defaulting webhook then fills in.
bool KatibGiven(const YAML::Node& node) {
  return node && !node.IsNull() && !(node.IsScalar() && node.Scalar().empty());
}

// algorithmSettings as name -> (value node, path).
using KatibSettings = std::map<std::string, std::pair<YAML::Node, std::string>>;

Status KatibReadSettings(ForeignSpecReader& reader, const YAML::Node& list, const std::string& path,
                         KatibSettings* settings) {
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

Status KatibTranslateAlgorithm(ForeignSpecReader& reader, const YAML::Node& algorithm,
                               YAML::Node* sweep, YAML::Node* config) {
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
  KatibSettings settings;
  HPO_RETURN_IF_ERROR(KatibReadSettings(reader, algorithm["algorithmSettings"],
                                        path + ".algorithmSettings", &settings));
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

Status KatibTranslateEarlyStopping(ForeignSpecReader& reader, const YAML::Node& early,
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
  KatibSettings settings;
  HPO_RETURN_IF_ERROR(KatibReadSettings(reader, early["algorithmSettings"],
                                        path + ".algorithmSettings", &settings));
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

// categorical and discrete: `list` -> values (discrete numbers as numbers).
Status KatibTranslateListParameter(ForeignSpecReader& reader, const YAML::Node& space,
                                   const std::string& space_path, const std::string& type,
                                   YAML::Node* spec) {
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
      continue;
    }
    int64_t integer = 0;
    if (list[i].IsScalar() && ParseIntegerScalar(list[i].Scalar(), &integer)) {
      values.push_back(integer);
    } else {
      std::string text;
      HPO_RETURN_IF_ERROR(reader.NumberText(list[i], value_path, &text));
      values.push_back(text);
    }
  }
  (*spec)["values"] = values;
  return Status::Ok();
}

// int with min and max: int_uniform, or the values min, min + step, ... with a step.
Status KatibTranslateIntRange(ForeignSpecReader& reader, const YAML::Node& space,
                              const std::string& space_path, const std::string& distribution,
                              YAML::Node* spec) {
  int64_t min = 0;
  int64_t max = 0;
  HPO_RETURN_IF_ERROR(reader.Integer(space["min"], space_path + ".min", &min));
  HPO_RETURN_IF_ERROR(reader.Integer(space["max"], space_path + ".max", &max));
  if (distribution == "logUniform") {
    return reader.Fail(space["distribution"], space_path + ".distribution",
                       "logUniform of an int has no hpo equivalent; use a double");
  }
  const YAML::Node step_node = space["step"];
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
  if (values.size() == 0) return reader.Fail(space["min"], space_path + ".min", "must be <= max");
  (*spec)["values"] = values;
  return Status::Ok();
}

// double with min and max: uniform, log_uniform_values with logUniform, q_uniform with a step.
Status KatibTranslateDoubleRange(ForeignSpecReader& reader, const YAML::Node& space,
                                 const std::string& space_path, const std::string& distribution,
                                 YAML::Node* spec) {
  std::string min;
  std::string max;
  HPO_RETURN_IF_ERROR(reader.NumberText(space["min"], space_path + ".min", &min));
  HPO_RETURN_IF_ERROR(reader.NumberText(space["max"], space_path + ".max", &max));
  (*spec)["min"] = min;
  (*spec)["max"] = max;
  if (const YAML::Node step_node = space["step"]) {
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

// One of spec.parameters, at `at`: its name and its hpo parameter spec.
Status KatibTranslateParameter(ForeignSpecReader& reader, const YAML::Node& item,
                               const std::string& at, std::string* name, YAML::Node* spec) {
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
    return KatibTranslateListParameter(reader, space, space_path, type, spec);
  }
  if (type != "double" && type != "int") {
    return reader.Fail(type_node, at + ".parameterType",
                       "must be double, int, categorical or discrete, got '" + type + "'");
  }
  std::string distribution = "uniform";
  if (const YAML::Node distribution_node = space["distribution"]) {
    HPO_RETURN_IF_ERROR(
        reader.String(distribution_node, space_path + ".distribution", &distribution));
    if (distribution != "uniform" && distribution != "logUniform") {
      return reader.Fail(distribution_node, space_path + ".distribution",
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
  if (type == "int") return KatibTranslateIntRange(reader, space, space_path, distribution, spec);
  return KatibTranslateDoubleRange(reader, space, space_path, distribution, spec);
}

// spec.parameters -> sweep.parameters.
Status KatibTranslateParameters(ForeignSpecReader& reader, const YAML::Node& spec,
                                YAML::Node* sweep) {
  YAML::Node list;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "parameters", &list));
  if (!list.IsSequence() || list.size() == 0) {
    return reader.Fail(list, "spec.parameters", "must be a non-empty list");
  }
  YAML::Node parameters;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string name;
    YAML::Node parameter;
    HPO_RETURN_IF_ERROR(KatibTranslateParameter(
        reader, list[i], "spec.parameters[" + std::to_string(i) + "]", &name, &parameter));
    parameters[name] = parameter;
  }
  (*sweep)["parameters"] = parameters;
  return Status::Ok();
}

// ${trialParameters.X} -> ${param:REFERENCE}; BadInput for an X that is not a trialParameter.
Status KatibReplaceTrialParameters(ForeignSpecReader& reader, const YAML::Node& node,
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
Status KatibFindContainers(ForeignSpecReader& reader, const YAML::Node& trial_spec,
                           const std::string& path, YAML::Node* containers,
                           std::string* containers_path, int64_t* ranks) {
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
    pod = KatibMember(KatibMember(spec, "template"), "spec");
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
    pod = KatibMember(KatibMember(replicas["Master"], "template"), "spec");
    pod_path = replicas_path + ".Master.template.spec";
  } else {
    return reader.Fail(kind_node, path + ".kind",
                       "'" + kind +
                           "' trials have no hpo equivalent; use a batch/v1 Job or a "
                           "PyTorchJob (its Master and Worker replicas become one trial's ranks)");
  }
  const YAML::Node pod_containers = KatibMember(pod, "containers");
  if (!pod_containers || !pod_containers.IsSequence()) {
    return reader.Fail(spec, pod_path + ".containers", "missing");
  }
  *containers = pod_containers;
  *containers_path = pod_path + ".containers";
  return Status::Ok();
}

// trialTemplate.trialParameters: each trialParameter's name -> the parameter it refers to.
Status KatibReadTrialParameters(ForeignSpecReader& reader, const YAML::Node& templ,
                                const std::string& path, const YAML::Node& sweep,
                                std::map<std::string, std::string>* references) {
  const YAML::Node list = templ["trialParameters"];
  if (!list) return Status::Ok();
  if (!list.IsSequence()) return reader.Fail(list, path + ".trialParameters", "must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + ".trialParameters[" + std::to_string(i) + "]";
    HPO_RETURN_IF_ERROR(reader.Keys(list[i], at, {"name", "reference", "description"}));
    std::string name;
    std::string reference;
    YAML::Node node;
    HPO_RETURN_IF_ERROR(reader.RequiredString(list[i], at, "name", &node, &name));
    HPO_RETURN_IF_ERROR(reader.RequiredString(list[i], at, "reference", &node, &reference));
    if (!sweep["parameters"][reference]) {
      return reader.Fail(node, at + ".reference",
                         "'" + reference +
                             "' is not a parameter of spec.parameters (hpo has no trial "
                             "metadata such as ${trialSpec.Name} to pass)");
    }
    (*references)[name] = reference;
  }
  return Status::Ok();
}

// The primary container among `containers`: the one named primaryContainerName, or the only one.
Status KatibPickPrimaryContainer(ForeignSpecReader& reader, const YAML::Node& templ,
                                 const std::string& path, const YAML::Node& containers,
                                 const std::string& containers_path, YAML::Node* container,
                                 std::string* container_path) {
  std::string primary;
  if (const YAML::Node node = templ["primaryContainerName"]) {
    HPO_RETURN_IF_ERROR(reader.String(node, path + ".primaryContainerName", &primary));
  }
  bool found = false;
  for (size_t i = 0; i < containers.size(); ++i) {
    const YAML::Node name = KatibMember(containers[i], "name");
    const bool named = name && name.IsScalar() && name.Scalar() == primary;
    const std::string at = containers_path + "[" + std::to_string(i) + "]";
    if (!found && (named || (primary.empty() && containers.size() == 1))) {
      *container = containers[i];
      *container_path = at;
      found = true;
    } else {
      reader.Ignore(containers[i], at, "a container other than the primary one");
    }
  }
  if (!found) {
    return reader.Fail(containers, containers_path,
                       primary.empty() ? "several containers and no primaryContainerName"
                                       : "no container named '" + primary + "'");
  }
  return Status::Ok();
}

// The container's env values -> `environment:` (as written; ${trialParameters.X} ->
// ${param:REFERENCE}). An entry without a value (valueFrom) is listed as not passed on.
Status KatibTranslateEnvironment(ForeignSpecReader& reader, const YAML::Node& container,
                                 const std::string& container_path,
                                 const std::map<std::string, std::string>& references,
                                 YAML::Node* config) {
  const YAML::Node env = container["env"];
  if (!env) return Status::Ok();
  const std::string env_path = container_path + ".env";
  if (!env.IsSequence()) return reader.Fail(env, env_path, "must be a list");
  YAML::Node environment;
  for (size_t i = 0; i < env.size(); ++i) {
    const std::string at = env_path + "[" + std::to_string(i) + "]";
    const YAML::Node name_node = KatibMember(env[i], "name");
    const YAML::Node value_node = KatibMember(env[i], "value");
    if (!name_node || !value_node) {
      reader.Ignore(env[i], at, "only name and value are passed on");
      continue;
    }
    std::string name;
    std::string value;
    HPO_RETURN_IF_ERROR(reader.String(name_node, at + ".name", &name));
    HPO_RETURN_IF_ERROR(reader.String(value_node, at + ".value", &value));
    HPO_RETURN_IF_ERROR(
        KatibReplaceTrialParameters(reader, value_node, at + ".value", references, &value));
    environment[name] = value;
    reader.Origin("environment." + name, env[i], at);
  }
  if (environment.size() == 0) return Status::Ok();
  (*config)["environment"] = environment;
  reader.Origin("environment", env, env_path);
  return Status::Ok();
}

// The container's command and args -> sweep.command.
Status KatibTranslateCommand(ForeignSpecReader& reader, const YAML::Node& container,
                             const std::string& container_path,
                             const std::map<std::string, std::string>& references,
                             YAML::Node* sweep) {
  YAML::Node command;
  for (const char* key : {"command", "args"}) {
    const YAML::Node list = container[key];
    if (!list) continue;
    if (!list.IsSequence()) return reader.Fail(list, container_path + "." + key, "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = container_path + "." + key + "[" + std::to_string(i) + "]";
      std::string element;
      HPO_RETURN_IF_ERROR(reader.String(list[i], at, &element));
      HPO_RETURN_IF_ERROR(KatibReplaceTrialParameters(reader, list[i], at, references, &element));
      command.push_back(element);
    }
  }
  if (command.size() == 0) {
    return reader.Fail(container, container_path,
                       "the primary container has no command: hpo runs it on this job's ranks "
                       "and cannot know its image's entrypoint");
  }
  (*sweep)["command"] = command;
  return Status::Ok();
}

Status KatibTranslateTrialTemplate(ForeignSpecReader& reader, const YAML::Node& templ,
                                   YAML::Node* sweep, YAML::Node* config) {
  const std::string path = "spec.trialTemplate";
  if (const YAML::Node config_map = KatibMember(templ, "configMap")) {
    return reader.Fail(config_map, path + ".configMap",
                       "a trial template from a ConfigMap cannot be read here; give it inline "
                       "as trialSpec");
  }
  HPO_RETURN_IF_ERROR(
      reader.Keys(templ, path, {"primaryContainerName", "trialParameters", "trialSpec"},
                  {"retain", "primaryPodLabels", "successCondition", "failureCondition"}));
  std::map<std::string, std::string> references;  // trialParameter name -> parameter name
  HPO_RETURN_IF_ERROR(KatibReadTrialParameters(reader, templ, path, *sweep, &references));
  YAML::Node trial_spec;
  HPO_RETURN_IF_ERROR(reader.Required(templ, path, "trialSpec", &trial_spec));
  YAML::Node containers;
  std::string containers_path;
  int64_t ranks = 1;
  HPO_RETURN_IF_ERROR(KatibFindContainers(reader, trial_spec, path + ".trialSpec", &containers,
                                          &containers_path, &ranks));
  YAML::Node container;
  std::string container_path;
  HPO_RETURN_IF_ERROR(KatibPickPrimaryContainer(reader, templ, path, containers, containers_path,
                                                &container, &container_path));
  HPO_RETURN_IF_ERROR(
      KatibTranslateEnvironment(reader, container, container_path, references, config));
  HPO_RETURN_IF_ERROR(KatibTranslateCommand(reader, container, container_path, references, sweep));
  reader.Ignore(trial_spec, path + ".trialSpec",
                "only the primary container's command, args and env values are used (its "
                "image, resources and the rest do not apply on this job's ranks)");
  if (ranks != 1) (*config)["ranks_per_trial"] = ranks;
  return Status::Ok();
}

// source.filter.metricsFormat (Go regexes) -> ECMAScript filters (KatibFilterAsEcmaScript).
Status KatibReadMetricsFormat(ForeignSpecReader& reader, const YAML::Node& filter,
                              const std::string& path, YAML::Node* filters) {
  HPO_RETURN_IF_ERROR(reader.Keys(filter, path, {"metricsFormat"}));
  const YAML::Node formats = filter["metricsFormat"];
  if (!formats) return Status::Ok();
  if (!formats.IsSequence()) return reader.Fail(formats, path + ".metricsFormat", "must be a list");
  for (size_t i = 0; i < formats.size(); ++i) {
    const std::string at = path + ".metricsFormat[" + std::to_string(i) + "]";
    std::string re2;
    HPO_RETURN_IF_ERROR(reader.String(formats[i], at, &re2));
    std::string ecma_script;
    std::string why;
    if (!KatibFilterAsEcmaScript(re2, &ecma_script, &why)) {
      return reader.Fail(formats[i], at, "'" + re2 + "' cannot be read here: " + why);
    }
    filters->push_back(ecma_script);
  }
  return Status::Ok();
}

// StdOut: hpo reads Katib's default format from the program's output; a metricsFormat other than
// the default, or another source, has no equivalent.
Status KatibCheckStdOutSource(ForeignSpecReader& reader, const YAML::Node& source,
                              const std::string& path) {
  const YAML::Node filter = KatibMember(source, "filter");
  const YAML::Node formats = KatibMember(filter, "metricsFormat");
  bool only_default = source.IsMap() && source.size() == 1 && filter.IsMap() &&
                      filter.size() == 1 && formats && formats.IsSequence();
  for (size_t i = 0; only_default && i < formats.size(); ++i) {
    only_default = formats[i].IsScalar() && formats[i].Scalar() == kKatibDefaultFilter;
  }
  if (only_default) return Status::Ok();
  return reader.Fail(source, path,
                     "a custom source or metricsFormat has no hpo equivalent with the StdOut "
                     "collector; hpo reads name=value pairs (Katib's default format), JSON and "
                     "dict lines, and metric_definitions in an hpo config (or use kind File: "
                     "its metricsFormat applies to the file)");
}

// File: source.fileSystemPath {path, kind: File, format: TEXT|JSON} and source.filter ->
// metrics_file; Katib's defaults (experiment_defaults.go) for what is not given or empty.
Status KatibTranslateFileCollector(ForeignSpecReader& reader, const YAML::Node& collector_spec,
                                   const std::string& path, YAML::Node* config) {
  const YAML::Node source = collector_spec["source"];
  const std::string source_path = path + ".source";
  if (source) HPO_RETURN_IF_ERROR(reader.Keys(source, source_path, {"fileSystemPath", "filter"}));
  std::string file = "/var/log/katib/metrics.log";  // Katib's DefaultFilePath
  std::string format = "TEXT";
  const YAML::Node file_system = KatibMember(source, "fileSystemPath");
  const std::string file_system_path = source_path + ".fileSystemPath";
  if (KatibGiven(file_system)) {
    HPO_RETURN_IF_ERROR(reader.Keys(file_system, file_system_path, {"path", "kind", "format"}));
    const YAML::Node kind = file_system["kind"];
    if (KatibGiven(kind) && !(kind.IsScalar() && kind.Scalar() == "File")) {
      return reader.Fail(kind, file_system_path + ".kind",
                         "must be File for the File collector, got '" + kind.Scalar() +
                             "' (hpo reads one file the program writes)");
    }
    if (const YAML::Node node = file_system["path"]; KatibGiven(node)) {
      HPO_RETURN_IF_ERROR(reader.String(node, file_system_path + ".path", &file));
      if (file.empty() || file.front() != '/' || file.back() == '/') {
        return reader.Fail(node, file_system_path + ".path",
                           "must be an absolute path to a file, got '" + file + "'");
      }
      reader.Origin("metrics_file.path", node, file_system_path + ".path");
    }
    if (const YAML::Node node = file_system["format"]; KatibGiven(node)) {
      HPO_RETURN_IF_ERROR(reader.String(node, file_system_path + ".format", &format));
      if (format != "TEXT" && format != "JSON") {
        return reader.Fail(node, file_system_path + ".format",
                           "must be TEXT or JSON, got '" + format + "'");
      }
    }
  }
  YAML::Node metrics_file;
  metrics_file["path"] = file;
  metrics_file["format"] = format;
  if (const YAML::Node filter = KatibMember(source, "filter"); KatibGiven(filter)) {
    if (format == "JSON") {
      return reader.Fail(filter, source_path + ".filter",
                         "a filter applies to format TEXT only (Katib: filter must be nil when "
                         "format of metrics file is json)");
    }
    YAML::Node filters;
    HPO_RETURN_IF_ERROR(KatibReadMetricsFormat(reader, filter, source_path + ".filter", &filters));
    if (filters.size() > 0) metrics_file["filters"] = filters;
    reader.Origin("metrics_file.filters", filter, source_path + ".filter.metricsFormat");
  }
  (*config)["metrics_file"] = metrics_file;
  reader.Origin("metrics_file", collector_spec, path);
  return Status::Ok();
}

// spec.metricsCollectorSpec: StdOut (Katib's default) as hpo reads output anyway; File ->
// metrics_file; any other kind is refused, naming it.
Status KatibTranslateCollector(ForeignSpecReader& reader, const YAML::Node& spec,
                               YAML::Node* config) {
  const std::string path = "spec.metricsCollectorSpec";
  HPO_RETURN_IF_ERROR(reader.Keys(spec, path, {"collector", "source"}));
  std::string kind = "StdOut";
  YAML::Node kind_node;
  if (const YAML::Node collector = spec["collector"]) {
    HPO_RETURN_IF_ERROR(reader.Keys(collector, path + ".collector", {"kind", "customCollector"}));
    HPO_RETURN_IF_ERROR(reader.Required(collector, path + ".collector", "kind", &kind_node));
    HPO_RETURN_IF_ERROR(reader.String(kind_node, path + ".collector.kind", &kind));
  }
  if (kind == "StdOut") {
    const YAML::Node source = spec["source"];
    return source ? KatibCheckStdOutSource(reader, source, path + ".source") : Status::Ok();
  }
  if (kind == "File") return KatibTranslateFileCollector(reader, spec, path, config);
  if (kind == "TensorFlowEvent") {
    return reader.Fail(kind_node, path + ".collector.kind",
                       "'TensorFlowEvent' has no hpo equivalent: hpo has no reader of "
                       "TensorFlow event files (no C++ one is packaged without TensorFlow "
                       "itself); have the program write its metrics to a file and use kind "
                       "File (format TEXT or JSON), or print them (StdOut)");
  }
  return reader.Fail(kind_node, path + ".collector.kind",
                     "'" + kind +
                         "' has no hpo equivalent; hpo reads metrics from the program's output "
                         "(StdOut: name=value pairs, JSON or dict lines) or from a file it "
                         "writes (File)");
}

// hpo gives each trial its own metrics file by replacing the path where the command or an env
// value names it: a path named by neither cannot be given.
Status KatibCheckMetricsFileIsPassed(ForeignSpecReader& reader, const YAML::Node& collector_spec,
                                     const YAML::Node& sweep, const YAML::Node& config) {
  const YAML::Node metrics_file = config["metrics_file"];
  if (!metrics_file) return Status::Ok();
  const std::string file = metrics_file["path"].Scalar();
  for (const YAML::Node& element : sweep["command"]) {
    if (element.Scalar().find(file) != std::string::npos) return Status::Ok();
  }
  for (const auto& entry : config["environment"]) {
    if (entry.second.Scalar().find(file) != std::string::npos) return Status::Ok();
  }
  const YAML::Node path_node =
      KatibMember(KatibMember(KatibMember(collector_spec, "source"), "fileSystemPath"), "path");
  return reader.Fail(path_node ? path_node : collector_spec,
                     path_node ? "spec.metricsCollectorSpec.source.fileSystemPath.path"
                               : "spec.metricsCollectorSpec",
                     file +
                         " is named neither in the primary container's command nor in an env "
                         "value: hpo gives each trial a file of its own in its place (pass it "
                         "to the program, e.g. --log-path=" +
                         file + ")");
}

// spec.objective -> sweep.metric and metrics.
Status KatibTranslateObjective(ForeignSpecReader& reader, const YAML::Node& objective,
                               YAML::Node* sweep, YAML::Node* config) {
  const std::string path = "spec.objective";
  HPO_RETURN_IF_ERROR(reader.Keys(
      objective, path,
      {"type", "goal", "objectiveMetricName", "additionalMetricNames", "metricStrategies"}));
  YAML::Node metric;
  std::string type;
  std::string metric_name;
  YAML::Node node;
  HPO_RETURN_IF_ERROR(reader.RequiredString(objective, path, "type", &node, &type));
  if (type != "maximize" && type != "minimize") {
    return reader.Fail(node, path + ".type", "must be maximize or minimize");
  }
  HPO_RETURN_IF_ERROR(
      reader.RequiredString(objective, path, "objectiveMetricName", &node, &metric_name));
  metric["name"] = metric_name;
  metric["goal"] = type;
  reader.Origin("sweep.metric", objective, path);
  reader.Origin("sweep.metric.name", node, path + ".objectiveMetricName");
  if (const YAML::Node goal = objective["goal"]) {
    std::string target;
    HPO_RETURN_IF_ERROR(reader.NumberText(goal, path + ".goal", &target));
    metric["target"] = target;
    reader.Origin("sweep.metric.target", goal, path + ".goal");
  }
  (*sweep)["metric"] = metric;
  if (const YAML::Node additional = objective["additionalMetricNames"]) {
    if (!additional.IsSequence()) {
      return reader.Fail(additional, path + ".additionalMetricNames", "must be a list");
    }
    YAML::Node metrics;
    for (size_t i = 0; i < additional.size(); ++i) {
      std::string name;
      HPO_RETURN_IF_ERROR(reader.String(
          additional[i], path + ".additionalMetricNames[" + std::to_string(i) + "]", &name));
      metrics.push_back(name);
    }
    (*config)["metrics"] = metrics;
    reader.Origin("metrics", additional, path + ".additionalMetricNames");
  }
  // Katib scores a trial by its best report of the objective unless told `latest`; hpo by its
  // last report.
  bool latest = false;
  const YAML::Node strategies = objective["metricStrategies"];
  for (size_t i = 0; strategies && strategies.IsSequence() && i < strategies.size(); ++i) {
    const YAML::Node name_node = KatibMember(strategies[i], "name");
    const YAML::Node value = KatibMember(strategies[i], "value");
    latest = latest || (name_node && name_node.Scalar() == metric_name && value &&
                        value.Scalar() == "latest");
  }
  if (!latest) {
    reader.Ignore(objective, path,
                  "Katib scores a trial by its best report of " + metric_name +
                      "; hpo by its last (metricStrategies value latest)");
  }
  return Status::Ok();
}

// maxTrialCount, maxFailedTrialCount -> run_cap, max_failed_trials; parallelTrialCount listed.
Status KatibTranslateCounts(ForeignSpecReader& reader, const YAML::Node& spec, YAML::Node* config) {
  for (const auto& [key, hpo_key] : {std::pair{"maxTrialCount", "run_cap"},
                                     std::pair{"maxFailedTrialCount", "max_failed_trials"}}) {
    if (const YAML::Node count = spec[key]) {
      int64_t value = 0;
      HPO_RETURN_IF_ERROR(reader.Integer(count, std::string("spec.") + key, &value));
      (*config)[hpo_key] = value;
      reader.Origin(hpo_key, count, std::string("spec.") + key);
    }
  }
  if (const YAML::Node parallel = spec["parallelTrialCount"]) {
    reader.Ignore(parallel, "spec.parallelTrialCount",
                  "hpo runs as many trials at once as the job has trial groups (mpirun ranks / "
                  "ranks_per_trial)");
  }
  return Status::Ok();
}

// spec's sections, in the order their translations depend on one another (the trial template
// refers to the parameters; the metrics file must be named by the command or env).
Status KatibTranslateSpec(ForeignSpecReader& reader, const YAML::Node& spec, YAML::Node* sweep,
                          YAML::Node* config) {
  HPO_RETURN_IF_ERROR(reader.Keys(
      spec, "spec",
      {"objective", "algorithm", "earlyStopping", "parameters", "trialTemplate",
       "metricsCollectorSpec", "maxTrialCount", "maxFailedTrialCount", "parallelTrialCount"},
      {"resumePolicy"}));
  YAML::Node objective;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "objective", &objective));
  HPO_RETURN_IF_ERROR(KatibTranslateObjective(reader, objective, sweep, config));
  YAML::Node algorithm;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "algorithm", &algorithm));
  HPO_RETURN_IF_ERROR(KatibTranslateAlgorithm(reader, algorithm, sweep, config));
  if (const YAML::Node early = spec["earlyStopping"]) {
    HPO_RETURN_IF_ERROR(KatibTranslateEarlyStopping(reader, early, config));
  }
  HPO_RETURN_IF_ERROR(KatibTranslateCounts(reader, spec, config));
  HPO_RETURN_IF_ERROR(KatibTranslateParameters(reader, spec, sweep));
  YAML::Node templ;
  HPO_RETURN_IF_ERROR(reader.Required(spec, "spec", "trialTemplate", &templ));
  reader.Origin("sweep.command", templ, "spec.trialTemplate");
  reader.Origin("ranks_per_trial", templ, "spec.trialTemplate");
  HPO_RETURN_IF_ERROR(KatibTranslateTrialTemplate(reader, templ, sweep, config));
  if (const YAML::Node collector = spec["metricsCollectorSpec"]) {
    HPO_RETURN_IF_ERROR(KatibTranslateCollector(reader, collector, config));
    HPO_RETURN_IF_ERROR(KatibCheckMetricsFileIsPassed(reader, collector, *sweep, *config));
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
  HPO_RETURN_IF_ERROR(KatibTranslateSpec(reader, spec, &sweep, &config));
  *config_text = EmitHpoConfig("hpo sweep --config " + path +
                                   ": a Katib Experiment, read as this hpo config (docs/config.md)",
                               sweep, config);
  return Status::Ok();
}

}  // namespace hpo
