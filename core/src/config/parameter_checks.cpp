// Checks of a parsed parameter against the search method and the task's hyperparameters.
#include "parameter_parser.hpp"

#include <cmath>
#include <string>

#include "common/list_text.hpp"
#include "hpo/task_catalog.hpp"
#include "search/sampling.hpp"

namespace hpo::config_internal {

namespace {

bool IsEnumerated(Distribution distribution) {
  return distribution == Distribution::kConstant || distribution == Distribution::kCategorical ||
         distribution == Distribution::kCategoricalWithProbabilities;
}

// "[0, 1)", "(0, inf)": infinite ends are shown open, as no finite value reaches them.
std::string FormatInterval(const ValueInterval& interval) {
  const bool lower_open = interval.lower_open || std::isinf(interval.lower);
  const bool upper_open = interval.upper_open || std::isinf(interval.upper);
  return (lower_open ? "(" : "[") + FormatNumber(interval.lower) + ", " +
         FormatNumber(interval.upper) + (upper_open ? ")" : "]");
}

ValueInterval Point(double value, bool open) { return ValueInterval{value, value, open, open}; }

// What the parameter produces, for messages: "string values", "distribution uniform", ...
std::string DescribeValues(const ParameterSpec& spec) {
  if (!IsEnumerated(spec.distribution)) {
    return std::string("distribution ") + DistributionName(spec.distribution);
  }
  return std::string(ParamTypeName(spec.type)) + (spec.values.size() == 1 ? " value" : " values");
}

std::string QuoteValue(const ParamValue& value) {
  const std::string text = FormatParamValueExact(value);
  return std::holds_alternative<std::string>(value) ? "'" + text + "'" : text;
}

// Where to point when the whole distribution is wrong: its `distribution:` key, else the parameter.
const Field& DistributionField(const ParsedParameter& parameter) {
  return parameter.distribution ? *parameter.distribution : parameter.field;
}

Status CheckChoices(const ErrorFormatter& errors, const HyperparameterInfo& info,
                    const ParsedParameter& parameter) {
  const std::string choices = Join(info.choices);
  if (parameter.spec.type != ParamType::kString) {
    return errors.At(DistributionField(parameter), info.name + " takes one of " + choices +
                                                       ", got " + DescribeValues(parameter.spec));
  }
  for (size_t i = 0; i < parameter.spec.values.size(); ++i) {
    const std::string& value = std::get<std::string>(parameter.spec.values[i]);
    bool known = false;
    for (const std::string& choice : info.choices) known = known || choice == value;
    if (!known) {
      return errors.At(parameter.value_fields[i], "'" + value + "' is not a valid " + info.name +
                                                      " (accepted: " + choices + ")");
    }
  }
  return Status::Ok();
}

Status CheckNumeric(const ErrorFormatter& errors, const HyperparameterInfo& info,
                    const ParsedParameter& parameter) {
  const ParameterSpec& spec = parameter.spec;
  if (info.type == ParamType::kInt && spec.type != ParamType::kInt) {
    return errors.At(DistributionField(parameter),
                     info.name +
                         " takes integers (integer values or an int_uniform range with "
                         "integer min and max), got " +
                         DescribeValues(spec));
  }
  if (spec.type == ParamType::kString) {
    return errors.At(DistributionField(parameter),
                     info.name + " takes numbers, got " + DescribeValues(spec));
  }
  const ValueInterval valid{info.min, info.max, info.min_exclusive, info.max_exclusive};
  const std::string valid_text = info.name + "'s valid range " + FormatInterval(valid);
  if (IsEnumerated(spec.distribution)) {
    for (size_t i = 0; i < spec.values.size(); ++i) {
      if (!valid.Contains(Point(ParamAsDouble(spec.values[i]), false))) {
        return errors.At(parameter.value_fields[i],
                         QuoteValue(spec.values[i]) + " is outside " + valid_text);
      }
    }
    return Status::Ok();
  }
  const ValueInterval support = SupportOf(spec);
  const bool lower_ok = valid.Contains(Point(support.lower, support.lower_open));
  const bool upper_ok = valid.Contains(Point(support.upper, support.upper_open));
  if (lower_ok && upper_ok) return Status::Ok();
  const std::optional<Field>& limit = lower_ok ? parameter.max : parameter.min;
  const Field& where = limit ? *limit : DistributionField(parameter);
  return errors.At(where, std::string(DistributionName(spec.distribution)) +
                              " can draw values in " + FormatInterval(support) +
                              ", not all inside " + valid_text);
}

}  // namespace

Status CheckGridParameter(const ErrorFormatter& errors, const ParsedParameter& parameter) {
  const Distribution distribution = parameter.spec.distribution;
  if (distribution == Distribution::kConstant || distribution == Distribution::kCategorical ||
      distribution == Distribution::kIntUniform) {
    return Status::Ok();
  }
  return errors.At(parameter.field,
                   std::string("grid search needs `values` (or `value`, or an integer min/max "
                               "range) for parameter ") +
                       parameter.spec.name + ", which has distribution " +
                       DistributionName(distribution));
}

Status CheckParameterForTask(const ErrorFormatter& errors, const TaskDescription& task,
                             const ParsedParameter& parameter) {
  if (task.free_parameters()) return Status::Ok();
  const HyperparameterInfo* info = task.FindHyperparameter(parameter.spec.name);
  if (info == nullptr) {
    std::vector<std::string> accepted;
    for (const HyperparameterInfo& known : task.hyperparameters()) {
      accepted.push_back(known.name);
    }
    return errors.At(parameter.field, "unknown hyperparameter for task " + task.name() +
                                          " (accepted: " + Join(accepted) + ")");
  }
  if (info->type == ParamType::kString) return CheckChoices(errors, *info, parameter);
  return CheckNumeric(errors, *info, parameter);
}

}  // namespace hpo::config_internal
