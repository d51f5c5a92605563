// `hpo status` (coord/sweep_status.hpp) on a study no sweep holds: the trials by status, the
// planned count from the stored config, the best so far, what the text says, and a bad path; the
// running trials of a coordinator's study, as status and the live report.html list them, and
// as status names them once the sweep is interrupted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/count_text.hpp"
#include "common/duration_text.hpp"
#include "coord/coordinator.hpp"
#include "coord/sweep_status.hpp"
#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"
#include "report/report.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace hpo {
namespace {

constexpr char kConfig[] =
    "task: synthetic\nepochs: 3\nsweep:\n  method: random\n  run_cap: 10\n"
    "  metric: {name: val_loss, goal: minimize}\n  parameters:\n"
    "    lr: {min: 0.001, max: 0.1}\n";

TrialResult Trial(int64_t id, TrialStatus status, double objective, double duration_s) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = status;
  trial.objective = objective;
  trial.params = {{"lr", 0.01 * static_cast<double>(id + 1)}};
  trial.epochs = 1;
  trial.duration_s = duration_s;
  trial.group = 0;
  trial.curve.push_back({1, {objective}});
  return trial;
}

class SweepStatusTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_status_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(SweepStatusTest, AStoppedSweepCountsItsTrialsAndSaysHowToGoOn) {
  StudyLayout layout;
  layout.params = {{"lr", ParamType::kFloat, 0}};
  layout.metric_names = {"val_loss"};
  StudyAttributes attributes;
  attributes.config = kConfig;
  attributes.metric_name = "val_loss";
  attributes.metric_goal = "minimize";
  attributes.world_size = 2;
  attributes.start_time = "2026-11-27T12:00:00Z";
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(dir_ + "/study.h5", layout, attributes, &writer).ok());
  for (const TrialResult& trial :
       {Trial(0, TrialStatus::kCompleted, 0.5, 2.0), Trial(1, TrialStatus::kCompleted, 0.3, 4.0),
        Trial(2, TrialStatus::kStopped, 0.2, 1.0), Trial(3, TrialStatus::kFailed, 0.1, 1.0),
        Trial(4, TrialStatus::kPaused, 0.4, 1.0)}) {
    ASSERT_TRUE(writer->Append(trial).ok());
  }
  ASSERT_TRUE(writer->Close().ok());
  writer.reset();  // the lock goes with the writer

  SweepStatus status;
  const Status read = ReadSweepStatus(dir_, BuiltinTaskCatalog(), &status);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(status.study_path, dir_ + "/study.h5");
  EXPECT_FALSE(status.running);
  EXPECT_EQ(status.planned, std::optional<int64_t>(10));
  EXPECT_EQ(status.completed, 2);
  EXPECT_EQ(status.stopped, 1);
  EXPECT_EQ(status.failed, 1);
  EXPECT_EQ(status.paused, 1);
  ASSERT_TRUE(status.best.has_value());  // the best completed trial, not the stopped one
  EXPECT_EQ(status.best->trial_id, 1);
  EXPECT_DOUBLE_EQ(status.mean_duration_s, 1.8);  // 9 s of the 5 trials that ran, paused one too
  EXPECT_FALSE(status.ended);
  EXPECT_EQ(status.groups, 2);
  const std::string text = FormatSweepStatus(status);
  EXPECT_NE(text.find("no sweep is running it"), std::string::npos) << text;
  EXPECT_NE(text.find("trials: 4 of 10 finished (2 completed, 1 stopped, 1 failed), 1 paused"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("best: trial 1, val_loss 0.3 (lr=0.02)"), std::string::npos) << text;
  EXPECT_NE(text.find("state: not running, 6 trials left (resume it with hpo sweep --resume)"),
            std::string::npos)
      << text;
}

TEST(SweepStatusTextTest, TheTimeLeftCountsNeitherFinishedNorPausedTrials) {
  // ASHA's promotion variant or the curve model: 4 finished, 3 paused, 10 planned. The 3 trials
  // left (running or to start) take the 1.5 s per trial that ran, on 2 groups: 2.25 s.
  SweepStatus status;
  status.running = true;
  status.planned = 10;
  status.completed = 4;
  status.paused = 3;
  status.mean_duration_s = 1.5;
  status.groups = 2;
  EXPECT_NE(FormatSweepStatus(status).find("state: running, ~" + FormatDuration(2.25) +
                                           " left (3 trials at " + FormatDuration(1.5) +
                                           " each on 2 groups)"),
            std::string::npos)
      << FormatSweepStatus(status);
  // Once the sweep ended, trials left paused do not make it look unfinished.
  status.running = false;
  status.ended = true;
  EXPECT_NE(FormatSweepStatus(status).find("state: finished (3 left paused)"), std::string::npos)
      << FormatSweepStatus(status);
}

// A sweep's trials in flight at its last publish: trial 0 has reported epoch 1, trial 1 nothing
// yet. The live OUTPUT/report.html lists them as `hpo status` does (issue 52: it listed none).
TEST_F(SweepStatusTest, TheLiveReportListsTheRunningTrialsAsStatusDoes) {
  SweepConfig config;
  ASSERT_TRUE(ParseConfig(kConfig, "status.yaml", &config).ok());
  StudyLayout layout;
  layout.params = {{"lr", ParamType::kFloat, 0}};
  layout.metric_names = config.metric_names;
  StudyAttributes attributes;
  attributes.config = kConfig;
  attributes.metric_name = "val_loss";
  attributes.metric_goal = "minimize";
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(dir_ + "/study.h5", layout, attributes, &writer).ok());
  CoordinatorDeps deps;
  ASSERT_TRUE(MakeSearcher(config, &deps.searcher).ok());
  deps.study = writer.get();
  double now = 0.0;
  deps.clock = [&now] { return now; };
  Coordinator coordinator(config, 2, std::move(deps));
  for (int group = 0; group < 2; ++group) {
    ControlMessage request;
    request.kind = MessageKind::kRequestTrial;
    std::optional<ControlMessage> reply;
    ASSERT_TRUE(coordinator.Handle(group, request, &reply).ok());
    ASSERT_TRUE(reply && reply->kind == MessageKind::kTrial);
  }
  ControlMessage report;
  report.kind = MessageKind::kEpochReport;
  report.trial_id = 0;
  report.metrics.epoch = 1;
  report.metrics.values.assign(config.metric_names.size(), 0.25);
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator.Handle(0, report, &reply).ok());
  now = Coordinator::kRunningStateSeconds;  // the running state is published once this old
  ASSERT_TRUE(coordinator.PublishIfDue(/*idle=*/true).ok());

  StudyContents study;
  ASSERT_TRUE(ReadStudy(dir_ + "/study.h5", &study).ok());
  std::vector<SweepStatus::InFlight> running;
  ASSERT_TRUE(ReadInFlightTrials(study, &running).ok());
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].trial_id, 0);
  EXPECT_EQ(running[0].epoch, 1);
  EXPECT_DOUBLE_EQ(running[0].objective, 0.25);
  EXPECT_EQ(running[1].trial_id, 1);
  EXPECT_EQ(running[1].epoch, 0);
  LivePage live;
  live.written_at = "2026-11-27 22:41:07 UTC";
  for (const SweepStatus::InFlight& trial : running) {
    live.running.push_back({trial.trial_id, trial.epoch, trial.objective});
  }
  const std::string page = FormatHtmlReport(study, BuiltinTaskCatalog(), StudyImportance(), live);
  EXPECT_NE(page.find("<p id=\"running\" class=\"guide\">running: trial 0 (epoch 1, val_loss "
                      "0.25), trial 1 (no epoch yet)</p>"),
            std::string::npos)
      << page;
  live.running.clear();
  EXPECT_NE(FormatHtmlReport(study, BuiltinTaskCatalog(), StudyImportance(), live)
                .find(">running: none</p>"),
            std::string::npos);
  // The page written when the sweep ends has no such line.
  EXPECT_EQ(FormatHtmlReport(study, BuiltinTaskCatalog(), StudyImportance()).find("id=\"running\""),
            std::string::npos);

  // Interrupted there (no sweep holds the study): status names the trials a resume continues,
  // whose epochs are in no /curves row yet.
  ASSERT_TRUE(writer->Close().ok());
  writer.reset();
  SweepStatus status;
  ASSERT_TRUE(ReadSweepStatus(dir_, BuiltinTaskCatalog(), &status).ok());
  EXPECT_FALSE(status.running);
  ASSERT_EQ(status.in_flight.size(), 2u);
  const std::string text = FormatSweepStatus(status);
  EXPECT_NE(text.find("interrupted, to go on from checkpoints on resume: trial 0 (epoch 1, "
                      "val_loss 0.25), trial 1 (no epoch yet)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("running:"), std::string::npos) << text;
}

TEST(CountOfTest, OneTakesTheSingularAnyOtherCountThePlural) {
  EXPECT_EQ(CountOf(1, "trial"), "1 trial");
  EXPECT_EQ(CountOf(0, "trial"), "0 trials");
  EXPECT_EQ(CountOf(12, "trial"), "12 trials");
  EXPECT_EQ(ToContinueFromCheckpoints(1), "1 to continue from its checkpoint");
  EXPECT_EQ(ToContinueFromCheckpoints(2), "2 to continue from their checkpoints");
}

TEST_F(SweepStatusTest, APathWithoutAStudyIsBadInput) {
  SweepStatus status;
  const Status read = ReadSweepStatus(dir_, BuiltinTaskCatalog(), &status);
  EXPECT_EQ(read.code(), Status::Code::kBadInput);
  EXPECT_NE(read.message().find(dir_ + "/study.h5"), std::string::npos) << read.message();
}

}  // namespace
}  // namespace hpo
