// Private to hpo_core: where a sweep stands, read from its study file while a sweep writes it or
// after (`hpo status OUTPUT`), without disturbing the sweep: the study is opened read-only and
// its lock (STUDY.h5.lock, which a writer holds) only tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/trial.hpp"
#include "study/study_file.hpp"

namespace hpo {

struct SweepStatus {
  std::string study_path;
  bool running = false;  // a sweep holds the study now
  std::string metric;
  std::string goal;
  std::optional<int64_t> planned;  // run_cap or the search space's size; none: unbounded
  int64_t completed = 0;
  int64_t stopped = 0;
  int64_t failed = 0;
  int64_t paused = 0;  // at an ASHA rung, waiting for promotion
  // Dispatched and not finished at the last publish: id, the last epoch reported and its value.
  // While no sweep runs the study: the trials an interrupted sweep left to go on from their
  // checkpoints (their epochs are in no /curves row yet).
  struct InFlight {
    int64_t trial_id = 0;
    int64_t epoch = 0;  // 0: no report yet
    double objective = 0.0;
  };
  std::vector<InFlight> in_flight;
  std::optional<TrialResult> best;  // of the completed trials with a finite objective
  // Group time per trial that ran: every finished or paused trial's spans (a paused and promoted
  // trial's earlier runs too) over their number.
  double mean_duration_s = 0.0;
  bool ended = false;  // the sweep ended (its best trial is recorded), trials left paused or not
  int64_t groups = 0;  // trials the sweep runs at once (0: unknown)
};

// The trials running at the study's last publish, from its `running_trials` attribute (none
// when it has none: a finished sweep): what `hpo status` lists while a sweep runs, and the live
// OUTPUT/report.html too. BadInput when the attribute is damaged.
Status ReadInFlightTrials(const StudyContents& study, std::vector<SweepStatus::InFlight>* trials);

// Reads the status of the study at `path` (an output folder holding study.h5, or the study file).
// BadInput naming the path when it is no study; the config's task comes from `catalog`.
Status ReadSweepStatus(const std::string& path, const TaskCatalog& catalog, SweepStatus* status);

// The status as a few lines of text: the study and whether a sweep runs it, the trials finished
// of those planned by status, the trials in flight (or interrupted), the best so far, and (while
// running) the expected time left: the trials neither finished nor paused x the time per trial
// that ran / the groups.
std::string FormatSweepStatus(const SweepStatus& status);

}  // namespace hpo
