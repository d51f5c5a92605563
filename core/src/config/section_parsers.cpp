// The config sections that steer search and early stopping (see section_parsers.hpp). The keys of
// `sweep.early_terminate` follow W&B's hyperband_stopping schema (additionalProperties false);
// when both min_iter and max_iter are given W&B silently uses max_iter, which is an error here.
#include "section_parsers.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace hpo::config_internal {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Reads `key` of `fields`, when present, as an integer >= minimum into `value`.
Status ReadOptionalInteger(const ErrorFormatter& errors, const MappingFields& fields,
                           const char* key, int64_t minimum, int64_t* value) {
  if (const Field* entry = fields.Find(key)) {
    return ReadInteger(errors, *entry, minimum, kInt64Max, value);
  }
  return Status::Ok();
}

// floor(max_iter / eta^s) with early exit, free of overflow.
int64_t DivideByPower(int64_t max_iter, int64_t eta, int64_t s) {
  int64_t quotient = max_iter;
  for (int64_t k = 0; k < s && quotient > 0; ++k) quotient /= eta;
  return quotient;
}

Status CheckRungsBelowEpochs(const ErrorFormatter& errors, const MappingFields& fields,
                             int64_t epochs, const HyperbandSpec& spec) {
  const std::string epochs_text = std::to_string(epochs);
  if (spec.min_iter) {
    if (*spec.min_iter >= epochs) {
      return errors.At(*fields.Find("min_iter"),
                       "must be < epochs (min_iter " + std::to_string(*spec.min_iter) +
                           ", epochs " + epochs_text +
                           "): a rung at or past the last epoch can never stop anything");
    }
    return Status::Ok();
  }
  if (*spec.max_iter > epochs) {
    return errors.At(*fields.Find("max_iter"), "must be <= epochs (max_iter " +
                                                   std::to_string(*spec.max_iter) + ", epochs " +
                                                   epochs_text + ")");
  }
  if (DivideByPower(*spec.max_iter, spec.eta, *spec.s) < 1) {
    return errors.At(*fields.Find("s"),
                     "max_iter / eta^s must be >= 1 (max_iter " + std::to_string(*spec.max_iter) +
                         ", eta " + std::to_string(spec.eta) + ", s " + std::to_string(*spec.s) +
                         "): its first rung would be epoch 0");
  }
  return Status::Ok();
}

}  // namespace

Status ParseEarlyTerminate(const ErrorFormatter& errors, const Field& field, int64_t epochs,
                           HyperbandSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"type", "min_iter", "max_iter", "s", "eta", "strict"}));
  const Field* type = fields.Find("type");
  if (type == nullptr) return fields.Missing("type", "hyperband");
  std::string name;
  HPO_RETURN_IF_ERROR(ReadString(errors, *type, &name));
  if (name != "hyperband") return errors.At(*type, "must be hyperband, got '" + name + "'");

  HyperbandSpec parsed;
  parsed.enabled = true;
  HPO_RETURN_IF_ERROR(ReadOptionalInteger(errors, fields, "eta", 2, &parsed.eta));
  const std::pair<const char*, std::optional<int64_t>*> optional_keys[] = {
      {"min_iter", &parsed.min_iter}, {"max_iter", &parsed.max_iter}, {"s", &parsed.s}};
  for (const auto& [key, target] : optional_keys) {
    int64_t value = 0;
    if (const Field* entry = fields.Find(key)) {
      HPO_RETURN_IF_ERROR(ReadInteger(errors, *entry, 1, kInt64Max, &value));
      *target = value;
    }
  }
  if (const Field* strict = fields.Find("strict")) {
    if (!strict->value.IsScalar() || ResolveScalar(strict->value) != ScalarKind::kBool) {
      return errors.At(*strict, "must be true or false");
    }
    parsed.strict = strict->value.as<bool>();
  }
  if (parsed.min_iter && parsed.max_iter) {
    return errors.At(*fields.Find("max_iter"),
                     "give either min_iter, or max_iter and s, not both (min_iter is set)");
  }
  if (parsed.s && !parsed.max_iter) {
    return errors.At(*fields.Find("s"), "is only used with max_iter (or give min_iter alone)");
  }
  if (parsed.max_iter && !parsed.s) {
    return fields.Missing("s", "max_iter needs s, the number of rungs below it");
  }
  if (!parsed.min_iter && !parsed.max_iter) {
    return errors.At(field, "needs min_iter, or max_iter and s (W&B's hyperband_stopping)");
  }
  HPO_RETURN_IF_ERROR(CheckRungsBelowEpochs(errors, fields, epochs, parsed));
  *spec = parsed;
  return Status::Ok();
}

Status ParseSearchOptions(const ErrorFormatter& errors, const Field& field, SearchMethod method,
                          SearchOptions* options) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"model", "startup_trials", "candidates", "sampler"}));
  const std::string method_name = SearchMethodName(method);
  SearchOptions parsed;
  if (const Field* model = fields.Find("model")) {
    std::string name;
    HPO_RETURN_IF_ERROR(ReadString(errors, *model, &name));
    // With method random, the curve model only judges trials (its scheduler); draws stay random.
    if (method != SearchMethod::kBayes && !(method == SearchMethod::kRandom && name == "curves")) {
      return errors.At(*model, "only used by method bayes (this sweep's method is " + method_name +
                                   "; method random takes model curves alone)");
    }
    const auto* found =
        std::find_if(std::begin(kBayesModels), std::end(kBayesModels),
                     [&](BayesModel known) { return name == BayesModelName(known); });
    if (found == std::end(kBayesModels)) {
      return errors.At(
          *model, "must be tpe, tpe_independent, gp, curves or curves_tpe, got '" + name + "'");
    }
    parsed.model = *found;
    parsed.model_given = true;
  }
  if (method != SearchMethod::kBayes) {
    // startup_trials also sets the curve scheduler's explore-first count.
    const Field* startup =
        parsed.model == BayesModel::kCurves ? nullptr : fields.Find("startup_trials");
    for (const Field* entry : {startup, fields.Find("candidates")}) {
      if (entry != nullptr) {
        return errors.At(*entry,
                         "only used by method bayes (this sweep's method is " + method_name + ")");
      }
    }
  }
  HPO_RETURN_IF_ERROR(
      ReadOptionalInteger(errors, fields, "startup_trials", 1, &parsed.startup_trials));
  HPO_RETURN_IF_ERROR(ReadOptionalInteger(errors, fields, "candidates", 1, &parsed.candidates));
  const Field* candidates = fields.Find("candidates");
  parsed.candidates_given = candidates != nullptr;
  if (candidates != nullptr && parsed.model == BayesModel::kGp) {
    return errors.At(*candidates, "only used by model tpe (model gp scores its own candidate set)");
  }
  if (const Field* sampler = fields.Find("sampler")) {
    parsed.sampler_given = true;
    std::string name;
    HPO_RETURN_IF_ERROR(ReadString(errors, *sampler, &name));
    if (name == "random") {
      parsed.sampler = RandomSampler::kIndependent;
    } else if (name == "sobol") {
      if (method == SearchMethod::kGrid) {
        return errors.At(*sampler,
                         "sobol is only used by methods random and bayes (this sweep's "
                         "method is " +
                             method_name + ")");
      }
      parsed.sampler = RandomSampler::kSobol;
    } else {
      return errors.At(*sampler, "must be random or sobol, got '" + name + "'");
    }
  }
  *options = parsed;
  return Status::Ok();
}

Status ParseAsha(const ErrorFormatter& errors, const Field& field, HyperbandSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"promotion"}));
  if (!spec->enabled) {
    return errors.At(field,
                     "needs sweep.early_terminate (type hyperband): its settings apply to ASHA's "
                     "rungs");
  }
  if (const Field* promotion = fields.Find("promotion")) {
    if (!promotion->value.IsScalar() || ResolveScalar(promotion->value) != ScalarKind::kBool) {
      return errors.At(*promotion, "must be true or false");
    }
    spec->promotion = promotion->value.as<bool>();
  }
  return Status::Ok();
}

Status ParseMedianStopping(const ErrorFormatter& errors, const Field& field, int64_t epochs,
                           MedianStoppingSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"min_trials", "start_step"}));
  MedianStoppingSpec parsed;
  parsed.enabled = true;
  HPO_RETURN_IF_ERROR(ReadOptionalInteger(errors, fields, "min_trials", 1, &parsed.min_trials));
  HPO_RETURN_IF_ERROR(ReadOptionalInteger(errors, fields, "start_step", 1, &parsed.start_step));
  if (parsed.start_step >= epochs) {
    const Field* start_step = fields.Find("start_step");
    const int line = start_step != nullptr ? start_step->line : field.line;
    return errors.At(line, fields.PathOf("start_step"),
                     "must be < epochs (start_step " + std::to_string(parsed.start_step) +
                         (start_step != nullptr ? "" : ", the default") + ", epochs " +
                         std::to_string(epochs) +
                         "): the rule never stops a trial at its last epoch, so it would never "
                         "stop anything");
  }
  *spec = parsed;
  return Status::Ok();
}

Status ParseBudget(const ErrorFormatter& errors, const MappingFields& top, BudgetSpec* budget) {
  BudgetSpec parsed;
  if (const Field* time_budget = top.Find("time_budget_s")) {
    double seconds = 0.0;
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *time_budget, &seconds));
    if (seconds <= 0.0) {
      return errors.At(*time_budget, "must be > 0, got " + FormatNumber(seconds));
    }
    parsed.time_budget_s = seconds;
  }
  if (const Field* max_failed = top.Find("max_failed_trials")) {
    int64_t count = 0;
    HPO_RETURN_IF_ERROR(ReadInteger(errors, *max_failed, 0, kInt64Max, &count));
    parsed.max_failed_trials = count;
  }
  if (const Field* retries = top.Find("trial_retries")) {
    HPO_RETURN_IF_ERROR(ReadInteger(errors, *retries, 0, 100, &parsed.trial_retries));
  }
  *budget = parsed;
  return Status::Ok();
}

Status ParseWarmStart(const ErrorFormatter& errors, const Field& field,
                      std::vector<WarmStartStudy>* studies) {
  std::vector<Field> entries;
  if (field.value.IsSequence()) {
    if (field.value.size() == 0) return errors.At(field, "must name at least one study");
    for (size_t i = 0; i < field.value.size(); ++i) {
      const YAML::Node entry = field.value[i];
      const int line = LineOf(entry);
      entries.push_back({field.key, field.path + "[" + std::to_string(i) + "]",
                         line > 0 ? line : field.line, entry});
    }
  } else {
    entries.push_back(field);
  }
  std::vector<WarmStartStudy> parsed;
  for (const Field& entry : entries) {
    WarmStartStudy study;
    study.line = entry.line;
    HPO_RETURN_IF_ERROR(ReadString(errors, entry, &study.path));
    if (study.path.empty()) return errors.At(entry, "must be a study file or an output folder");
    for (const WarmStartStudy& earlier : parsed) {
      if (earlier.path == study.path) {
        return errors.At(entry, "names " + study.path + " twice (also at line " +
                                    std::to_string(earlier.line) + ")");
      }
    }
    parsed.push_back(study);
  }
  *studies = std::move(parsed);
  return Status::Ok();
}

Status ParseCheckpoint(const ErrorFormatter& errors, const Field& field, CheckpointSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"interval", "grace_period_s"}));
  CheckpointSpec parsed;
  HPO_RETURN_IF_ERROR(ReadOptionalInteger(errors, fields, "interval", 0, &parsed.interval));
  if (const Field* grace = fields.Find("grace_period_s")) {
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *grace, &parsed.grace_period_s));
    if (parsed.grace_period_s <= 0.0) {
      return errors.At(*grace, "must be > 0, got " + FormatNumber(parsed.grace_period_s));
    }
  }
  *spec = parsed;
  return Status::Ok();
}

Status ParseDdp(const ErrorFormatter& errors, const Field& field, DdpSpec* spec) {
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"bucket_mb", "first_bucket_mb", "overlap", "compression"}));
  DdpSpec parsed;
  for (auto [key, value] : {std::pair<const char*, double*>{"bucket_mb", &parsed.bucket_mb},
                            {"first_bucket_mb", &parsed.first_bucket_mb}}) {
    if (const Field* size = fields.Find(key)) {
      HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *size, value));
      if (*value <= 0.0) return errors.At(*size, "must be > 0, got " + FormatNumber(*value));
    }
  }
  if (const Field* overlap = fields.Find("overlap")) {
    if (!overlap->value.IsScalar() || ResolveScalar(overlap->value) != ScalarKind::kBool) {
      return errors.At(*overlap, "must be true or false");
    }
    parsed.overlap = overlap->value.as<bool>();
  }
  if (const Field* compression = fields.Find("compression")) {
    std::string name;
    HPO_RETURN_IF_ERROR(ReadString(errors, *compression, &name));
    if (name == "bf16") {
      parsed.compression = ReducedFloat::kBFloat16;
    } else if (name == "fp16") {
      parsed.compression = ReducedFloat::kFloat16;
    } else if (name != "none") {
      return errors.At(*compression, "must be one of none, bf16, fp16, got '" + name + "'");
    }
  }
  *spec = parsed;
  return Status::Ok();
}

}  // namespace hpo::config_internal
