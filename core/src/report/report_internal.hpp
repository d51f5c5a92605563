// Private to hpo_core's report module: what the text formats (report.cpp) and the HTML page
// (html_report.cpp) share. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hpo/task_catalog.hpp"
#include "study/study_file.hpp"

namespace hpo::report_internal {

// Root attributes the sweep adds beyond the standard ones: the best trial's id, and its metrics on
// the task's held-out test split, named test_* by the task (test_accuracy, test_rmse, ...).
inline constexpr char kBestTrialAttribute[] = "best_trial_id";
inline constexpr char kTestMetricPrefix[] = "test_";

// The page's stylesheet and script (core/src/report/templates/report.{css,js}, compiled in).
extern const char kReportCss[];
extern const char kReportJs[];

// "maximize" or "minimize" (a study without a goal attribute minimizes).
std::string MetricGoal(const StudyContents& study);

// All trials, best first by the study's goal (ties by trial id), then those without an objective
// by trial id. With several objectives the Pareto front (ParetoFrontIds) comes first, in that
// order, then the other trials in that order.
std::vector<const TrialResult*> Leaderboard(const StudyContents& study);

// Several objectives (layout.further_objectives): the ids of the completed and stopped trials
// that no other such trial dominates on every objective's goal (common/pareto.hpp); trials with a
// NaN objective are never on it. Empty for a study of one objective.
std::set<int64_t> ParetoFrontIds(const StudyContents& study);

// The root attribute `name` beyond the standard ones, or nullptr.
const StudyAttribute* FindExtra(const StudyContents& study, const char* name);

// The best trial's test metrics (numeric test_* root attributes), by name.
std::vector<std::pair<std::string, double>> TestMetrics(const StudyContents& study);

// The best trial: the study's best_trial_id attribute when it has one, else the leaderboard's
// first trial with an objective.
std::optional<int64_t> BestTrialId(const StudyContents& study,
                                   const std::vector<const TrialResult*>& board);

// "N trials: A completed, B stopped, C failed[, D running]".
std::string StatusCounts(const StudyContents& study);

// An attribute as text: integers exactly, doubles as FormatParamValue, strings as they are.
std::string AttributeText(const StudyAttribute& value);

// JSON: a quoted, escaped string; a number (null when not finite); an attribute or hyperparameter
// value as a JSON string or number.
std::string JsonString(const std::string& text);
std::string JsonNumber(double value);
std::string JsonValue(const StudyAttribute& value);

// The best trial's test results as JSON, as `hpo report --format json` and the HTML page's embedded
// study both write them: an object of the test metrics by name, and an array of the tables
// ({"name": "test_NAME", "labels": [...], "rows": [[...], ...]}).
std::string TestMetricsJson(const StudyContents& study);
std::string TestTablesJson(const StudyContents& study);

// Population-based training (layout.lineage): one edge per trial that started from another's
// checkpoint, in trial id order, with the hyperparameters that differ from its parent's
// ("lr 0.01 -> 0.012"; a parameter the parent lacks shows "-").
struct LineageEdge {
  int64_t child = -1;
  int64_t parent = -1;
  int64_t epoch = 0;
  std::vector<std::string> changes;
  // The child's program started over instead of from the parent's checkpoint (its message says
  // `restarted: ...`): the edge was planned, not trained.
  bool restarted = false;
};
std::vector<LineageEdge> Lineage(const StudyContents& study);

enum class AxisScale { kLinear, kLog, kCategorical };

// One hyperparameter's axis: its scale and range (numeric) or its categories in order.
struct Axis {
  std::string name;
  AxisScale scale = AxisScale::kLinear;
  double min = std::numeric_limits<double>::infinity();  // numeric axes
  double max = -std::numeric_limits<double>::infinity();
  std::vector<ParamValue> categories;  // categorical axes, bottom to top
};

// One axis per hyperparameter column of the study with more than one possible value. Axes follow
// the study's config when it parses (with `catalog`'s tasks): log scale for log distributions,
// the config's order of categorical values, ranges spanning the search space's bounds; otherwise
// they follow the data (strings categorical in sorted order, positive numbers over 3+ decades
// log, others linear). Constants of the config have no axis.
std::vector<Axis> BuildAxes(const StudyContents& study, const TaskCatalog& catalog);

}  // namespace hpo::report_internal
