// W&B's program contract for a command trial: what `wandb agent` gives the program it starts
// (wandb/wandb_agent.py, wandb/sdk/wandb_init.py), with the trial's folder in place of the
// agent's working directory, so that `wandb.init()` loads the trial's hyperparameters into
// `wandb.config` and writes its run (and so its transaction log, read by run_log.hpp) inside the
// trial's folder. No MPI, no torch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hpo/status.hpp"
#include "program/command_line.hpp"

namespace hpo {

// One rank's program of one trial.
struct WandbTrialInput {
  std::string trial_dir;  // OUTPUT/trials/ID (exists)
  int64_t trial_id = 0;
  int attempt = 0;         // a retried or resumed trial starts a new run
  int rank_in_group = 0;   // only rank 0's run is read; the others write beside it
  std::string sweep_name;  // sweep.name, sweep.project, sweep.entity as the config gives them
  std::string project;
  std::string entity;
  std::vector<CommandArg> params;  // the trial's hyperparameters
};

// Where the program's run goes: WANDB_DIR and WANDB_RUN_ID.
struct WandbRunPlace {
  std::string dir;
  std::string run_id;
};

// The sweep's id as W&B's variables carry it: "hpo-" and the sweep's name with every character
// outside [A-Za-z0-9_-] replaced by '-' ("hpo" without a name).
std::string WandbSweepId(const std::string& sweep_name);

// Writes the agent's parameter file (WANDB_DIR/wandb/sweep-SWEEP/config-RUN.yaml, {name: {value:
// v}} with Python's JSON spelling, which YAML reads) and appends to `environment` the variables
// the agent sets: WANDB_SWEEP_ID, WANDB_RUN_ID (trial-ID, trial-ID-rN for attempt N),
// WANDB_SWEEP_PARAM_PATH, WANDB_DIR (the trial's folder on rank 0, trial_dir/wandb-rank-R on
// rank R), and, where `inherited` (the environment the program inherits) does not set them,
// WANDB_PROJECT and WANDB_ENTITY from the sweep, WANDB__TRANSACTION_LOG_FLUSH_INTERVAL=0.5
// (wandb-core writes its log every 15 s by default), and WANDB_MODE=offline unless an API key is at
// hand (WANDB_API_KEY, or api.wandb.ai in ~/.netrc): a program never asks for a login or waits
// on a network. Failure naming the file when it cannot be written.
Status PrepareWandbTrial(const WandbTrialInput& input, const std::vector<std::string>& inherited,
                         std::vector<std::pair<std::string, std::string>>* environment,
                         WandbRunPlace* place);

}  // namespace hpo
