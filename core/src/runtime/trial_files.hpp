// Private to hpo_runtime and the built-in tasks: where a trial's files live in the output folder.
#pragma once

#include <cstdint>
#include <string>

namespace hpo {

// OUTPUT/models/trial_ID.pt: where the leader saves a libtorch trial's final weights.
std::string WeightsPath(const std::string& output, int64_t trial_id);

// OUTPUT/checkpoints/trial_ID.pt: a libtorch trial's latest checkpoint; OUTPUT/checkpoints/
// trial_ID/: a command trial's HPO_CHECKPOINT_DIR.
std::string CheckpointPath(const std::string& output, int64_t trial_id);
std::string CheckpointDir(const std::string& output, int64_t trial_id);

}  // namespace hpo
