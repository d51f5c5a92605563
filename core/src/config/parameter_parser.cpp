// Parsing one W&B sweep parameter. Which keys a distribution takes, and which it requires, follow
// the W&B sweep JSON schema (wandb/sweeps src/sweeps/config/schema.json: every parameter kind has
// additionalProperties false), and min < max as wandb/sweeps' validate_min_max demands. Values
// never take the study file's marks of an absent parameter (study_file.hpp): an empty string,
// or -2^63 for integers.
#include "parameter_parser.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace hpo::config_internal {

namespace {

constexpr double kProbabilitySumTolerance = 1e-6;

constexpr Distribution kAllDistributions[] = {
    Distribution::kConstant,
    Distribution::kCategorical,
    Distribution::kCategoricalWithProbabilities,
    Distribution::kIntUniform,
    Distribution::kUniform,
    Distribution::kQUniform,
    Distribution::kLogUniform,
    Distribution::kLogUniformValues,
    Distribution::kQLogUniform,
    Distribution::kQLogUniformValues,
    Distribution::kInvLogUniform,
    Distribution::kInvLogUniformValues,
    Distribution::kNormal,
    Distribution::kQNormal,
    Distribution::kLogNormal,
    Distribution::kQLogNormal,
    Distribution::kBeta,
    Distribution::kQBeta,
};

// The keys (besides `distribution`) a distribution accepts, and those it requires.
struct DistributionKeys {
  std::vector<std::string> accepted;
  std::vector<std::string> required;
};

DistributionKeys KeysOf(Distribution distribution) {
  switch (distribution) {
    case Distribution::kConstant:
      return {{"value"}, {"value"}};
    case Distribution::kCategorical:
      return {{"values"}, {"values"}};
    case Distribution::kCategoricalWithProbabilities:
      return {{"values", "probabilities"}, {"values", "probabilities"}};
    case Distribution::kIntUniform:
    case Distribution::kUniform:
    case Distribution::kLogUniform:
    case Distribution::kLogUniformValues:
    case Distribution::kInvLogUniform:
    case Distribution::kInvLogUniformValues:
      return {{"min", "max"}, {"min", "max"}};
    case Distribution::kQUniform:
    case Distribution::kQLogUniform:
    case Distribution::kQLogUniformValues:
      return {{"min", "max", "q"}, {"min", "max"}};
    case Distribution::kNormal:
    case Distribution::kLogNormal:
      return {{"mu", "sigma"}, {}};
    case Distribution::kQNormal:
    case Distribution::kQLogNormal:
      return {{"mu", "sigma", "q"}, {}};
    case Distribution::kBeta:
      return {{"a", "b"}, {}};
    case Distribution::kQBeta:
      return {{"a", "b", "q"}, {}};
  }
  return {};
}

bool TakesValuesAsLimits(Distribution distribution) {
  return distribution == Distribution::kLogUniformValues ||
         distribution == Distribution::kQLogUniformValues ||
         distribution == Distribution::kInvLogUniformValues;
}

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string joined;
  for (const std::string& key : keys) joined += (joined.empty() ? "" : ", ") + key;
  return joined;
}

bool IsIntegerScalar(const Field* field) {
  return field != nullptr && field->value.IsScalar() &&
         ResolveScalar(field->value) == ScalarKind::kInt;
}

Status ChooseDistribution(const ErrorFormatter& errors, const MappingFields& fields,
                          const Field& parameter, Distribution* distribution) {
  if (const Field* named = fields.Find("distribution")) {
    std::string name;
    HPO_RETURN_IF_ERROR(ReadString(errors, *named, &name));
    std::string accepted;
    for (Distribution candidate : kAllDistributions) {
      if (name == DistributionName(candidate)) {
        *distribution = candidate;
        return Status::Ok();
      }
      accepted += (accepted.empty() ? "" : ", ") + std::string(DistributionName(candidate));
    }
    return errors.At(*named, "unknown distribution '" + name + "' (accepted: " + accepted + ")");
  }
  if (fields.Has("value")) {
    *distribution = Distribution::kConstant;
  } else if (fields.Has("values")) {
    *distribution = fields.Has("probabilities") ? Distribution::kCategoricalWithProbabilities
                                                : Distribution::kCategorical;
  } else if (fields.Has("min") || fields.Has("max")) {
    const bool integer_range =
        IsIntegerScalar(fields.Find("min")) && IsIntegerScalar(fields.Find("max"));
    *distribution = integer_range ? Distribution::kIntUniform : Distribution::kUniform;
  } else {
    return errors.At(parameter,
                     "cannot tell the distribution: give `value`, `values`, `min` and `max`, or "
                     "a `distribution`");
  }
  return Status::Ok();
}

// Types a list of scalars: all integers -> kInt, all numbers -> kFloat, all booleans -> kString
// "true"/"false" with `boolean` set, otherwise kString holding each scalar's text.
Status TypeValues(const ErrorFormatter& errors, const std::vector<Field>& value_fields,
                  ParamType* type, std::vector<ParamValue>* values, bool* boolean) {
  bool all_integers = true;
  bool all_numbers = true;
  bool all_booleans = true;
  for (const Field& field : value_fields) {
    if (!field.value.IsScalar()) {
      return errors.At(field, "must be a number or a string, not a collection");
    }
    const ScalarKind kind = ResolveScalar(field.value);
    if (kind == ScalarKind::kNull)
      return errors.At(field, "must be a number or a string, not null");
    all_booleans = all_booleans && kind == ScalarKind::kBool;
    all_integers = all_integers && kind == ScalarKind::kInt;
    all_numbers = all_numbers && (kind == ScalarKind::kInt || kind == ScalarKind::kFloat);
  }
  values->clear();
  *boolean = all_booleans;
  if (all_booleans) {
    *type = ParamType::kString;
    for (const Field& field : value_fields) {
      const char first = field.value.Scalar()[0];
      values->emplace_back(std::string(first == 't' || first == 'T' ? "true" : "false"));
    }
    return Status::Ok();
  }
  *type = all_integers ? ParamType::kInt : all_numbers ? ParamType::kFloat : ParamType::kString;
  for (const Field& field : value_fields) {
    const std::string& text = field.value.Scalar();
    if (*type == ParamType::kInt) {
      int64_t integer = 0;
      if (!ParseIntegerScalar(text, &integer)) {
        return errors.At(field, "'" + text + "' is out of range for a 64-bit integer");
      }
      if (integer == std::numeric_limits<int64_t>::min()) {
        return errors.At(field, "'" + text + "' is the study file's mark of an absent parameter");
      }
      values->emplace_back(integer);
    } else if (*type == ParamType::kFloat) {
      double number = 0.0;
      HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, field, &number));
      values->emplace_back(number);
    } else {
      if (text.empty()) {
        return errors.At(field, "must not be empty (the study file marks an absent parameter so)");
      }
      values->emplace_back(text);
    }
  }
  return Status::Ok();
}

Status ReadProbabilities(const ErrorFormatter& errors, const Field& field, size_t value_count,
                         std::vector<double>* probabilities) {
  std::vector<Field> items;
  HPO_RETURN_IF_ERROR(ReadValueList(errors, field, &items));
  if (items.size() != value_count) {
    return errors.At(field, "must give one probability per value (" + std::to_string(value_count) +
                                " values, " + std::to_string(items.size()) + " probabilities)");
  }
  double sum = 0.0;
  probabilities->clear();
  for (const Field& item : items) {
    double probability = 0.0;
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, item, &probability));
    if (probability < 0.0) return errors.At(item, "must be >= 0");
    probabilities->push_back(probability);
    sum += probability;
  }
  if (std::fabs(sum - 1.0) > kProbabilitySumTolerance) {
    return errors.At(field, "must sum to 1, they sum to " + FormatNumber(sum));
  }
  return Status::Ok();
}

Status ReadPositive(const ErrorFormatter& errors, const Field& field, double* value) {
  HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, field, value));
  if (*value <= 0.0) return errors.At(field, "must be > 0, got " + FormatNumber(*value));
  return Status::Ok();
}

Status ReadLimits(const ErrorFormatter& errors, const ParsedParameter& parsed,
                  ParameterSpec* spec) {
  const Distribution distribution = spec->distribution;
  bool min_is_integer = false;
  bool max_is_integer = false;
  HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *parsed.min, &spec->min, &min_is_integer));
  HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *parsed.max, &spec->max, &max_is_integer));
  if (distribution == Distribution::kIntUniform) {
    if (!min_is_integer) return errors.At(*parsed.min, "must be an integer for int_uniform");
    if (!max_is_integer) return errors.At(*parsed.max, "must be an integer for int_uniform");
    if (spec->min <= static_cast<double>(std::numeric_limits<int64_t>::min())) {
      return errors.At(*parsed.min,
                       "must be above -2^63 (the study file's mark of an absent "
                       "parameter)");
    }
  }
  if (spec->min >= spec->max) {
    return errors.At(*parsed.min, "must be less than max (min " + FormatNumber(spec->min) +
                                      ", max " + FormatNumber(spec->max) + ")");
  }
  if (TakesValuesAsLimits(distribution) && spec->min <= 0.0) {
    return errors.At(*parsed.min, std::string("must be > 0 for ") + DistributionName(distribution) +
                                      " (its range is logarithmic), got " +
                                      FormatNumber(spec->min));
  }
  return Status::Ok();
}

// A bounded quantized distribution must have a multiple of q inside its bounds.
Status CheckQuantizedBounds(const ErrorFormatter& errors, const ParsedParameter& parsed,
                            const MappingFields& fields) {
  const ParameterSpec& spec = parsed.spec;
  double lower = spec.min;
  double upper = spec.max;
  if (spec.distribution == Distribution::kQLogUniform) {
    lower = std::exp(spec.min);
    upper = std::exp(spec.max);
  } else if (spec.distribution != Distribution::kQUniform &&
             spec.distribution != Distribution::kQLogUniformValues) {
    return Status::Ok();
  }
  if (std::ceil(lower / spec.q) * spec.q <= upper) return Status::Ok();
  const Field* q_field = fields.Find("q");
  const Field& where = q_field != nullptr ? *q_field : parsed.field;
  return errors.At(where, "no multiple of q=" + FormatNumber(spec.q) + " lies in [" +
                              FormatNumber(lower) + ", " + FormatNumber(upper) + "]");
}

Status ReadShapeParameters(const ErrorFormatter& errors, const MappingFields& fields,
                           ParameterSpec* spec) {
  if (const Field* q = fields.Find("q")) HPO_RETURN_IF_ERROR(ReadPositive(errors, *q, &spec->q));
  if (const Field* mu = fields.Find("mu")) {
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *mu, &spec->mu));
  }
  if (const Field* sigma = fields.Find("sigma")) {
    HPO_RETURN_IF_ERROR(ReadFiniteNumber(errors, *sigma, &spec->sigma));
    if (spec->sigma < 0.0) return errors.At(*sigma, "must be >= 0");
  }
  // W&B's schema allows a or b = 0, where the beta distribution is undefined; they must be > 0.
  if (const Field* a = fields.Find("a")) HPO_RETURN_IF_ERROR(ReadPositive(errors, *a, &spec->a));
  if (const Field* b = fields.Find("b")) HPO_RETURN_IF_ERROR(ReadPositive(errors, *b, &spec->b));
  return Status::Ok();
}

}  // namespace

Status ReadValueList(const ErrorFormatter& errors, const Field& field, std::vector<Field>* items) {
  if (!field.value.IsSequence() || field.value.size() == 0) {
    return errors.At(field, "must be a non-empty list");
  }
  items->clear();
  for (size_t i = 0; i < field.value.size(); ++i) {
    const YAML::Node item = field.value[i];
    const std::string index = "[" + std::to_string(i) + "]";
    items->push_back(Field{field.key + index, field.path + index, LineOf(item), item});
  }
  return Status::Ok();
}

Status ParseParameter(const ErrorFormatter& errors, const Field& field, ParsedParameter* parsed) {
  *parsed = ParsedParameter();
  parsed->field = field;
  ParameterSpec& spec = parsed->spec;
  spec.name = field.key;
  spec.line = field.line;

  if (!field.value.IsMap()) {
    return errors.At(field,
                     "must be a mapping such as {value: 1}, {values: [1, 2]} or {min: 0, max: 1}");
  }
  MappingFields fields;
  HPO_RETURN_IF_ERROR(MappingFields::Read(errors, field, &fields));
  HPO_RETURN_IF_ERROR(fields.CheckKeys({"distribution", "value", "values", "probabilities", "min",
                                        "max", "q", "mu", "sigma", "a", "b"},
                                       {"parameters"}));
  HPO_RETURN_IF_ERROR(ChooseDistribution(errors, fields, field, &spec.distribution));

  const DistributionKeys keys = KeysOf(spec.distribution);
  for (const Field& entry : fields.fields()) {
    if (entry.key == "distribution") continue;
    bool accepted = false;
    for (const std::string& key : keys.accepted) accepted = accepted || key == entry.key;
    if (!accepted) {
      return errors.At(entry, std::string("not valid with distribution ") +
                                  DistributionName(spec.distribution) +
                                  " (it takes: " + JoinKeys(keys.accepted) + ")");
    }
  }
  for (const std::string& key : keys.required) {
    if (!fields.Has(key)) return fields.Missing(key);
  }

  if (const Field* distribution = fields.Find("distribution")) parsed->distribution = *distribution;
  if (const Field* min = fields.Find("min")) parsed->min = *min;
  if (const Field* max = fields.Find("max")) parsed->max = *max;

  spec.type = ParamType::kFloat;
  if (const Field* value = fields.Find("value")) {
    parsed->value_fields = {*value};
  } else if (const Field* values = fields.Find("values")) {
    HPO_RETURN_IF_ERROR(ReadValueList(errors, *values, &parsed->value_fields));
  }
  if (!parsed->value_fields.empty()) {
    HPO_RETURN_IF_ERROR(
        TypeValues(errors, parsed->value_fields, &spec.type, &spec.values, &spec.boolean));
  }
  if (const Field* probabilities = fields.Find("probabilities")) {
    HPO_RETURN_IF_ERROR(
        ReadProbabilities(errors, *probabilities, spec.values.size(), &spec.probabilities));
  }
  if (parsed->min && parsed->max) HPO_RETURN_IF_ERROR(ReadLimits(errors, *parsed, &spec));
  if (spec.distribution == Distribution::kIntUniform) spec.type = ParamType::kInt;
  HPO_RETURN_IF_ERROR(ReadShapeParameters(errors, fields, &spec));
  return CheckQuantizedBounds(errors, *parsed, fields);
}

}  // namespace hpo::config_internal
