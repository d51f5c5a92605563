// Formatting a study for people and scripts (`hpo report`). Pure functions over StudyContents;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "report/importance.hpp"
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
// duration_s. CSV: a header row and one row per trial, RFC 4180 quoting. In the table and the CSV
// a hyperparameter named like one of their other columns (a program's own `epochs`) is headed
// `param:NAME`, as the study file's column is. JSON: an object with
// "metric", "goal", "best_trial_id", "test_metrics" (name -> value), "test_tables" and "trials"
// (array of objects).
std::string FormatReport(const StudyContents& study, const ReportOptions& options);

// The study as one self-contained HTML page (`hpo report --html FILE`): a summary, then one
// <section> per view, each with a one-line reading guide: #history (the objective in finishing
// order, by trial, wall time or cumulative epochs, with the best so far), #importance (fANOVA
// bars), #slices (the objective against each hyperparameter), #contour (the two most important
// hyperparameters), #timeline (a lane per trial group, a bar per trial, slot utilization),
// #parallel (parallel coordinates: drag along an axis to select a range), #curves (learning
// curves), #test with #confusion (the best trial on the test split, when the study has it),
// #table (sortable) and #config; every plot and the table show the same selection. Inline CSS
// and JavaScript, no network access: it opens on a machine without internet. The trials are
// embedded as JSON (`<script id="hpo-study" type="application/json">`, every '<' escaped) so
// scripts can read them back. Axes follow the
// study's config when it parses: log scale for log distributions, the config's order of
// categorical values, ranges spanning the search space's bounds; otherwise they follow the data
// (strings categorical in sorted order, positive numbers over 3+ decades log, others linear).
// The config's task comes from BuiltinTaskCatalog().
std::string FormatHtmlReport(const StudyContents& study);
// As above, the config's task from `catalog` (the tasks of the run that wrote the study).
std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog);
// As above, with the importance already computed (ComputeStudyImportance), e.g. to store it too.
std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog,
                             const StudyImportance& importance);

// A trial running while a live page is written: the last epoch it reported (0: none yet) and its
// value of the sweep metric then.
struct LiveTrial {
  int64_t trial_id = 0;
  int64_t epoch = 0;
  double objective = 0.0;
};

// A page written while its sweep runs (OUTPUT/report.html): it reloads itself every
// `reload_seconds`, says when it was written (`written_at`, e.g. "2026-11-27 22:41:07 UTC") and
// lists the trials `running` at the study's last publish, as `hpo status` does.
struct LivePage {
  int reload_seconds = 5;
  std::string written_at;
  std::vector<LiveTrial> running;
};
// As above, as a live page: a <meta http-equiv="refresh">, a line under the title saying the
// sweep is running, when the page was written and how often it reloads, and a line listing the
// running trials ("running: trial 4 (epoch 2, val_accuracy 0.861), trial 5 (no epoch yet)").
std::string FormatHtmlReport(const StudyContents& study, const TaskCatalog& catalog,
                             const StudyImportance& importance, const LivePage& live);

// One study of a comparison: how the page names it (e.g. its path) and its contents (borrowed).
struct NamedStudy {
  std::string name;
  const StudyContents* study = nullptr;
};

// Several studies on one page (`hpo report A.h5 B.h5 ... --html FILE`): a table (method, trials,
// best objective, epochs in all and until the best trial) and #comparison, every study's trials
// and best-so-far line overlaid by cumulative epochs (or trials, or wall time). The metric and
// goal are the first study's; a study of another metric is drawn and named in a warning. The
// trials are embedded as `<script id="hpo-comparison" type="application/json">`:
// {"metric", "goal", "studies": [{"name", "method", "metric", "goal", "trials": [{"trial_id",
// "status", "objective", "epochs", "duration_s", "group", "order", "start_time_s"}]}]}.
// `studies` must not be empty.
std::string FormatComparisonHtml(const std::vector<NamedStudy>& studies,
                                 const TaskCatalog& catalog);

}  // namespace hpo
