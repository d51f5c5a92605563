#include "runtime/trial_files.hpp"

#include <filesystem>

namespace hpo {

namespace fs = std::filesystem;

std::string WeightsPath(const std::string& output, int64_t trial_id) {
  return (fs::path(output) / "models" / ("trial_" + std::to_string(trial_id) + ".pt")).string();
}

std::string CheckpointPath(const std::string& output, int64_t trial_id) {
  return (fs::path(output) / "checkpoints" / ("trial_" + std::to_string(trial_id) + ".pt"))
      .string();
}

std::string CheckpointDir(const std::string& output, int64_t trial_id) {
  return (fs::path(output) / "checkpoints" / ("trial_" + std::to_string(trial_id))).string();
}

}  // namespace hpo
