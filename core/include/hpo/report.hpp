// Formatting a study for people and scripts (`hpo report`). Pure functions over StudyContents;
// thread-safe.
#pragma once

#include <string>

#include "hpo/status.hpp"
#include "hpo/study_file.hpp"

namespace hpo {

enum class ReportFormat { kTable, kCsv, kJson };

struct ReportOptions {
  int top_k = 10;  // rows in the leaderboard; <= 0 means all
  ReportFormat format = ReportFormat::kTable;
};

// The leaderboard: trials with an objective, best first by the study's goal (ties by trial id),
// then trials without one (failed). Table: a header block (study metric, goal, trial counts by
// status, best trial and its test accuracy when the study has a `test_accuracy` attribute) and
// aligned columns rank, trial, status, objective, each hyperparameter, epochs, duration_s.
// CSV: a header row and one row per trial, RFC 4180 quoting. JSON: an object with "metric",
// "goal", "best_trial_id", "test_accuracy" (or null) and "trials" (array of objects).
std::string FormatReport(const StudyContents& study, const ReportOptions& options);

}  // namespace hpo
