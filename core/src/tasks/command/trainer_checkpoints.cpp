#include "tasks/command/trainer_checkpoints.hpp"

#include <optional>
#include <regex>
#include <system_error>

namespace hpo {
namespace {

namespace fs = std::filesystem;

constexpr char kTrainerStateFile[] = "trainer_state.json";

// N of a `checkpoint-N` folder (transformers' _re_checkpoint), or nothing.
std::optional<long long> TrainerCheckpointStep(const fs::directory_entry& entry) {
  static const std::regex pattern("checkpoint-([0-9]{1,18})");
  std::smatch match;
  const std::string name = entry.path().filename().string();
  std::error_code error;
  if (!std::regex_match(name, match, pattern) || !entry.is_directory(error)) return std::nullopt;
  return std::stoll(match[1].str());
}

}  // namespace

CheckpointFolderScan ScanCheckpointFolder(const std::string& folder, fs::file_time_type since) {
  CheckpointFolderScan scan;
  std::error_code error;
  std::optional<long long> newest_step;
  fs::path newest;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::optional<long long> step = TrainerCheckpointStep(entry);
    if (!step) {
      scan.other_content = true;
      continue;
    }
    scan.trainer_layout = true;
    if (!newest_step || *step > *newest_step) {
      newest_step = step;
      newest = entry.path();
    }
  }
  if (!newest_step) return scan;
  const fs::file_time_type written = fs::last_write_time(newest / kTrainerStateFile, error);
  scan.newest_incomplete = static_cast<bool>(error);
  scan.saved_since = !error && written >= since;
  return scan;
}

bool CheckpointSettled(const CheckpointFolderScan& scan, double waited_s, bool started_over) {
  if (scan.newest_incomplete) return false;
  if (scan.saved_since) return true;
  if (scan.other_content && !scan.trainer_layout) return true;
  if (started_over && !scan.trainer_layout) return true;
  return waited_s >= kCheckpointSaveStartSeconds;
}

std::vector<std::string> RemoveIncompleteTrainerCheckpoints(const std::string& folder) {
  std::vector<fs::path> incomplete;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    if (TrainerCheckpointStep(entry) && !fs::exists(entry.path() / kTrainerStateFile, error)) {
      incomplete.push_back(entry.path());
    }
  }
  std::vector<std::string> removed;
  for (const fs::path& path : incomplete) {
    fs::remove_all(path, error);
    if (!error) removed.push_back(path.filename().string());
  }
  return removed;
}

}  // namespace hpo
