// Private to hpo_core: Hugging Face Trainer's checkpoints in a trial's HPO_CHECKPOINT_DIR, as the
// command runner sees them when it stops the trial's programs. Trainer (transformers) saves a
// `checkpoint-N` folder (N its global step): the model, the optimizer, the scheduler and the RNG
// states, then trainer_state.json last. It prints an evaluation before it saves that step, so a
// program stopped right after the report it was paused on loses the save or leaves it
// half-written, and `get_last_checkpoint` resumes from the highest N, complete or not ("Can't find
// a valid checkpoint"). No MPI, no torch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hpo {

// What a trial's checkpoint folder shows when its programs are about to be stopped.
struct CheckpointFolderScan {
  bool trainer_layout = false;     // it holds a checkpoint-N folder
  bool other_content = false;      // it holds anything else: the program's own layout
  bool newest_incomplete = false;  // the highest checkpoint-N has no trainer_state.json yet
  bool saved_since = false;        // the highest checkpoint-N's trainer_state.json is newer
};

// How long a program may take from its report to the first write of its save: a Trainer program
// has not begun the checkpoint of the step it reported while its folder is still empty.
inline constexpr double kCheckpointSaveStartSeconds = 2.0;

// Scans `folder` (missing: empty); `since` is when the report that ends the trial was read.
CheckpointFolderScan ScanCheckpointFolder(const std::string& folder,
                                          std::filesystem::file_time_type since);

// Whether the programs may be stopped now, `waited_s` after the report: never while Trainer
// writes a checkpoint; once it has saved one since the report; at once for a program with a layout
// of its own (docs/tasks.md: it saves before it reports, or on SIGTERM), and for an empty folder
// when the program `started_over` (this run began at step 1 where a later step was due: it keeps
// no checkpoint there, so nothing is to be waited for); and otherwise for an empty folder or
// Trainer checkpoints older than the report, once kCheckpointSaveStartSeconds passed.
bool CheckpointSettled(const CheckpointFolderScan& scan, double waited_s, bool started_over);

// Removes each checkpoint-N folder of `folder` that has no trainer_state.json (a save cut short,
// which `get_last_checkpoint` would pick) once the programs are stopped; returns their names.
std::vector<std::string> RemoveIncompleteTrainerCheckpoints(const std::string& folder);

}  // namespace hpo
