// What a command trial's program gets from the platform its sweep was written for, beside the
// torchrun environment the command runner gives every program: W&B's run contract (every command
// sweep: a W&B sweep's program calls wandb.init()), SageMaker script mode's training environment
// (`sagemaker:`), Katib's File collector's metrics file (`metrics_file:`), and the sweep's own
// `environment:`. Each platform's part lives in its folder under platforms/; this joins them for
// the runner. No MPI, no torch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "program/command_line.hpp"
#include "program/metric_source.hpp"

namespace hpo {

// One rank's program of one trial.
struct ProgramPlatformInput {
  std::string trial_dir;  // OUTPUT/trials/ID, absolute (exists)
  int64_t trial_id = 0;
  int attempt = 0;
  int rank_in_group = 0;
  int group_size = 1;
  bool has_gpu = false;  // this rank trains on a GPU of its own
  int threads = 1;       // CPU threads per rank
  std::vector<CommandArg> params;
};

// What PrepareProgramPlatform gives one rank's program.
struct ProgramPlatform {
  // Set in the program's environment after hpo's own variables, in order (a later one wins).
  std::vector<std::pair<std::string, std::string>> environment;
  // Files the program writes its metrics to (rank 0 only; W&B's run log, Katib's metrics file).
  std::vector<std::unique_ptr<MetricSource>> metric_sources;
  // Whether the metrics come from metric_sources alone from the start (Katib's File collector);
  // otherwise the program's output is read until a source has started.
  bool output_has_no_metrics = false;
  // Where the trial's model is kept (SageMaker's SM_MODEL_DIR on rank 0); empty without one.
  std::string model_dir;
  // The program's working folder (SageMaker runs a script in its source folder, /opt/ml/code);
  // empty: the rank's own.
  std::string working_dir;
};

// Prepares the platforms' files for one rank of one trial and says what its program gets;
// `argv` (the expanded command) has a metrics_file's path replaced by the trial's own file.
// `inherited` is the environment the program inherits. Failure naming the file that could not
// be written.
Status PrepareProgramPlatform(const SweepConfig& config, const ProgramPlatformInput& input,
                              const std::vector<std::string>& inherited,
                              std::vector<std::string>* argv, ProgramPlatform* platform);

// The trial's copy of a metrics_file: OUTPUT/trials/ID/<file name of spec.path>.
std::string TrialMetricsFile(const MetricsFileSpec& spec, const std::string& trial_dir);

// Where rank 0's program keeps the model of the trial in `trial_dir` (SageMaker's SM_MODEL_DIR),
// or "" when the sweep gives its program no model folder.
std::string TrialModelDir(const SweepConfig& config, const std::string& trial_dir);

}  // namespace hpo
