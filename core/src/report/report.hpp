// Formatting a study for people and scripts (`hpo report`). Pure functions over StudyContents;
// thread-safe.
#pragma once

#include <string>

#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "study/study_file.hpp"

namespace hpo {

enum class ReportFormat { kTable, kCsv, kJson };

struct ReportOptions {
  int top_k = 10;  // rows in the leaderboard; <= 0 means all
  ReportFormat format = ReportFormat::kTable;
};

// The leaderboard: trials with an objective, best first by the study's goal (ties by trial id),
// then trials without one (failed). Table: a header block (study metric, goal, trial counts by
// status, best trial, the best trial's test_* attributes and /test_* tables, whatever the task
// named them) and aligned columns rank, trial, status, objective, each hyperparameter, epochs,
// duration_s. CSV: a header row and one row per trial, RFC 4180 quoting. JSON: an object with
// "metric", "goal", "best_trial_id", "test_metrics" (name -> value), "test_tables" and "trials"
// (array of objects).
std::string FormatReport(const StudyContents& study, const ReportOptions& options);

// The study as one self-contained HTML page (`hpo report --html FILE`): a summary, an interactive
// parallel-coordinates plot of every trial (one axis per swept hyperparameter, then the sweep
// metric; lines coloured by the metric; drag along an axis to select a range), the sweep metric's
// learning curves and a sortable table of the trials, the plots and table filtered by the same
// selection, and the config. Inline CSS and JavaScript, no network access: it opens on a machine
// without internet. The trials are embedded as JSON (`<script id="hpo-study"
// type="application/json">`, every '<' escaped) so scripts can read them back. Axes follow the
// study's config when it parses: log scale for log distributions, the config's order of
// categorical values, ranges spanning the search space's bounds; otherwise they follow the data
// (strings categorical in sorted order, positive numbers over 3+ decades log, others linear).
// The config's task comes from BuiltinTaskCatalog().
std::string FormatHtmlReport(const StudyContents& study);
// As above, the config's task from `catalog` (the tasks of the run that wrote the study).
std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog);

}  // namespace hpo
