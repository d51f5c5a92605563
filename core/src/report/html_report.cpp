// FormatHtmlReport: the study's trials as JSON inside a page that draws them (report.js), and the
// best trial's test-split results as plain HTML (no script needed to read them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"
#include "report/report.hpp"
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
using report_internal::kBestTrialAttribute;
using report_internal::kTestMetricPrefix;
using report_internal::Leaderboard;
using report_internal::StatusCounts;
using report_internal::TestMetrics;
using report_internal::TestMetricsJson;
using report_internal::TestTablesJson;

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
  out += "],\n\"test_metrics\": " + TestMetricsJson(study) +
         ",\n\"test_tables\": " + TestTablesJson(study) + "}";
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

// ---- the test split ----

// Whom the test results belong to: "trial N" when the sweep recorded its best trial (it evaluates
// that one), else "the best trial" (the text report names no trial then either).
std::string TestTrialWords(const StudyContents& study) {
  const std::optional<int64_t> best = BestTrialId(study, Leaderboard(study));
  if (FindExtra(study, kBestTrialAttribute) != nullptr && best.has_value()) {
    return "trial " + std::to_string(*best);
  }
  return "the best trial";
}

std::string CellText(double value) {
  return std::isfinite(value) ? FormatParamValue(ParamValue(value)) : "-";
}

// An id attribute for a table's section: letters, digits, '-' and '_' kept, anything else '_'.
std::string SectionId(const std::string& text) {
  std::string id;
  for (char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    id += keep ? c : '_';
  }
  return id;
}

// A cell's shade for its share of its row in [0, 1]: white to dark blue, with white text once the
// background is dark enough that black would not read.
std::string ShareStyle(double share) {
  const double s = std::clamp(share, 0.0, 1.0);
  const auto mix = [s](int from, int to) {
    return static_cast<int>(std::lround(from + (to - from) * s));
  };
  char style[96];
  std::snprintf(style, sizeof(style), "background: rgb(%d,%d,%d)%s", mix(255, 8), mix(255, 48),
                mix(255, 107), s >= 0.5 ? "; color: white" : "");
  return style;
}

// One test table as an HTML table with its labels as row and column heads (numbered where the task
// gave none). A confusion matrix (rows = true class, columns = predicted class) is a heatmap: each
// count shaded by its share of its row, the diagonal (correct predictions) outlined, the row totals
// beside it.
std::string MatrixHtml(const MetricTable& table, bool confusion) {
  const auto label = [&table](int64_t i) {
    return HtmlText(static_cast<size_t>(i) < table.labels.size()
                        ? table.labels[static_cast<size_t>(i)]
                        : std::to_string(i));
  };
  const auto value = [&table](int64_t r, int64_t c) {
    const size_t at = static_cast<size_t>(r * table.columns + c);
    return at < table.values.size() ? table.values[at] : std::numeric_limits<double>::quiet_NaN();
  };
  std::string out = "<div class=\"scroll\"><table class=\"matrix\">\n";
  if (confusion) {
    out += "<tr><td colspan=\"2\" rowspan=\"2\"></td><th class=\"axis-name\" colspan=\"" +
           std::to_string(table.columns) + "\">predicted</th><td></td></tr>\n";
  }
  out += "<tr>" + std::string(confusion ? "" : "<td></td>");
  for (int64_t c = 0; c < table.columns; ++c) out += "<th scope=\"col\">" + label(c) + "</th>";
  out += confusion ? "<th scope=\"col\" class=\"total\">total</th></tr>\n" : "</tr>\n";
  for (int64_t r = 0; r < table.rows; ++r) {
    out += "<tr>";
    if (confusion && r == 0) {
      out += "<th class=\"axis-name true\" rowspan=\"" + std::to_string(table.rows) +
             "\"><span>true</span></th>";
    }
    out += "<th scope=\"row\">" + label(r) + "</th>";
    double total = 0.0;
    for (int64_t c = 0; c < table.columns; ++c) {
      if (std::isfinite(value(r, c))) total += value(r, c);
    }
    for (int64_t c = 0; c < table.columns; ++c) {
      const double count = value(r, c);
      if (!confusion) {
        out += "<td>" + CellText(count) + "</td>";
        continue;
      }
      const double share = total > 0.0 && std::isfinite(count) ? count / total : 0.0;
      char percent[32];
      std::snprintf(percent, sizeof(percent), "%.1f%%", 100.0 * share);
      out += "<td" + std::string(r == c ? " class=\"diagonal\"" : "") + " style=\"" +
             ShareStyle(share) + "\" title=\"true " + label(r) + ", predicted " + label(c) + ": " +
             CellText(count) + " (" + percent + " of true " + label(r) + ")\">" + CellText(count) +
             "</td>";
    }
    if (confusion) out += "<td class=\"total\">" + CellText(total) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

// The best trial's results on the held-out test split: its test_* metrics, then each table the
// task reported (a confusion matrix as a heatmap). Empty when the study has neither.
std::string TestSection(const StudyContents& study) {
  const std::vector<std::pair<std::string, double>> metrics = TestMetrics(study);
  if (metrics.empty() && study.tables.empty()) return "";
  const std::string trial = TestTrialWords(study);
  std::string out = "<section id=\"test\">\n<h2>Test split</h2>\n";
  out += "<p class=\"guide\">How " + HtmlText(trial) + ", the best by " +
         HtmlText(study.attributes.metric_name) +
         ", does on the held-out test split, which no trial saw during the search.</p>\n";
  if (!metrics.empty()) {
    out += "<table class=\"test-metrics\"><caption>Test metrics of " + HtmlText(trial) +
           "</caption>\n<tr><th scope=\"col\">metric</th><th scope=\"col\">value</th></tr>\n";
    for (const auto& [name, value] : metrics) {
      out += "<tr><td>" + HtmlText(name) + "</td><td>" + HtmlText(CellText(value)) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  for (const MetricTable& table : study.tables) {
    // The confusion matrix's section is #confusion; any other table's #test_NAME, so that no
    // table's name can take the id of an element the script draws into (#trials, #curves, ...).
    const bool confusion = table.name == "confusion";
    const std::string name = kTestMetricPrefix + table.name;
    out += "<section id=\"" + (confusion ? "confusion" : SectionId(name)) + "\">\n";
    if (confusion) {
      out += "<h3>Confusion matrix (" + HtmlText(name) + ")</h3>\n";
      out +=
          "<p class=\"guide\">Rows: the true class; columns: the predicted class. Each cell "
          "counts the test samples of its row's class predicted as its column's; its shade is "
          "that count's share of the row (white 0%, dark blue 100%). The outlined diagonal "
          "holds the correct predictions.</p>\n";
    } else {
      out += "<h3>" + HtmlText(name) + "</h3>\n";
    }
    out += MatrixHtml(table, confusion) + "</section>\n";
  }
  return out + "</section>\n";
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
  page += TestSection(study);
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
