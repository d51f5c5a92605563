// FormatHtmlReport: the study's trials as JSON inside a page that draws them (report.js), and the
// best trial's test-split results as plain HTML (no script needed to read them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"
#include "report/importance.hpp"
#include "report/report.hpp"
#include "report_internal.hpp"

namespace hpo {

namespace {

using report_internal::AttributeText;
using report_internal::Axis;
using report_internal::AxisScale;
using report_internal::BestTrialId;
using report_internal::BuildAxes;
using report_internal::FindExtra;
using report_internal::JsonNumber;
using report_internal::JsonString;
using report_internal::JsonValue;
using report_internal::kBestTrialAttribute;
using report_internal::kTestMetricPrefix;
using report_internal::Leaderboard;
using report_internal::MetricGoal;
using report_internal::StatusCounts;
using report_internal::TestMetrics;
using report_internal::TestMetricsJson;
using report_internal::TestTablesJson;

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

// ", \"spans\": [[start_time_s, duration_s, group], ...]" for the rows before the trial's last
// (a trial paused at ASHA rungs ran in several spans), or nothing.
std::string EarlierSpansJson(const StudyContents& study, const TrialResult& trial) {
  const auto found = study.earlier_spans.find(trial.trial_id);
  if (found == study.earlier_spans.end()) return "";
  std::string spans;
  for (const RunSpan& span : found->second) {
    spans += (spans.empty() ? "[" : ", [") + JsonNumber(span.start_time_s) + ", " +
             JsonNumber(span.duration_s) + ", " + std::to_string(span.group) + "]";
  }
  return ", \"spans\": [" + spans + "]";
}

// Several objectives: a trial's `, "further": [values], "pareto": bool`; nothing otherwise.
std::string FurtherObjectivesJson(const StudyContents& study, const std::set<int64_t>& front,
                                  const TrialResult& trial) {
  if (study.layout.further_objectives.empty()) return "";
  std::string values;
  for (size_t j = 0; j < study.layout.further_objectives.size(); ++j) {
    values += (j == 0 ? "" : ", ") + JsonNumber(j < trial.further_objectives.size()
                                                    ? trial.further_objectives[j]
                                                    : std::numeric_limits<double>::quiet_NaN());
  }
  return ", \"further\": [" + values +
         "], \"pareto\": " + (front.count(trial.trial_id) != 0 ? "true" : "false");
}

std::string TrialJson(const StudyContents& study, const std::set<int64_t>& front,
                      const TrialResult& trial, size_t order) {
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
         ", \"message\": " + JsonString(trial.message) + ", \"order\": " + std::to_string(order) +
         ", \"start_time_s\": " + JsonNumber(trial.start_time_s) + EarlierSpansJson(study, trial) +
         FurtherObjectivesJson(study, front, trial) + ", \"curve\": [" + curve + "]}";
}

// Every '<' (only ever inside JSON strings) becomes \u003c, so no text of the study can end the
// script element it sits in.
std::string EscapeForScript(const std::string& json) {
  std::string escaped;
  escaped.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      escaped += "\\u003c";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// The trial groups of the sweep: world_size / ranks_per_trial of its config, or more when its
// trials name more (a study resumed on more ranks).
int64_t GroupCount(const StudyContents& study, const TaskCatalog& catalog) {
  int64_t groups = 0;
  SweepConfig config;
  if (ParseStoredConfig(study.attributes.config, catalog, &config).ok() &&
      config.execution.ranks_per_trial > 0) {
    groups = study.attributes.world_size / config.execution.ranks_per_trial;
  }
  for (const TrialResult& trial : study.trials) groups = std::max(groups, trial.group + 1);
  return std::max<int64_t>(groups, 1);
}

// The data the page draws.
std::string StudyJson(const StudyContents& study, const TaskCatalog& catalog,
                      const StudyImportance& importance) {
  const std::vector<const TrialResult*> board = Leaderboard(study);
  const std::optional<int64_t> best = BestTrialId(study, board);
  std::string out = "{\"metric\": " + JsonString(study.attributes.metric_name) +
                    ", \"goal\": " + JsonString(MetricGoal(study)) +
                    ", \"best_trial_id\": " + (best.has_value() ? std::to_string(*best) : "null") +
                    ",\n\"params\": [";
  for (size_t i = 0; i < study.layout.params.size(); ++i) {
    out += (i == 0 ? "" : ", ") + JsonString(study.layout.params[i].name);
  }
  out += "],\n\"axes\": [";
  const std::vector<Axis> axes = BuildAxes(study, catalog);
  for (size_t i = 0; i < axes.size(); ++i) out += (i == 0 ? "" : ",\n  ") + AxisJson(axes[i]);
  const std::set<int64_t> front = report_internal::ParetoFrontIds(study);
  if (!study.layout.further_objectives.empty()) {
    out += "],\n\"objectives\": [{\"name\": " + JsonString(study.attributes.metric_name) +
           ", \"goal\": " + JsonString(MetricGoal(study)) + "}";
    for (const StudyObjective& objective : study.layout.further_objectives) {
      out += ", {\"name\": " + JsonString(objective.metric) +
             ", \"goal\": " + JsonString(objective.goal) + "}";
    }
  }
  out += "],\n\"trials\": [";
  std::vector<size_t> order(board.size());
  for (size_t i = 0; i < board.size(); ++i) {
    order[i] = static_cast<size_t>(board[i] - study.trials.data());  // file order: as finished
  }
  for (size_t i = 0; i < board.size(); ++i) {
    out += (i == 0 ? "\n  " : ",\n  ") + TrialJson(study, front, *board[i], order[i]);
  }
  bool start_times = false;
  for (const TrialResult& trial : study.trials) start_times |= std::isfinite(trial.start_time_s);
  out += "],\n\"groups\": " + std::to_string(GroupCount(study, catalog)) +
         ", \"start_times\": " + (start_times ? "true" : "false") +
         ",\n\"importance\": " + StudyImportanceJson(importance) +
         ",\n\"test_metrics\": " + TestMetricsJson(study) +
         ",\n\"test_tables\": " + TestTablesJson(study) + "}";
  return EscapeForScript(out);
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
                    "</b> (" + HtmlText(MetricGoal(study)) + "), " + HtmlText(StatusCounts(study)) +
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

// A section of the page: its id, heading and one-line reading guide, then `body`.
std::string Section(const std::string& id, const std::string& heading, const std::string& guide,
                    const std::string& body) {
  return "<section id=\"" + id + "\">\n<h2>" + heading + "</h2>\n<p class=\"guide\">" + guide +
         "</p>\n" + body + "</section>\n";
}

// The <select> of one axis of #pareto (`id`): every objective, by its index, `chosen` selected.
std::string ParetoAxisSelect(const StudyContents& study, const std::string& id, size_t chosen) {
  std::vector<std::string> names = {study.attributes.metric_name};
  for (const StudyObjective& objective : study.layout.further_objectives) {
    names.push_back(objective.metric);
  }
  std::string out = "<select id=\"" + id + "\">";
  for (size_t k = 0; k < names.size(); ++k) {
    out += "<option value=\"" + std::to_string(k) + "\"" + (k == chosen ? " selected" : "") + ">" +
           HtmlText(names[k]) + "</option>";
  }
  return out + "</select>";
}

// #pareto, for a study of several objectives: two of them against each other (with three or more,
// a choice of which two, the first two at first), the front over all of them highlighted; empty
// otherwise.
std::string ParetoSection(const StudyContents& study) {
  const size_t further = study.layout.further_objectives.size();
  if (further == 0) return "";
  const std::string first = HtmlText(study.attributes.metric_name);
  const std::string best = " The best trial is the best " + first + ".";
  if (further == 1) {
    const std::string second = HtmlText(study.layout.further_objectives.front().metric);
    return Section("pareto", "Pareto front",
                   "Which trade-offs did the search find? Each trial's " + first + " against its " +
                       second +
                       "; the trials no other trial beats on every objective (the Pareto front, "
                       "listed first in the table) are red and joined by a dashed staircase." +
                       best,
                   "<div class=\"plot\" id=\"pareto-plot\"></div>\n");
  }
  return Section(
      "pareto", "Pareto front",
      "Which trade-offs did the search find? Each trial's values of two of the " +
          std::to_string(further + 1) +
          " objectives, chosen below; the trials no other trial beats on every objective (the "
          "Pareto front, listed first in the table) are red: filled and joined by a dashed "
          "staircase where no other front trial beats them on the two drawn, hollow where only "
          "another objective keeps them on the front." +
          best,
      "<div class=\"controls\"><label>x axis " + ParetoAxisSelect(study, "pareto-x", 0) +
          "</label> <label>y axis " + ParetoAxisSelect(study, "pareto-y", 1) +
          "</label></div>\n<div class=\"plot\" id=\"pareto-plot\"></div>\n");
}

// The population's family tree as an SVG: one row per trial (by id), a line over the epochs it
// trained (from its parent's epoch for a child), a dashed branch from the parent's line at that
// epoch, a dot at its end (filled: completed; hollow: stopped, i.e. replaced) with its last value;
// the best trial and its ancestors in red.
std::string LineageTreeSvg(const StudyContents& study) {
  std::map<int64_t, const TrialResult*> by_id;
  for (const TrialResult& trial : study.trials) by_id[trial.trial_id] = &trial;
  if (by_id.empty()) return "";
  std::map<int64_t, int> row_of;
  int64_t last_epoch = 1;
  for (const auto& [id, trial] : by_id) {
    row_of[id] = static_cast<int>(row_of.size());
    const int64_t start = trial->parent_trial >= 0 ? trial->parent_epoch : 0;
    last_epoch = std::max(last_epoch, start + trial->epochs);
  }
  std::set<int64_t> highlighted;
  for (std::optional<int64_t> id = BestTrialId(study, Leaderboard(study)); id;) {
    const auto found = by_id.find(*id);
    if (found == by_id.end() || !highlighted.insert(*id).second) break;
    id = found->second->parent_trial >= 0 ? std::optional<int64_t>(found->second->parent_trial)
                                          : std::nullopt;
  }
  constexpr double kLeft = 70.0, kRight = 90.0, kTop = 10.0, kRowHeight = 18.0, kWidth = 760.0;
  const double plot_width = kWidth - kLeft - kRight;
  const auto x = [&](int64_t epoch) {
    return kLeft + plot_width * static_cast<double>(epoch) / static_cast<double>(last_epoch);
  };
  const auto y = [&](int64_t id) { return kTop + kRowHeight * (row_of.at(id) + 0.5); };
  const auto number = [](double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.1f", value);
    return std::string(buffer);
  };
  const double height = kTop + kRowHeight * static_cast<double>(by_id.size()) + 30.0;
  std::string svg = "<svg class=\"lineage-tree\" width=\"" + number(kWidth) + "\" height=\"" +
                    number(height) + "\" viewBox=\"0 0 " + number(kWidth) + " " + number(height) +
                    "\" role=\"img\" aria-label=\"lineage of the population\">\n";
  const double axis_y = height - 24.0;
  svg += "<line x1=\"" + number(kLeft) + "\" y1=\"" + number(axis_y) + "\" x2=\"" +
         number(x(last_epoch)) + "\" y2=\"" + number(axis_y) + "\" stroke=\"#888\"/>\n";
  for (int64_t epoch = 0; epoch <= last_epoch; ++epoch) {
    svg += "<text x=\"" + number(x(epoch)) + "\" y=\"" + number(axis_y + 14.0) +
           "\" font-size=\"10\" text-anchor=\"middle\">" + std::to_string(epoch) + "</text>\n";
  }
  svg += "<text x=\"" + number(x(last_epoch) + 6.0) + "\" y=\"" + number(axis_y + 14.0) +
         "\" font-size=\"10\">epoch</text>\n";
  for (const auto& [id, trial] : by_id) {
    const bool best_line = highlighted.count(id) != 0;
    const std::string color = best_line ? "#d62728" : "#777";
    const int64_t start = trial->parent_trial >= 0 ? trial->parent_epoch : 0;
    const int64_t end = start + trial->epochs;
    if (trial->parent_trial >= 0 && row_of.count(trial->parent_trial) != 0) {
      svg += "<line x1=\"" + number(x(start)) + "\" y1=\"" + number(y(trial->parent_trial)) +
             "\" x2=\"" + number(x(start)) + "\" y2=\"" + number(y(id)) + "\" stroke=\"" + color +
             "\" stroke-dasharray=\"3,2\"/>\n";
    }
    svg += "<text x=\"" + number(kLeft - 6.0) + "\" y=\"" + number(y(id) + 3.5) +
           "\" font-size=\"11\" text-anchor=\"end\">trial " + std::to_string(id) + "</text>\n";
    svg += "<line x1=\"" + number(x(start)) + "\" y1=\"" + number(y(id)) + "\" x2=\"" +
           number(x(end)) + "\" y2=\"" + number(y(id)) + "\" stroke=\"" + color +
           "\" stroke-width=\"" + (best_line ? "3" : "2") + "\"/>\n";
    const bool completed = trial->status == TrialStatus::kCompleted;
    svg += "<circle cx=\"" + number(x(end)) + "\" cy=\"" + number(y(id)) + "\" r=\"4\" stroke=\"" +
           color + "\" fill=\"" + (completed ? color : std::string("white")) + "\"><title>trial " +
           std::to_string(id) + ": " + TrialStatusName(trial->status) + "</title></circle>\n";
    if (std::isfinite(trial->objective)) {
      char value[32];
      std::snprintf(value, sizeof(value), "%.4g", trial->objective);
      svg += "<text x=\"" + number(x(end) + 8.0) + "\" y=\"" + number(y(id) + 3.5) +
             "\" font-size=\"10\">" + value + "</text>\n";
    }
  }
  return svg + "</svg>\n";
}

// #lineage, for a study of population-based training: the family tree (LineageTreeSvg), then a
// table of parent -> child edges with the epoch and the hyperparameters explore changed; empty
// otherwise.
std::string LineageSection(const StudyContents& study) {
  if (!study.layout.lineage) return "";
  std::string rows =
      LineageTreeSvg(study) +
      "<table class=\"lineage\">\n<thead><tr><th>trial</th><th>from trial</th><th>at epoch</th>"
      "<th>changed</th></tr></thead>\n<tbody>\n";
  for (const report_internal::LineageEdge& edge : report_internal::Lineage(study)) {
    std::string changes;
    for (const std::string& change : edge.changes) {
      changes += (changes.empty() ? "" : "; ") + change;
    }
    rows += "<tr><td>" + std::to_string(edge.child) + "</td><td>" + std::to_string(edge.parent) +
            "</td><td>" + std::to_string(edge.epoch) + "</td><td>" +
            HtmlText((changes.empty() ? "(none)" : changes) +
                     (edge.restarted ? " [restarted: its program started over]" : "")) +
            "</td></tr>\n";
  }
  rows += "</tbody></table>\n";
  return Section("lineage", "Lineage (population-based training)",
                 "Where did each trial come from? Each line is a trial over the epochs it trained; "
                 "a dashed branch leaves its parent's line at the epoch it started from, with the "
                 "parent's checkpoint and hyperparameters and those in the table changed "
                 "(explore). A hollow dot is a member that was replaced (stopped); the best "
                 "trial and its ancestors are red.",
                 rows);
}

// Before any other script: errors of the page's script land in the page (#hpo-errors), where a
// headless browser's --dump-dom shows them, as well as in the console.
constexpr char kErrorHook[] =
    "<script>window.hpoErrors = [];\n"
    "window.addEventListener('error', (e) => { window.hpoErrors.push(String(e.message));\n"
    "  const box = document.getElementById('hpo-errors');\n"
    "  if (box) box.textContent = window.hpoErrors.join('\\n'); });</script>\n";

// `reload_seconds` > 0: the page reloads itself that often (a live page).
std::string PageHead(const std::string& title, int reload_seconds = 0) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  if (reload_seconds > 0) {
    page += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(reload_seconds) + "\">\n";
  }
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>" + HtmlText(title) + "</title>\n<style>\n";
  page += report_internal::kReportCss;
  page += "</style>\n" + std::string(kErrorHook) + "</head>\n<body>\n";
  return page;
}

std::string PageTail(const std::string& data_id, const std::string& json) {
  std::string page = "<div id=\"hpo-errors\" class=\"errors\"></div>\n";
  page += "<div id=\"tooltip\" class=\"tooltip\" hidden></div>\n";
  page += "<script id=\"" + data_id + "\" type=\"application/json\">\n" + json +
          "\n</script>\n<script>\n";
  page += report_internal::kReportJs;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

// A live page's lines under its title: when it was written, how often it reloads, and the trials
// running as `hpo status` lists them. Nothing for a page written once.
std::string LiveLines(const LivePage& live, const std::string& metric) {
  if (live.reload_seconds <= 0) return "";
  std::string running;
  for (const LiveTrial& trial : live.running) {
    running += (running.empty() ? " trial " : ", trial ") + std::to_string(trial.trial_id);
    running += trial.epoch > 0 ? " (epoch " + std::to_string(trial.epoch) + ", " + metric + " " +
                                     FormatParamValue(ParamValue(trial.objective)) + ")"
                               : std::string(" (no epoch yet)");
  }
  return "<p id=\"live\" class=\"guide\">The sweep is running: this page was written at " +
         HtmlText(live.written_at) + " and reloads every " + std::to_string(live.reload_seconds) +
         " s; the last write, when the sweep ends, stops reloading.</p>\n<p id=\"running\" "
         "class=\"guide\">" +
         HtmlText("running:" + (running.empty() ? std::string(" none") : running)) + "</p>\n";
}

}  // namespace

std::string FormatHtmlReport(const StudyContents& study) {
  return FormatHtmlReport(study, BuiltinTaskCatalog());
}

std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog) {
  return FormatHtmlReport(study, catalog, ComputeStudyImportance(study, catalog));
}

std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog,
                             const StudyImportance& importance) {
  LivePage once;
  once.reload_seconds = 0;
  return FormatHtmlReport(study, catalog, importance, once);
}

std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog,
                             const StudyImportance& importance, const LivePage& live) {
  const std::string metric = HtmlText(study.attributes.metric_name);
  const std::string title = "hpo study: " + study.attributes.metric_name;
  std::string page = PageHead(title, live.reload_seconds);
  page += "<h1>" + HtmlText(title) + "</h1>\n";
  page += LiveLines(live, study.attributes.metric_name);
  page += Summary(study);
  page += "<nav><a href=\"#history\">history</a> " +
          std::string(study.layout.further_objectives.empty()
                          ? ""
                          : "<a href=\"#pareto\">Pareto front</a> ") +
          std::string(study.layout.lineage ? "<a href=\"#lineage\">lineage</a> " : "") +
          "<a href=\"#importance\">importance</a> "
          "<a href=\"#slices\">slices</a> <a href=\"#contour\">contour</a> "
          "<a href=\"#timeline\">timeline</a> <a href=\"#parallel\">parallel coordinates</a> "
          "<a href=\"#curves\">learning curves</a> " +
          std::string(TestSection(study).empty() ? "" : "<a href=\"#test\">test split</a> ") +
          "<a href=\"#table\">trials</a> <a href=\"#config\">config</a></nav>\n";
  page += "<noscript><p>The plots and the table need JavaScript.</p></noscript>\n";
  page +=
      "<div class=\"selection-bar\"><span id=\"selection\"></span> "
      "<button id=\"clear-selection\" type=\"button\" hidden>clear selection</button></div>\n";
  page += TestSection(study);
  page += Section(
      "history", "Optimization history",
      "Is the search still improving? Each trial's " + metric +
          " in the order trials finished (colour: status; stopped trials are triangles, failed "
          "ones crosses on the bottom edge) and the best so far as a line; switch the x axis to "
          "wall time or to compute (cumulative epochs), which early stopping saves.",
      "<div class=\"controls\"><label>x axis <select id=\"history-x\">"
      "<option value=\"trial\">trial (finishing order)</option>"
      "<option value=\"time\">wall time</option>"
      "<option value=\"compute\">compute (cumulative epochs)</option></select></label></div>\n"
      "<div class=\"plot\" id=\"history-plot\"></div>\n");
  page += ParetoSection(study);
  page += LineageSection(study);
  page += Section(
      "importance", "Hyperparameter importance",
      "Which hyperparameters matter? fANOVA over a random forest fitted to the completed trials "
      "(as Optuna's default evaluator): each bar is the share of the " +
          metric + "'s variance over the search space that the parameter explains on its own.",
      "<div class=\"plot\" id=\"importance-plot\"></div>\n");
  page +=
      Section("slices", "Slices",
              "Where in each range are the good trials? " + metric +
                  " against each hyperparameter, one plot each (log axes for log distributions).",
              "<div class=\"slices-grid\" id=\"slices-plots\"></div>\n");
  page +=
      Section("contour", "Contour of the two most important hyperparameters",
              "How do the two most important hyperparameters interact? The colour is " + metric +
                  " interpolated between the trials (dots), darker is better; the bar "
                  "beside it is the scale.",
              "<div class=\"plot\" id=\"contour-plot\"></div>\n");
  page += Section("timeline", "Timeline",
                  "Were the groups busy or idle? One lane per trial group, one bar per trial "
                  "from its dispatch to its end, coloured by status; gaps are idle slots.",
                  "<p id=\"utilization\" class=\"figure\"></p>\n"
                  "<div class=\"plot\" id=\"timeline-plot\"></div>\n");
  page += Section("parallel", "Hyperparameters and " + metric,
                  "One line per trial across every hyperparameter to " + metric + ", coloured by " +
                      metric +
                      " (legend below). Drag along an axis to select a range; every plot and "
                      "the table show the selection. Click an axis to clear it.",
                  "<div class=\"plot\" id=\"parallel-plot\"></div>\n");
  page += Section("curves", "Learning curves (" + metric + ")",
                  "How did each trial's " + metric +
                      " develop per epoch? Coloured as in the parallel coordinates; stopped "
                      "trials end at their rung.",
                  "<div class=\"plot\" id=\"curves-plot\"></div>\n");
  page += Section("table", "Trials",
                  "Every trial of the selection; click a column to sort. The best trial is bold.",
                  "<div class=\"scroll\"><table id=\"trials\"></table></div>\n"
                  "<p><button id=\"show-all\" type=\"button\" hidden></button></p>\n");
  page += Section("config", "Config", "The sweep's config as the study recorded it.",
                  "<pre>" + HtmlText(study.attributes.config) + "</pre>\n");
  page += PageTail("hpo-study", StudyJson(study, catalog, importance));
  return page;
}

// ---- comparison of several studies ----

namespace {

std::string ComparisonTrialJson(const TrialResult& trial, size_t order) {
  return "{\"trial_id\": " + std::to_string(trial.trial_id) +
         ", \"status\": " + JsonString(TrialStatusName(trial.status)) +
         ", \"objective\": " + JsonNumber(trial.objective) +
         ", \"epochs\": " + std::to_string(trial.epochs) +
         ", \"duration_s\": " + JsonNumber(trial.duration_s) +
         ", \"group\": " + std::to_string(trial.group) + ", \"order\": " + std::to_string(order) +
         ", \"start_time_s\": " + JsonNumber(trial.start_time_s) + "}";
}

// DescribeSearchAndStopping of the study's config ("" when it does not parse).
std::string MethodWords(const StudyContents& study, const TaskCatalog& catalog) {
  SweepConfig config;
  if (!ParseStoredConfig(study.attributes.config, catalog, &config).ok()) {
    return "";
  }
  return DescribeSearchAndStopping(config);
}

}  // namespace

std::string FormatComparisonHtml(const std::vector<NamedStudy>& studies,
                                 const TaskCatalog& catalog) {
  const StudyContents& first = *studies.front().study;
  const std::string metric = HtmlText(first.attributes.metric_name);
  const std::string title = "hpo comparison: " + first.attributes.metric_name;
  std::string page = PageHead(title);
  page += "<h1>" + HtmlText(title) + "</h1>\n";
  std::string notes;
  std::string table =
      "<div class=\"scroll\"><table class=\"studies\"><tr><th>study</th><th>method</th>"
      "<th>trials</th><th>best " +
      metric + "</th><th>epochs in all</th><th>epochs to the best</th></tr>\n";
  std::string json = "{\"metric\": " + JsonString(first.attributes.metric_name) +
                     ", \"goal\": " + JsonString(report_internal::MetricGoal(first)) +
                     ", \"studies\": [";
  for (size_t s = 0; s < studies.size(); ++s) {
    const StudyContents& study = *studies[s].study;
    if (study.attributes.metric_name != first.attributes.metric_name ||
        report_internal::MetricGoal(study) != report_internal::MetricGoal(first)) {
      notes += "<p class=\"warning\">" + HtmlText(studies[s].name) + " tunes " +
               HtmlText(study.attributes.metric_name) + " (" +
               HtmlText(report_internal::MetricGoal(study)) + "), not " + metric + " (" +
               HtmlText(report_internal::MetricGoal(first)) +
               "): its trials are drawn by their own objective.</p>\n";
    }
    const std::vector<const TrialResult*> board = Leaderboard(study);
    const std::optional<int64_t> best = BestTrialId(study, board);
    int64_t epochs = 0;
    int64_t epochs_to_best = 0;
    double best_objective = std::numeric_limits<double>::quiet_NaN();
    for (const TrialResult& trial : study.trials) {
      epochs += trial.epochs;
      if (best.has_value() && trial.trial_id == *best) {
        epochs_to_best = epochs;
        best_objective = trial.objective;
      }
    }
    table += "<tr><td>" + HtmlText(studies[s].name) + "</td><td>" +
             HtmlText(MethodWords(study, catalog)) + "</td><td>" + HtmlText(StatusCounts(study)) +
             "</td><td>" + HtmlText(CellText(best_objective)) + "</td><td>" +
             std::to_string(epochs) + "</td><td>" +
             (best.has_value() ? std::to_string(epochs_to_best) : "-") + "</td></tr>\n";
    json += std::string(s == 0 ? "\n" : ",\n") + "{\"name\": " + JsonString(studies[s].name) +
            ", \"method\": " + JsonString(MethodWords(study, catalog)) +
            ", \"metric\": " + JsonString(study.attributes.metric_name) +
            ", \"goal\": " + JsonString(report_internal::MetricGoal(study)) + ", \"trials\": [";
    for (size_t i = 0; i < study.trials.size(); ++i) {
      json += (i == 0 ? "" : ",\n  ") + ComparisonTrialJson(study.trials[i], i);
    }
    json += "]}";
  }
  json += "]}";
  table += "</table></div>\n";
  page += notes + table;
  page += Section(
      "comparison", "History of every study",
      "Which search reached a good " + metric +
          " with the least compute? Each study's trials (dots, one colour per study) in the order "
          "they finished, by cumulative epochs, with its best so far as a line; switch the x axis "
          "to trials or wall time.",
      "<div class=\"controls\"><label>x axis <select id=\"comparison-x\">"
      "<option value=\"compute\">compute (cumulative epochs)</option>"
      "<option value=\"trial\">trial (finishing order)</option>"
      "<option value=\"time\">wall time</option></select></label></div>\n"
      "<div class=\"plot\" id=\"comparison-plot\"></div>\n");
  page += PageTail("hpo-comparison", EscapeForScript(json));
  return page;
}

}  // namespace hpo
