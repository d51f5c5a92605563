// The hyperparameter axes of a study (BuildAxes), shared by the HTML page and the importance.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "report_internal.hpp"

namespace hpo::report_internal {

namespace {

void Extend(Axis* axis, double value) {
  if (!std::isfinite(value) || (axis->scale == AxisScale::kLog && value <= 0.0)) return;
  axis->min = std::min(axis->min, value);
  axis->max = std::max(axis->max, value);
}

// Widens a numeric axis to the parameter's bounds where the distribution has them.
void ExtendToBounds(const ParameterSpec& spec, Axis* axis) {
  switch (spec.distribution) {
    case Distribution::kIntUniform:
    case Distribution::kUniform:
    case Distribution::kQUniform:
    case Distribution::kLogUniformValues:
    case Distribution::kQLogUniformValues:
      Extend(axis, spec.min);
      Extend(axis, spec.max);
      break;
    case Distribution::kLogUniform:
    case Distribution::kQLogUniform:
      Extend(axis, std::exp(spec.min));
      Extend(axis, std::exp(spec.max));
      break;
    case Distribution::kInvLogUniform:
      Extend(axis, std::exp(-spec.max));
      Extend(axis, std::exp(-spec.min));
      break;
    case Distribution::kInvLogUniformValues:
      Extend(axis, 1.0 / spec.max);
      Extend(axis, 1.0 / spec.min);
      break;
    case Distribution::kBeta:
    case Distribution::kQBeta:
      Extend(axis, 0.0);
      Extend(axis, 1.0);
      break;
    default:
      break;
  }
}

std::optional<double> NumberOf(const ParamValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::nullopt;
}

// The axis of a parameter the config does not describe (or no config parsed): from its values.
Axis AxisFromData(const std::string& name, const std::vector<const ParamValue*>& values) {
  Axis axis;
  axis.name = name;
  bool numeric = true;
  for (const ParamValue* value : values) numeric &= NumberOf(*value).has_value();
  if (!numeric) {
    axis.scale = AxisScale::kCategorical;
    std::set<std::string> seen;
    std::vector<std::pair<std::string, const ParamValue*>> sorted;
    for (const ParamValue* value : values) {
      const std::string text = FormatParamValueExact(*value);
      if (seen.insert(text).second) sorted.emplace_back(text, value);
    }
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& entry : sorted) axis.categories.push_back(*entry.second);
    return axis;
  }
  for (const ParamValue* value : values) Extend(&axis, *NumberOf(*value));
  if (axis.min > 0.0 && axis.max / axis.min >= 1000.0) axis.scale = AxisScale::kLog;
  return axis;
}

}  // namespace

std::vector<Axis> BuildAxes(const StudyContents& study, const TaskCatalog& catalog) {
  SweepConfig config;
  const bool parsed = ParseStoredConfig(study.attributes.config, catalog, &config).ok();
  std::vector<Axis> axes;
  for (const StudyParamColumn& column : study.layout.params) {
    std::vector<const ParamValue*> values;
    for (const TrialResult& trial : study.trials) {
      if (const ParamValue* value = FindParam(trial.params, column.name)) values.push_back(value);
    }
    const ParameterSpec* spec = nullptr;
    if (parsed) {
      for (const ParameterSpec& candidate : config.sweep.parameters) {
        if (candidate.name == column.name) spec = &candidate;
      }
    }
    if (spec == nullptr) {
      axes.push_back(AxisFromData(column.name, values));
      continue;
    }
    if (spec->distribution == Distribution::kConstant) continue;
    Axis axis;
    axis.name = column.name;
    if (spec->distribution == Distribution::kCategorical ||
        spec->distribution == Distribution::kCategoricalWithProbabilities) {
      axis.scale = AxisScale::kCategorical;
      axis.categories = spec->values;
    } else {
      axis.scale = IsLogScale(spec->distribution) ? AxisScale::kLog : AxisScale::kLinear;
      for (const ParamValue* value : values) {
        if (const std::optional<double> number = NumberOf(*value)) Extend(&axis, *number);
      }
      ExtendToBounds(*spec, &axis);
    }
    axes.push_back(std::move(axis));
  }
  for (Axis& axis : axes) {
    if (axis.scale != AxisScale::kCategorical && axis.min > axis.max) {
      axis.min = axis.scale == AxisScale::kLog ? 1.0 : 0.0;  // no values at all
      axis.max = axis.scale == AxisScale::kLog ? 10.0 : 1.0;
    }
  }
  return axes;
}

}  // namespace hpo::report_internal
