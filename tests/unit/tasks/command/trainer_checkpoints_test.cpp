#include "tasks/command/trainer_checkpoints.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hpo {
namespace {

namespace fs = std::filesystem;

// A trial's checkpoint folder as Trainer (or another program) leaves it, with the time the
// report that ends the trial was read.
class TrainerCheckpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("hpo_trainer_checkpoints_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    report_read_ = fs::file_time_type::clock::now();
  }
  void TearDown() override { fs::remove_all(folder_); }

  // A file at `relative`, written `seconds` after the report was read (before it, when negative).
  void Write(const std::string& relative, double seconds) {
    const fs::path path = folder_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "{}";
    fs::last_write_time(path,
                        report_read_ + std::chrono::duration_cast<fs::file_time_type::duration>(
                                           std::chrono::duration<double>(seconds)));
  }

  CheckpointFolderScan Scan() const { return ScanCheckpointFolder(folder_.string(), report_read_); }

  fs::path folder_;
  fs::file_time_type report_read_;
};

// Trainer has not begun the save of the step it reported: the folder is empty, or holds only the
// checkpoint of an earlier step. The programs are stopped only once the save could have begun.
TEST_F(TrainerCheckpointsTest, WaitsForASaveToBeginAfterTheReport) {
  EXPECT_FALSE(CheckpointSettled(Scan(), 0.0, false));
  EXPECT_TRUE(CheckpointSettled(Scan(), kCheckpointSaveStartSeconds, false));
  EXPECT_TRUE(CheckpointSettled(ScanCheckpointFolder((folder_ / "absent").string(), report_read_),
                                kCheckpointSaveStartSeconds, false));
  Write("checkpoint-4/model.safetensors", -30.0);
  Write("checkpoint-4/trainer_state.json", -29.0);
  EXPECT_FALSE(CheckpointSettled(Scan(), 0.5, false));
  EXPECT_TRUE(CheckpointSettled(Scan(), kCheckpointSaveStartSeconds, false));
}

// A program that started over from step 1 where a later step was due keeps no checkpoint in its
// folder: an empty folder is not waited for then, but a Trainer checkpoint still is.
TEST_F(TrainerCheckpointsTest, AProgramThatStartedOverIsNotWaitedForWithAnEmptyFolder) {
  EXPECT_TRUE(CheckpointSettled(Scan(), 0.0, true));
  EXPECT_FALSE(CheckpointSettled(Scan(), 0.0, false));
  Write("checkpoint-4/model.safetensors", -30.0);
  Write("checkpoint-4/trainer_state.json", -29.0);
  EXPECT_FALSE(CheckpointSettled(Scan(), 0.5, true));
  Write("checkpoint-8/model.safetensors", 0.1);
  EXPECT_FALSE(CheckpointSettled(Scan(), 1000.0, true));
}

// Mid-save the highest checkpoint-N has no trainer_state.json: never stopped then, however long it
// took (the grace bounds the wait, not this rule). Steps compare as numbers: 10 is after 8.
TEST_F(TrainerCheckpointsTest, NeverSettledWhileTheNewestCheckpointIsBeingWritten) {
  Write("checkpoint-8/model.safetensors", -30.0);
  Write("checkpoint-8/trainer_state.json", -29.0);
  Write("checkpoint-10/model.safetensors", 0.2);
  const CheckpointFolderScan scan = Scan();
  EXPECT_TRUE(scan.trainer_layout);
  EXPECT_TRUE(scan.newest_incomplete);
  EXPECT_FALSE(CheckpointSettled(scan, 1000.0, false));
}

// The save of the reported step is complete once its trainer_state.json, written last, is newer
// than the report: the programs are stopped at once.
TEST_F(TrainerCheckpointsTest, SettledOnceTheReportedStepIsSaved) {
  Write("checkpoint-8/trainer_state.json", -29.0);
  Write("checkpoint-12/model.safetensors", 0.1);
  Write("checkpoint-12/optimizer.pt", 0.6);
  Write("checkpoint-12/trainer_state.json", 0.7);
  const CheckpointFolderScan scan = Scan();
  EXPECT_FALSE(scan.newest_incomplete);
  EXPECT_TRUE(scan.saved_since);
  EXPECT_TRUE(CheckpointSettled(scan, 0.0, false));
}

// A program with a layout of its own saves before it reports (or on SIGTERM): no wait.
TEST_F(TrainerCheckpointsTest, AProgramsOwnLayoutIsNotWaitedFor) {
  Write("trial_3.pt", -1.0);
  const CheckpointFolderScan scan = Scan();
  EXPECT_FALSE(scan.trainer_layout);
  EXPECT_TRUE(scan.other_content);
  EXPECT_TRUE(CheckpointSettled(scan, 0.0, false));
}

// Before a program starts again, a save cut short is removed so that Trainer's
// get_last_checkpoint, which takes the highest step, finds the last complete one; complete
// checkpoints and anything not named checkpoint-N stay.
TEST_F(TrainerCheckpointsTest, RemovesOnlyCheckpointsCutShort) {
  Write("checkpoint-8/model.safetensors", -30.0);
  Write("checkpoint-8/trainer_state.json", -29.0);
  Write("checkpoint-10/model.safetensors", -1.0);
  Write("checkpoint-final/model.safetensors", -1.0);
  Write("runs/events", -1.0);
  EXPECT_EQ(RemoveIncompleteTrainerCheckpoints(folder_.string()),
            std::vector<std::string>{"checkpoint-10"});
  EXPECT_FALSE(fs::exists(folder_ / "checkpoint-10"));
  EXPECT_TRUE(fs::exists(folder_ / "checkpoint-8" / "trainer_state.json"));
  EXPECT_TRUE(fs::exists(folder_ / "checkpoint-final"));
  EXPECT_TRUE(fs::exists(folder_ / "runs" / "events"));
  EXPECT_TRUE(RemoveIncompleteTrainerCheckpoints((folder_ / "absent").string()).empty());
}

}  // namespace
}  // namespace hpo
