// Warm start (`warm_start:` beside `sweep:`): the trials of earlier studies that seed a sweep's
// searcher and scheduler, as SageMaker's warm start seeds a tuning job with its parents' trials.
// Read on rank 0 before anything is written; the coordinator feeds them (CoordinatorDeps). Plain
// functions over values; no MPI, no torch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/trial.hpp"
#include "study/study_file.hpp"

namespace hpo {

// One earlier trial in this sweep's terms.
struct PriorTrial {
  Assignment params;  // this sweep's parameters, in its order and types
  // Completed or stopped (a trial left paused at a rung counts as stopped).
  TrialStatus status = TrialStatus::kCompleted;
  double objective = 0.0;
  // The sweep metric per epoch (epoch -> value), for the searcher's multi-fidelity data.
  std::map<int64_t, double> reports;
  // Whether its study trained as many epochs per trial as this sweep: only then do its reports
  // seed the scheduler's records (ASHA's rungs, the curve model's references).
  bool same_epochs = false;
  // This sweep's active parameters its study did not have (a parameter added since): it informs
  // the searcher on the parameters it has (search/trial_history.hpp), as SageMaker's and
  // Optuna's warm starts use such parents.
  std::vector<std::string> missing;
};

struct WarmStart {
  std::vector<PriorTrial> trials;  // in the order of the config's studies, each in file order
  // One line per study for the sweep's progress output: how many of its trials seed this sweep
  // and why the others do not.
  std::vector<std::string> summary;
  // What the studies held ("PATH: N rows, M used; ..."): recorded in the study, so that a resume
  // after they changed is refused instead of rebuilding another search state.
  std::string fingerprint;
};

// A trial of `study` in the space of `config`: its parameters mapped by name (a parameter the
// study lacks takes a constant's value, or is listed in prior->missing; one it has that the
// config lacks, or that the config's conditions leave out for this trial, is dropped), each value
// within the config's distribution. False, with `why`, when it failed, has no finite objective or
// does not lie in the space. `metric_index` is the sweep metric's column of the study's curves.
bool MapPriorTrial(const SweepConfig& config, const TrialResult& trial, size_t metric_index,
                   bool same_epochs, PriorTrial* prior, std::string* why);

// Reads the studies of config.warm_start. BadInput naming the config file, the entry's line and
// the study for: a study that cannot be read (ReadStudy's reason), one with another metric or goal,
// this sweep's own study (`own_study`: continue it with --resume instead). A study whose trials all
// lie outside the space is not an error (its summary line says so).
Status LoadWarmStart(const SweepConfig& config, const TaskCatalog& catalog,
                     const std::string& own_study, WarmStart* warm_start);

}  // namespace hpo
