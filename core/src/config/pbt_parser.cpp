// ParsePbt: the `pbt:` key beside `sweep:` (population-based training; see PbtSpec).
#include <string>
#include <utility>
#include <vector>

#include "section_parsers.hpp"

namespace hpo::config_internal {

namespace {

// pbt:'s numbers and strict, into *parsed, in the order they are checked.
Status ReadPbtSettings(const ErrorFormatter& errors, const Field& field,
                       const MappingFields& fields, const SweepConfig& config, PbtSpec* parsed) {
  const Field* population = fields.Find("population");
  if (population == nullptr) return fields.Missing("population", "how many members train at once");
  HPO_RETURN_IF_ERROR(ReadInteger(errors, *population, 2, 1 << 20, &parsed->population));
  const int64_t epochs = config.execution.epochs;
  if (epochs == kUnboundedEpochs) {
    return errors.At(field,
                     "a command sweep with population-based training needs `epochs` (the steps "
                     "each trial reports in all), so that members know their last step");
  }
  if (const Field* interval = fields.Find("perturbation_interval")) {
    HPO_RETURN_IF_ERROR(ReadInteger(errors, *interval, 1, 1 << 30, &parsed->perturbation_interval));
    if (parsed->perturbation_interval >= epochs) {
      return errors.At(*interval, "must be < epochs (" + std::to_string(epochs) +
                                      "): members exploit and explore between epochs");
    }
  } else if (epochs < 2) {
    return errors.At(field, "needs epochs >= 2: members exploit and explore between epochs");
  }
  if (const Field* quantile = fields.Find("quantile")) {
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *quantile, &parsed->quantile));
    if (!(parsed->quantile > 0.0 && parsed->quantile <= 0.5)) {
      return errors.At(*quantile, "must be in (0, 0.5], got " + FormatNumber(parsed->quantile));
    }
  }
  if (const Field* probability = fields.Find("resample_probability")) {
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *probability, &parsed->resample_probability));
    if (!(parsed->resample_probability >= 0.0 && parsed->resample_probability <= 1.0)) {
      return errors.At(*probability,
                       "must be in [0, 1], got " + FormatNumber(parsed->resample_probability));
    }
  }
  if (const Field* strict = fields.Find("strict")) {
    if (!strict->value.IsScalar() || ResolveScalar(strict->value) != ScalarKind::kBool) {
      return errors.At(*strict, "must be true or false");
    }
    const std::string& text = strict->value.Scalar();
    parsed->strict = text == "true" || text == "True" || text == "TRUE";
  }
  return Status::Ok();
}

// pbt.mutations: one name or a list of them, each a sweep parameter that is not a constant, that
// a child can take another value of and still load its parent's checkpoint, named once.
Status ReadPbtMutations(const ErrorFormatter& errors, const MappingFields& fields,
                        const SweepConfig& config, const TaskDescription& task,
                        std::vector<std::string>* mutations_out) {
  const Field* mutations = fields.Find("mutations");
  if (mutations == nullptr) return fields.Missing("mutations", "the parameters explore perturbs");
  std::vector<Field> entries;
  if (mutations->value.IsSequence()) {
    for (size_t i = 0; i < mutations->value.size(); ++i) {
      const YAML::Node entry = mutations->value[i];
      const int line = LineOf(entry);
      entries.push_back({mutations->key, mutations->path + "[" + std::to_string(i) + "]",
                         line > 0 ? line : mutations->line, entry});
    }
  } else {
    entries.push_back(*mutations);
  }
  if (entries.empty()) return errors.At(*mutations, "must name at least one parameter");
  for (const Field& entry : entries) {
    std::string name;
    HPO_RETURN_IF_ERROR(ReadString(errors, entry, &name));
    const ParameterSpec* found = nullptr;
    for (const ParameterSpec& parameter : config.sweep.parameters) {
      if (parameter.name == name) found = &parameter;
    }
    if (found == nullptr) {
      return errors.At(entry, "'" + name + "' is not a parameter of the sweep");
    }
    if (found->distribution == Distribution::kConstant) {
      return errors.At(entry, "'" + name + "' is a constant (value:): nothing to perturb");
    }
    if (task.BindsCheckpoint(name, config)) {
      return errors.At(entry, "'" + name +
                                  "' shapes the model or picks the optimizer, so a child could "
                                  "not load its parent's checkpoint under another value; mutate "
                                  "training settings (lr, weight_decay, dropout, batch_size)");
    }
    for (const std::string& earlier : *mutations_out) {
      if (earlier == name) return errors.At(entry, "names '" + name + "' twice");
    }
    mutations_out->push_back(name);
  }
  return Status::Ok();
}

// What population-based training cannot be combined with.
Status CheckPbtCombinations(const ErrorFormatter& errors, const Field& field,
                            const MappingFields& top, const SweepConfig& config) {
  if (top.Has("median_stopping") || config.sweep.early_terminate.enabled) {
    return errors.At(field,
                     "population-based training replaces early stopping: remove "
                     "sweep.early_terminate and median_stopping");
  }
  if (config.sweep.objectives.size() > 1) {
    return errors.At(field,
                     "population-based training ranks members by one objective; "
                     "sweep.metric lists " +
                         std::to_string(config.sweep.objectives.size()));
  }
  if (config.checkpoint.interval == 0) {
    return errors.At(field,
                     "population-based training needs checkpoints (members continue from "
                     "them): remove checkpoint.interval: 0");
  }
  return Status::Ok();
}

}  // namespace

Status ParsePbt(const ErrorFormatter& errors, const Field& field, const MappingFields& top,
                const SweepConfig& config, const TaskDescription& task, PbtSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"population", "perturbation_interval", "quantile",
                                        "mutations", "resample_probability", "strict"}));
  PbtSpec parsed;
  parsed.enabled = true;
  parsed.line = field.line;
  HPO_RETURN_IF_ERROR(ReadPbtSettings(errors, field, fields, config, &parsed));
  HPO_RETURN_IF_ERROR(ReadPbtMutations(errors, fields, config, task, &parsed.mutations));
  HPO_RETURN_IF_ERROR(CheckPbtCombinations(errors, field, top, config));
  *spec = std::move(parsed);
  return Status::Ok();
}

}  // namespace hpo::config_internal
