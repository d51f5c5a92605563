// FormatHtmlReport: the study's trials as JSON inside a page that draws them (report.js).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/report.hpp"
#include "hpo/task_catalog.hpp"
#include "report_internal.hpp"

namespace hpo {

namespace {

using report_internal::AttributeText;
using report_internal::BestTrialId;
using report_internal::FindExtra;
using report_internal::Goal;
using report_internal::JsonNumber;
using report_internal::JsonString;
using report_internal::JsonValue;
using report_internal::Leaderboard;
using report_internal::StatusCounts;
using report_internal::TestMetrics;

enum class AxisScale { kLinear, kLog, kCategorical };

// One axis of the parallel-coordinates plot.
struct Axis {
  std::string name;
  AxisScale scale = AxisScale::kLinear;
  double min = std::numeric_limits<double>::infinity();  // numeric axes
  double max = -std::numeric_limits<double>::infinity();
  std::vector<ParamValue> categories;  // categorical axes, bottom to top
};

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

// One axis per hyperparameter column of the study with more than one possible value.
std::vector<Axis> BuildAxes(const StudyContents& study, const TaskCatalog& catalog) {
  SweepConfig config;
  const bool parsed =
      ParseConfig(study.attributes.config, "study config", catalog, BareSweepSettings(), &config)
          .ok();
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

std::string AxisJson(const Axis& axis) {
  std::string out = "{\"name\": " + JsonString(axis.name) + ", \"scale\": ";
  if (axis.scale == AxisScale::kCategorical) {
    out += "\"categorical\", \"categories\": [";
    for (size_t i = 0; i < axis.categories.size(); ++i) {
      out += (i == 0 ? "" : ", ") + JsonValue(axis.categories[i]);
    }
    return out + "]}";
  }
  return out + (axis.scale == AxisScale::kLog ? "\"log\"" : "\"linear\"") +
         ", \"min\": " + JsonNumber(axis.min) + ", \"max\": " + JsonNumber(axis.max) + "}";
}

std::string TrialJson(const StudyContents& study, const TrialResult& trial) {
  const std::vector<std::string>& metrics = study.layout.metric_names;
  const size_t metric = static_cast<size_t>(
      std::find(metrics.begin(), metrics.end(), study.attributes.metric_name) - metrics.begin());
  std::string params;
  for (const NamedValue& param : trial.params) {
    params += (params.empty() ? "" : ", ") + JsonString(param.name) + ": " + JsonValue(param.value);
  }
  std::string curve;
  for (const EpochMetrics& epoch : trial.curve) {
    const double value = metric < epoch.values.size() ? epoch.values[metric]
                                                      : std::numeric_limits<double>::quiet_NaN();
    curve += (curve.empty() ? "[" : ", [") + std::to_string(epoch.epoch) + ", " +
             JsonNumber(value) + "]";
  }
  return "{\"trial_id\": " + std::to_string(trial.trial_id) +
         ", \"status\": " + JsonString(TrialStatusName(trial.status)) +
         ", \"objective\": " + JsonNumber(trial.objective) + ", \"params\": {" + params +
         "}, \"epochs\": " + std::to_string(trial.epochs) +
         ", \"duration_s\": " + JsonNumber(trial.duration_s) +
         ", \"group\": " + std::to_string(trial.group) +
         ", \"message\": " + JsonString(trial.message) + ", \"curve\": [" + curve + "]}";
}

// The data the page draws. Every '<' (only ever inside JSON strings) becomes \u003c, so no text
// of the study can end the script element it sits in.
std::string StudyJson(const StudyContents& study, const TaskCatalog& catalog) {
  const std::vector<const TrialResult*> board = Leaderboard(study);
  const std::optional<int64_t> best = BestTrialId(study, board);
  std::string out = "{\"metric\": " + JsonString(study.attributes.metric_name) +
                    ", \"goal\": " + JsonString(Goal(study)) +
                    ", \"best_trial_id\": " + (best.has_value() ? std::to_string(*best) : "null") +
                    ",\n\"params\": [";
  for (size_t i = 0; i < study.layout.params.size(); ++i) {
    out += (i == 0 ? "" : ", ") + JsonString(study.layout.params[i].name);
  }
  out += "],\n\"axes\": [";
  const std::vector<Axis> axes = BuildAxes(study, catalog);
  for (size_t i = 0; i < axes.size(); ++i) out += (i == 0 ? "" : ",\n  ") + AxisJson(axes[i]);
  out += "],\n\"trials\": [";
  for (size_t i = 0; i < board.size(); ++i) {
    out += (i == 0 ? "\n  " : ",\n  ") + TrialJson(study, *board[i]);
  }
  out += "]}";
  std::string escaped;
  for (char c : out) {
    if (c == '<') {
      escaped += "\\u003c";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string HtmlText(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Summary(const StudyContents& study) {
  const StudyAttributes& attributes = study.attributes;
  const std::vector<const TrialResult*> board = Leaderboard(study);
  std::string out = "<p class=\"summary\">Metric <b>" + HtmlText(attributes.metric_name) +
                    "</b> (" + HtmlText(Goal(study)) + "), " + HtmlText(StatusCounts(study)) +
                    ".</p>\n";
  if (const std::optional<int64_t> best = BestTrialId(study, board)) {
    out += "<p class=\"summary\">Best trial: <b>" + std::to_string(*best) + "</b>";
    for (const TrialResult* trial : board) {
      if (trial->trial_id != *best) continue;
      out += ", " + HtmlText(attributes.metric_name) + " " +
             HtmlText(FormatParamValue(ParamValue(trial->objective)));
      for (const NamedValue& param : trial->params) {
        out += ", " + HtmlText(param.name) + "=" + HtmlText(FormatParamValue(param.value));
      }
    }
    for (const auto& [name, value] : TestMetrics(study)) {
      out += "; " + HtmlText(name) + " " + HtmlText(FormatParamValue(ParamValue(value)));
    }
    out += ".</p>\n";
  }
  out += "<p class=\"summary\">Started " + HtmlText(attributes.start_time) + " on " +
         std::to_string(attributes.world_size) + " ranks, hpo " + HtmlText(attributes.version) +
         ".</p>\n";
  return out;
}

}  // namespace

std::string FormatHtmlReport(const StudyContents& study) {
  return FormatHtmlReport(study, BuiltinTaskCatalog());
}

std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog) {
  const std::string title = "hpo study: " + study.attributes.metric_name;
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<title>" + HtmlText(title) + "</title>\n<style>\n";
  page += report_internal::kReportCss;
  page += "</style>\n</head>\n<body>\n<h1>" + HtmlText(title) + "</h1>\n" + Summary(study);
  page += "<noscript><p>The plots and the table need JavaScript.</p></noscript>\n";
  page += "<h2>Hyperparameters and " + HtmlText(study.attributes.metric_name) + "</h2>\n";
  page += "<p id=\"selection\"></p>\n<div class=\"scroll\"><svg id=\"parallel\"></svg></div>\n";
  page += "<h2>Learning curves (" + HtmlText(study.attributes.metric_name) + ")</h2>\n";
  page += "<svg id=\"curves\"></svg>\n<h2>Trials</h2>\n<div class=\"scroll\">";
  page += "<table id=\"trials\"></table></div>\n";
  page += "<h2>Config</h2>\n<pre>" + HtmlText(study.attributes.config) + "</pre>\n";
  page += "<script id=\"hpo-study\" type=\"application/json\">\n" + StudyJson(study, catalog) +
          "\n</script>\n<script>\n";
  page += report_internal::kReportJs;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace hpo
