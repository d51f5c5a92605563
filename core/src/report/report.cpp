#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report_internal.hpp"

namespace hpo {

namespace {

using report_internal::AttributeText;
using report_internal::BestTrialId;
using report_internal::FindExtra;
using report_internal::JsonNumber;
using report_internal::JsonString;
using report_internal::JsonValue;
using report_internal::kBestTrialAttribute;
using report_internal::MetricGoal;
using report_internal::ParetoFrontIds;
using report_internal::TestMetrics;

// A hyperparameter's column in the table and the CSV: its name, or "param:NAME" when one of the
// report's other columns (those `before` and `after` the hyperparameters) has that name, as a
// program's own `epochs` beside the epochs trained (the study file stores it so too).
std::string ReportParamColumn(const std::string& name, const std::vector<std::string>& before,
                              const std::vector<std::string>& after) {
  const auto among = [&name](const std::vector<std::string>& columns) {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  };
  return among(before) || among(after) ? "param:" + name : name;
}

// A task's table as text: a title line, then the matrix with its labels as row and column heads
// (rows and columns numbered when the task gave no labels).
std::string FormatMetricTable(const MetricTable& table) {
  const auto label = [&table](int64_t i) {
    return static_cast<size_t>(i) < table.labels.size() ? table.labels[static_cast<size_t>(i)]
                                                        : std::to_string(i);
  };
  std::vector<std::vector<std::string>> cells(static_cast<size_t>(table.rows) + 1);
  cells[0].push_back("");
  for (int64_t c = 0; c < table.columns; ++c) cells[0].push_back(label(c));
  for (int64_t r = 0; r < table.rows; ++r) {
    cells[static_cast<size_t>(r) + 1].push_back(label(r));
    for (int64_t c = 0; c < table.columns; ++c) {
      cells[static_cast<size_t>(r) + 1].push_back(
          FormatParamValue(ParamValue(table.values[static_cast<size_t>(r * table.columns + c)])));
    }
  }
  std::vector<size_t> width(static_cast<size_t>(table.columns) + 1, 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out = std::string(report_internal::kTestMetricPrefix) + table.name + ":\n";
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) {
      out += "  " + std::string(width[c] - row[c].size(), ' ') + row[c];
    }
    out += "\n";
  }
  return out;
}
using report_internal::Leaderboard;
using report_internal::StatusCounts;

// The rows shown: the first top_k of the leaderboard (all when top_k <= 0).
size_t ShownRows(const ReportOptions& options, size_t trials) {
  if (options.top_k <= 0) return trials;
  return std::min(trials, static_cast<size_t>(options.top_k));
}

const TrialResult* FindTrial(const StudyContents& study, int64_t trial_id) {
  for (const TrialResult& trial : study.trials) {
    if (trial.trial_id == trial_id) return &trial;
  }
  return nullptr;
}

// The parameter's value as text; empty when the trial lacks it (a conditional parameter).
std::string ParamText(const TrialResult& trial, const std::string& name, bool exact) {
  const ParamValue* value = FindParam(trial.params, name);
  if (value == nullptr) return "";
  return exact ? FormatParamValueExact(*value) : FormatParamValue(*value);
}

// ---- table ----

// The messages of the failed trials among `board`'s first `shown` rows, each after its trial id
// with its further lines indented: what made each fail, in full (a program's message ends with
// the last lines of its stderr). Empty when there are none.
std::string FormatFailureMessages(const std::vector<const TrialResult*>& board, size_t shown) {
  std::string out;
  for (size_t r = 0; r < shown; ++r) {
    const TrialResult& trial = *board[r];
    if (trial.status != TrialStatus::kFailed || trial.message.empty()) continue;
    std::string message = trial.message;
    for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at + 5)) {
      message.replace(at, 1, "\n    ");
    }
    out += "  trial " + std::to_string(trial.trial_id) + ": " + message + "\n";
  }
  return out.empty() ? out : "\nFailed trials:\n" + out;
}

std::string FormatFixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string TableObjective(double objective) {
  return std::isnan(objective) ? "-" : FormatParamValue(objective);
}

// The parameter columns whose value is the same in every trial of a study of two trials or more
// (a sweep's `value:` settings, such as a script's file paths): the table lists them once.
std::vector<bool> SameInEveryTrial(const StudyContents& study) {
  std::vector<bool> same(study.layout.params.size(), study.trials.size() >= 2);
  for (size_t c = 0; c < same.size(); ++c) {
    const std::string& name = study.layout.params[c].name;
    for (const TrialResult& trial : study.trials) {
      if (!same[c]) break;
      same[c] = FindParam(trial.params, name) != nullptr &&
                ParamText(trial, name, /*exact=*/true) ==
                    ParamText(study.trials.front(), name, /*exact=*/true);
    }
  }
  return same;
}

// A further objective's value of `trial` (NaN when it has none).
double FurtherObjective(const TrialResult& trial, size_t j) {
  return j < trial.further_objectives.size() ? trial.further_objectives[j] : std::nan("");
}

// The lines above the table: the objectives and counts, the front, the best trial, its test
// split and tables, and the parameters that are the same in every trial (`fixed`); `front` is
// ParetoFrontIds(study).
std::string FormatTableHeading(const StudyContents& study,
                               const std::vector<const TrialResult*>& board,
                               const std::set<int64_t>& front, const std::vector<bool>& fixed) {
  const std::string& metric = study.attributes.metric_name;
  const std::vector<StudyObjective>& further = study.layout.further_objectives;
  std::string out = "Study: " + metric + " (" + MetricGoal(study) + ")";
  for (const StudyObjective& objective : further) {
    out += ", " + objective.metric + " (" + objective.goal + ")";
  }
  out += ", " + StatusCounts(study) + "\n";
  if (!further.empty()) {
    out += "Pareto front: " + std::to_string(front.size()) +
           " trials, listed first and marked *; the best trial is the best " + metric + "\n";
  }
  const std::optional<int64_t> best = BestTrialId(study, board);
  if (best.has_value()) {
    out += "Best trial: " + std::to_string(*best);
    if (const TrialResult* trial = FindTrial(study, *best)) {
      out += " (" + metric + " " + TableObjective(trial->objective) + ")";
    }
    out += "\n";
    if (const StudyAttribute* model = FindExtra(study, "best_model")) {
      if (const auto* path = std::get_if<std::string>(model)) out += "Its model: " + *path + "\n";
    }
  } else {
    out += "Best trial: none\n";
  }
  const std::vector<std::pair<std::string, double>> test_metrics = TestMetrics(study);
  if (!test_metrics.empty()) {
    out += "Test split";
    if (FindExtra(study, kBestTrialAttribute) != nullptr && best.has_value()) {
      out += " (trial " + std::to_string(*best) + ")";
    }
    out += ":";
    for (const auto& [name, value] : test_metrics) {
      out += " " + name + " " + FormatParamValue(ParamValue(value));
    }
    out += "\n";
  }
  for (const MetricTable& table : study.tables) out += FormatMetricTable(table);
  std::string fixed_text;
  for (size_t c = 0; c < fixed.size(); ++c) {
    if (!fixed[c]) continue;
    const std::string& name = study.layout.params[c].name;
    fixed_text += " " + name + "=" + ParamText(study.trials.front(), name, /*exact=*/false);
  }
  if (!fixed_text.empty()) out += "Same in every trial:" + fixed_text + "\n";
  return out;
}

// The table's columns: each one's name and whether it is right-aligned.
struct TableColumns {
  std::vector<std::string> names;
  std::vector<bool> right;
};

TableColumns LeaderboardColumns(const StudyContents& study, const std::vector<bool>& fixed) {
  const std::vector<StudyObjective>& further = study.layout.further_objectives;
  TableColumns columns{{"rank", "trial", "status", "objective"}, {true, true, false, true}};
  if (!further.empty()) {
    columns.names.insert(columns.names.begin() + 2, "front");
    columns.right.insert(columns.right.begin() + 2, false);
    columns.names.back() = study.attributes.metric_name;
  }
  for (const StudyObjective& objective : further) {
    columns.names.push_back(objective.metric);
    columns.right.push_back(true);
  }
  for (size_t c = 0; c < study.layout.params.size(); ++c) {
    if (fixed[c]) continue;
    columns.names.push_back(
        ReportParamColumn(study.layout.params[c].name, columns.names, {"epochs", "duration_s"}));
    columns.right.push_back(study.layout.params[c].type != ParamType::kString);
  }
  columns.names.insert(columns.names.end(), {"epochs", "duration_s"});
  columns.right.insert(columns.right.end(), {true, true});
  return columns;
}

// One trial's cells, in LeaderboardColumns' order; `rank` counts from 1.
std::vector<std::string> LeaderboardRow(const StudyContents& study, const TrialResult& trial,
                                        size_t rank, const std::set<int64_t>& front,
                                        const std::vector<bool>& fixed) {
  const size_t further = study.layout.further_objectives.size();
  std::vector<std::string> row = {std::to_string(rank), std::to_string(trial.trial_id),
                                  TrialStatusName(trial.status), TableObjective(trial.objective)};
  if (further != 0) row.insert(row.begin() + 2, front.count(trial.trial_id) != 0 ? "*" : "");
  for (size_t j = 0; j < further; ++j) row.push_back(TableObjective(FurtherObjective(trial, j)));
  for (size_t c = 0; c < study.layout.params.size(); ++c) {
    if (fixed[c]) continue;
    const std::string text = ParamText(trial, study.layout.params[c].name, /*exact=*/false);
    row.push_back(text.empty() ? "-" : text);  // "-": absent (a conditional parameter)
  }
  row.push_back(std::to_string(trial.epochs));
  row.push_back(FormatFixed(trial.duration_s, 1));
  return row;
}

// `rows` as aligned text, two spaces between columns, no trailing blanks.
std::string AlignRows(const std::vector<std::vector<std::string>>& rows,
                      const std::vector<bool>& right) {
  std::vector<size_t> widths(right.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c != 0) line += "  ";
      const std::string padding(widths[c] - row[c].size(), ' ');
      line += right[c] ? padding + row[c] : row[c] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

// Population-based training's lineage, one line per child trial ("" without lineage).
std::string FormatLineage(const StudyContents& study) {
  if (!study.layout.lineage) return "";
  std::string out =
      "\nLineage (population-based training): each trial below started from its parent's "
      "checkpoint at the epoch shown, with these hyperparameters changed\n";
  for (const report_internal::LineageEdge& edge : report_internal::Lineage(study)) {
    out += "  trial " + std::to_string(edge.child) + " <- trial " + std::to_string(edge.parent) +
           " at epoch " + std::to_string(edge.epoch) + ":";
    for (size_t i = 0; i < edge.changes.size(); ++i) {
      out += (i == 0 ? " " : "; ") + edge.changes[i];
    }
    if (edge.changes.empty()) out += " (none)";
    if (edge.restarted) out += " [restarted: its program started over, not from the checkpoint]";
    out += "\n";
  }
  return out;
}

std::string FormatTable(const StudyContents& study, const ReportOptions& options) {
  const std::vector<const TrialResult*> board = Leaderboard(study);
  const std::vector<bool> fixed = SameInEveryTrial(study);
  const std::set<int64_t> front = ParetoFrontIds(study);
  const TableColumns columns = LeaderboardColumns(study, fixed);
  const size_t shown = ShownRows(options, board.size());
  std::vector<std::vector<std::string>> rows = {columns.names};
  for (size_t r = 0; r < shown; ++r) {
    rows.push_back(LeaderboardRow(study, *board[r], r + 1, front, fixed));
  }
  std::string out =
      FormatTableHeading(study, board, front, fixed) + "\n" + AlignRows(rows, columns.right);
  if (shown < board.size()) {
    out += "(top " + std::to_string(shown) + " of " + std::to_string(board.size()) + " trials)\n";
  }
  return out + FormatLineage(study) + FormatFailureMessages(board, shown);
}

// ---- CSV ----

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string CsvNumber(double value) {
  return std::isnan(value) ? "" : FormatParamValueExact(value);
}

std::string FormatCsv(const StudyContents& study, const ReportOptions& options) {
  std::vector<std::string> header = {"rank", "trial_id", "status", "objective"};
  const std::vector<StudyObjective>& further = study.layout.further_objectives;
  const std::set<int64_t> front = ParetoFrontIds(study);
  for (const StudyObjective& objective : further) {
    header.push_back(std::string("objective:") + objective.metric);
  }
  if (!further.empty()) header.push_back("pareto_front");
  std::vector<std::string> trailing = {"epochs", "duration_s", "group", "message"};
  if (study.layout.lineage) trailing.insert(trailing.end(), {"parent_trial", "parent_epoch"});
  for (const StudyParamColumn& column : study.layout.params) {
    header.push_back(ReportParamColumn(column.name, header, trailing));
  }
  header.insert(header.end(), trailing.begin(), trailing.end());
  std::string out;
  const auto add_row = [&out](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i != 0) out += ',';
      out += CsvField(fields[i]);
    }
    out += '\n';
  };
  add_row(header);
  const std::vector<const TrialResult*> board = Leaderboard(study);
  const size_t shown = ShownRows(options, board.size());
  for (size_t r = 0; r < shown; ++r) {
    const TrialResult& trial = *board[r];
    std::vector<std::string> row = {std::to_string(r + 1), std::to_string(trial.trial_id),
                                    TrialStatusName(trial.status), CsvNumber(trial.objective)};
    for (size_t j = 0; j < further.size(); ++j)
      row.push_back(CsvNumber(FurtherObjective(trial, j)));
    if (!further.empty()) row.push_back(front.count(trial.trial_id) != 0 ? "true" : "false");
    for (const StudyParamColumn& column : study.layout.params) {
      row.push_back(ParamText(trial, column.name, /*exact=*/true));
    }
    row.insert(row.end(), {std::to_string(trial.epochs), CsvNumber(trial.duration_s),
                           std::to_string(trial.group), trial.message});
    if (study.layout.lineage) {
      const bool child = trial.parent_trial >= 0;
      row.push_back(child ? std::to_string(trial.parent_trial) : "");
      row.push_back(child ? std::to_string(trial.parent_epoch) : "");
    }
    add_row(row);
  }
  return out;
}

// ---- JSON ----

// Several objectives: a trial's `, "objectives": {METRIC: value, ...}, "pareto_front": bool`
// (every objective, the primary first); nothing for a study of one.
std::string FurtherJson(const StudyContents& study, const std::set<int64_t>& front,
                        const TrialResult& trial) {
  const std::vector<StudyObjective>& further = study.layout.further_objectives;
  if (further.empty()) return "";
  std::string out = ", \"objectives\": {" + JsonString(study.attributes.metric_name) + ": " +
                    JsonNumber(trial.objective);
  for (size_t j = 0; j < further.size(); ++j) {
    out += ", " + JsonString(further[j].metric) + ": " + JsonNumber(FurtherObjective(trial, j));
  }
  return out + "}, \"pareto_front\": " + (front.count(trial.trial_id) != 0 ? "true" : "false");
}

// Population-based training: a trial's `, "parent_trial": N, "parent_epoch": E` (both null for a
// trial drawn rather than copied); nothing for a study without lineage.
std::string LineageJson(const StudyContents& study, const TrialResult& trial) {
  if (!study.layout.lineage) return "";
  const bool child = trial.parent_trial >= 0;
  return ", \"parent_trial\": " + (child ? std::to_string(trial.parent_trial) : "null") +
         ", \"parent_epoch\": " + (child ? std::to_string(trial.parent_epoch) : "null");
}

std::string FormatJson(const StudyContents& study, const ReportOptions& options) {
  const std::vector<const TrialResult*> board = Leaderboard(study);
  const std::optional<int64_t> best = BestTrialId(study, board);
  std::string out = "{\n";
  out += "  \"metric\": " + JsonString(study.attributes.metric_name) + ",\n";
  out += "  \"goal\": " + JsonString(MetricGoal(study)) + ",\n";
  out += "  \"best_trial_id\": " + (best.has_value() ? std::to_string(*best) : "null") + ",\n";
  out += "  \"test_metrics\": " + report_internal::TestMetricsJson(study) + ",\n";
  out += "  \"test_tables\": " + report_internal::TestTablesJson(study) + ",\n";
  const std::vector<StudyObjective>& further = study.layout.further_objectives;
  const std::set<int64_t> front = ParetoFrontIds(study);
  if (!further.empty()) {
    out += "  \"objectives\": [{\"name\": " + JsonString(study.attributes.metric_name) +
           ", \"goal\": " + JsonString(MetricGoal(study)) + "}";
    for (const StudyObjective& objective : further) {
      out += ", {\"name\": " + JsonString(objective.metric) +
             ", \"goal\": " + JsonString(objective.goal) + "}";
    }
    out += "],\n  \"pareto_front\": [";
    for (const TrialResult* trial : board) {
      if (front.count(trial->trial_id) == 0) continue;
      out += (out.back() == '[' ? "" : ", ") + std::to_string(trial->trial_id);
    }
    out += "],\n";
  }
  out += "  \"trials\": [";
  const size_t shown = ShownRows(options, board.size());
  for (size_t r = 0; r < shown; ++r) {
    const TrialResult& trial = *board[r];
    std::string params;
    for (const StudyParamColumn& column : study.layout.params) {
      const ParamValue* value = FindParam(trial.params, column.name);
      if (value == nullptr) continue;
      if (!params.empty()) params += ", ";
      params += JsonString(column.name) + ": " + JsonValue(*value);
    }
    out += r == 0 ? "\n" : ",\n";
    out += "    {\"rank\": " + std::to_string(r + 1) +
           ", \"trial_id\": " + std::to_string(trial.trial_id) +
           ", \"status\": " + JsonString(TrialStatusName(trial.status)) +
           ", \"objective\": " + JsonNumber(trial.objective) + FurtherJson(study, front, trial) +
           ", \"params\": {" + params + "}, \"epochs\": " + std::to_string(trial.epochs) +
           ", \"duration_s\": " + JsonNumber(trial.duration_s) +
           ", \"group\": " + std::to_string(trial.group) +
           ", \"message\": " + JsonString(trial.message) + LineageJson(study, trial) + "}";
  }
  out += shown == 0 ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace

std::string FormatReport(const StudyContents& study, const ReportOptions& options) {
  switch (options.format) {
    case ReportFormat::kTable:
      return FormatTable(study, options);
    case ReportFormat::kCsv:
      return FormatCsv(study, options);
    case ReportFormat::kJson:
      return FormatJson(study, options);
  }
  return FormatTable(study, options);
}

}  // namespace hpo
