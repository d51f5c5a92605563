// What the report's formats share (see report_internal.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/pareto.hpp"
#include "hpo/param.hpp"
#include "report_internal.hpp"

namespace hpo::report_internal {

namespace {

bool Maximize(const StudyContents& study) { return study.attributes.metric_goal == "maximize"; }

}  // namespace

std::vector<LineageEdge> Lineage(const StudyContents& study) {
  std::map<int64_t, const TrialResult*> by_id;
  for (const TrialResult& trial : study.trials) by_id[trial.trial_id] = &trial;
  std::vector<LineageEdge> edges;
  for (const auto& [id, trial] : by_id) {
    if (trial->parent_trial < 0) continue;
    LineageEdge edge;
    edge.child = id;
    edge.parent = trial->parent_trial;
    edge.epoch = trial->parent_epoch;
    edge.restarted = trial->message.rfind("restarted: ", 0) == 0;
    const auto parent = by_id.find(trial->parent_trial);
    for (const NamedValue& entry : trial->params) {
      const ParamValue* before =
          parent == by_id.end() ? nullptr : FindParam(parent->second->params, entry.name);
      if (before != nullptr &&
          FormatParamValueExact(*before) == FormatParamValueExact(entry.value)) {
        continue;
      }
      edge.changes.push_back(entry.name + " " + (before ? FormatParamValue(*before) : "-") +
                             " -> " + FormatParamValue(entry.value));
    }
    edges.push_back(std::move(edge));
  }
  return edges;
}

std::string MetricGoal(const StudyContents& study) {
  return study.attributes.metric_goal.empty() ? "minimize" : study.attributes.metric_goal;
}

std::set<int64_t> ParetoFrontIds(const StudyContents& study) {
  const std::vector<StudyObjective>& further = study.layout.further_objectives;
  if (further.empty()) return {};
  std::vector<int64_t> ids;
  std::vector<std::vector<double>> losses;
  for (const TrialResult& trial : study.trials) {
    if (trial.status != TrialStatus::kCompleted && trial.status != TrialStatus::kStopped) continue;
    std::vector<double> loss = {Maximize(study) ? -trial.objective : trial.objective};
    for (size_t j = 0; j < further.size(); ++j) {
      const double value =
          j < trial.further_objectives.size() ? trial.further_objectives[j] : std::nan("");
      loss.push_back(further[j].goal == "maximize" ? -value : value);
    }
    ids.push_back(trial.trial_id);
    losses.push_back(std::move(loss));
  }
  std::set<int64_t> front;
  for (const size_t i : ParetoFront(losses)) front.insert(ids[i]);
  return front;
}

std::vector<const TrialResult*> Leaderboard(const StudyContents& study) {
  std::vector<const TrialResult*> board;
  for (const TrialResult& trial : study.trials) board.push_back(&trial);
  const bool maximize = Maximize(study);
  const std::set<int64_t> front = ParetoFrontIds(study);
  std::sort(board.begin(), board.end(), [&](const TrialResult* a, const TrialResult* b) {
    const bool a_front = front.count(a->trial_id) != 0;
    const bool b_front = front.count(b->trial_id) != 0;
    if (a_front != b_front) return a_front;
    const bool a_none = std::isnan(a->objective);
    const bool b_none = std::isnan(b->objective);
    if (a_none != b_none) return b_none;
    if (!a_none && a->objective != b->objective) {
      return maximize ? a->objective > b->objective : a->objective < b->objective;
    }
    return a->trial_id < b->trial_id;
  });
  return board;
}

std::vector<std::pair<std::string, double>> TestMetrics(const StudyContents& study) {
  std::vector<std::pair<std::string, double>> metrics;
  for (const auto& [name, value] : study.extra_attributes) {
    if (name.rfind(kTestMetricPrefix, 0) != 0) continue;
    if (const double* number = std::get_if<double>(&value)) metrics.emplace_back(name, *number);
  }
  return metrics;
}

const StudyAttribute* FindExtra(const StudyContents& study, const char* name) {
  const auto found = study.extra_attributes.find(name);
  return found == study.extra_attributes.end() ? nullptr : &found->second;
}

std::optional<int64_t> BestTrialId(const StudyContents& study,
                                   const std::vector<const TrialResult*>& board) {
  if (const StudyAttribute* attribute = FindExtra(study, kBestTrialAttribute)) {
    if (const auto* id = std::get_if<int64_t>(attribute)) return *id;
    if (const auto* id = std::get_if<double>(attribute)) return static_cast<int64_t>(*id);
  }
  if (!board.empty() && !std::isnan(board.front()->objective)) return board.front()->trial_id;
  return std::nullopt;
}

std::string StatusCounts(const StudyContents& study) {
  std::map<TrialStatus, size_t> counts;
  for (const TrialResult& trial : study.trials) ++counts[trial.status];
  std::string text = std::to_string(study.trials.size()) +
                     " trials: " + std::to_string(counts[TrialStatus::kCompleted]) +
                     " completed, " + std::to_string(counts[TrialStatus::kStopped]) + " stopped, " +
                     std::to_string(counts[TrialStatus::kFailed]) + " failed";
  if (counts[TrialStatus::kPaused] != 0) {
    text += ", " + std::to_string(counts[TrialStatus::kPaused]) + " paused";
  }
  if (counts[TrialStatus::kRunning] != 0) {
    text += ", " + std::to_string(counts[TrialStatus::kRunning]) + " running";
  }
  return text;
}

std::string AttributeText(const StudyAttribute& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return FormatParamValue(*d);
  return std::get<std::string>(value);
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) {
  return std::isfinite(value) ? FormatParamValueExact(value) : "null";
}

std::string JsonValue(const StudyAttribute& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return JsonNumber(*d);
  return JsonString(std::get<std::string>(value));
}

std::string TestMetricsJson(const StudyContents& study) {
  std::string out;
  for (const auto& [name, value] : TestMetrics(study)) {
    out += (out.empty() ? "" : ", ") + JsonString(name) + ": " + JsonNumber(value);
  }
  return "{" + out + "}";
}

std::string TestTablesJson(const StudyContents& study) {
  std::string out;
  for (const MetricTable& table : study.tables) {
    std::string labels;
    for (const std::string& label : table.labels) {
      labels += (labels.empty() ? "" : ", ") + JsonString(label);
    }
    std::string rows;
    for (int64_t r = 0; r < table.rows; ++r) {
      std::string row;
      for (int64_t c = 0; c < table.columns; ++c) {
        row += (c == 0 ? "" : ", ") +
               JsonNumber(table.values[static_cast<size_t>(r * table.columns + c)]);
      }
      rows += (r == 0 ? "[" : ", [") + row + "]";
    }
    out += (out.empty() ? "" : ", ") + std::string("{\"name\": ") +
           JsonString(kTestMetricPrefix + table.name) + ", \"labels\": [" + labels +
           "], \"rows\": [" + rows + "]}";
  }
  return "[" + out + "]";
}

}  // namespace hpo::report_internal
