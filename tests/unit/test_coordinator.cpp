#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "hpo/coordinator.hpp"
#include "hpo/seeding.hpp"

namespace hpo {
namespace {

// Suggests {"lr": 0.1 * (id + 1)} for ids below `space`, then nothing; remembers observations.
class ScriptedSearcher final : public Searcher {
 public:
  explicit ScriptedSearcher(std::optional<int64_t> space) : space_(space) {}
  std::optional<Assignment> Suggest(int64_t trial_id) override {
    if (space_ && trial_id >= *space_) return std::nullopt;
    suggested.push_back(trial_id);
    return Assignment{{"lr", 0.1 * static_cast<double>(trial_id + 1)}};
  }
  void Observe(int64_t trial_id, const Assignment&, TrialStatus, double objective) override {
    observed.emplace_back(trial_id, objective);
  }
  std::optional<int64_t> SpaceSize() const override { return space_; }
  std::string SaveState() const override { return {}; }
  Status RestoreState(const std::string&) override { return Status::Ok(); }

  std::vector<int64_t> suggested;
  std::vector<std::pair<int64_t, double>> observed;

 private:
  std::optional<int64_t> space_;
};

class RecordingStudy final : public StudyWriter {
 public:
  Status Append(const TrialResult& result) override {
    if (fail_next) return Status::Failure("disk full");
    rows.push_back(result);
    return Status::Ok();
  }
  Status SetAttribute(const std::string&, const StudyAttribute&) override { return Status::Ok(); }

  std::vector<TrialResult> rows;
  bool fail_next = false;
};

class RecordingArtifacts final : public TrialArtifacts {
 public:
  void Discard(int64_t trial_id) override { discarded.push_back(trial_id); }
  std::vector<int64_t> discarded;
};

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.execution.task = TaskKind::kSynthetic;
    config_.execution.seed = 1234;
    config_.sweep.metric.name = "val_accuracy";
    config_.sweep.metric.goal = Goal::kMaximize;
    config_.sweep.run_cap = 5;
  }

  std::unique_ptr<Coordinator> Make(int groups, std::optional<int64_t> space = std::nullopt) {
    auto searcher = std::make_unique<ScriptedSearcher>(space);
    searcher_ = searcher.get();
    CoordinatorDeps deps;
    deps.searcher = std::move(searcher);
    deps.study = &study_;
    deps.artifacts = &artifacts_;
    deps.progress = &progress_;
    deps.clock = [this] { return now_; };
    return std::make_unique<Coordinator>(config_, groups, std::move(deps));
  }

  ControlMessage Request(Coordinator& coordinator, int group) {
    ControlMessage request;
    request.kind = MessageKind::kRequestTrial;
    std::optional<ControlMessage> reply;
    Status status = coordinator.Handle(group, request, &reply);
    EXPECT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(ControlMessage{});
  }

  Status Finish(Coordinator& coordinator, int group, int64_t trial_id, double accuracy) {
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial_id;
    done.result.status = TrialStatus::kCompleted;
    done.result.params = {{"lr", 0.1}};
    done.result.curve = {{1, {1.0, 1.0, accuracy / 2, 0.1}}, {2, {0.5, 0.5, accuracy, 0.1}}};
    std::optional<ControlMessage> reply;
    Status status = coordinator.Handle(group, done, &reply);
    EXPECT_FALSE(reply.has_value());
    return status;
  }

  SweepConfig config_;
  RecordingStudy study_;
  RecordingArtifacts artifacts_;
  std::ostringstream progress_;
  ScriptedSearcher* searcher_ = nullptr;
  double now_ = 100.0;
};

TEST_F(CoordinatorTest, AGroupThatFinishesGetsItsNextTrialAtOnce) {
  auto coordinator = Make(2);
  EXPECT_EQ(Request(*coordinator, 0).trial.trial_id, 0);
  EXPECT_EQ(Request(*coordinator, 1).trial.trial_id, 1);
  // Group 1 finishes while group 0 is still busy; it is served without waiting for group 0.
  ASSERT_TRUE(Finish(*coordinator, 1, 1, 0.8).ok());
  const ControlMessage next = Request(*coordinator, 1);
  EXPECT_EQ(next.kind, MessageKind::kTrial);
  EXPECT_EQ(next.trial.trial_id, 2);
  EXPECT_EQ(std::get<double>(next.trial.params[0].value), 0.1 * 3);
}

TEST_F(CoordinatorTest, RunCapEndsTheSweepAndEveryGroupIsToldOnce) {
  auto coordinator = Make(2);
  EXPECT_EQ(coordinator->planned_trials(), 5);
  int64_t dispatched = 0;
  std::vector<int> told_no_more(2, 0);
  for (int round = 0; round < 4; ++round) {
    for (int group = 0; group < 2; ++group) {
      if (told_no_more[group]) continue;
      const ControlMessage reply = Request(*coordinator, group);
      if (reply.kind == MessageKind::kTrial) {
        ++dispatched;
        ASSERT_TRUE(Finish(*coordinator, group, reply.trial.trial_id, 0.5).ok());
      } else {
        EXPECT_EQ(reply.kind, MessageKind::kNoMoreTrials);
        ++told_no_more[group];
      }
    }
  }
  EXPECT_EQ(told_no_more, (std::vector<int>{1, 1}));
  EXPECT_EQ(dispatched, 5);
  EXPECT_TRUE(coordinator->Finished());
  EXPECT_EQ(study_.rows.size(), 5u);
  EXPECT_EQ(searcher_->suggested.size(), 5u);
}

TEST_F(CoordinatorTest, NotFinishedWhileAGroupHasNotBeenTold) {
  config_.sweep.run_cap = 1;
  auto capped = Make(2);
  EXPECT_EQ(Request(*capped, 0).kind, MessageKind::kTrial);
  EXPECT_EQ(Request(*capped, 1).kind, MessageKind::kNoMoreTrials);
  EXPECT_FALSE(capped->Finished());
  ASSERT_TRUE(Finish(*capped, 0, 0, 0.5).ok());
  EXPECT_EQ(Request(*capped, 0).kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(capped->Finished());
}

TEST_F(CoordinatorTest, ExhaustedSearchSpaceEndsBeforeRunCap) {
  auto coordinator = Make(1, /*space=*/2);
  EXPECT_EQ(coordinator->planned_trials(), 2);
  ASSERT_EQ(Request(*coordinator, 0).trial.trial_id, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  ASSERT_EQ(Request(*coordinator, 0).trial.trial_id, 1);
  ASSERT_TRUE(Finish(*coordinator, 0, 1, 0.5).ok());
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator->Finished());
}

TEST_F(CoordinatorTest, ResultsAreRecordedWithObjectiveGroupAndBestKept) {
  auto coordinator = Make(2);
  Request(*coordinator, 0);
  Request(*coordinator, 1);
  ASSERT_TRUE(Finish(*coordinator, 1, 1, 0.7).ok());
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.9).ok());
  Request(*coordinator, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 2, 0.6).ok());

  ASSERT_EQ(study_.rows.size(), 3u);
  EXPECT_EQ(study_.rows[0].trial_id, 1);
  EXPECT_EQ(study_.rows[0].group, 1);
  EXPECT_EQ(study_.rows[0].epochs, 2);
  EXPECT_DOUBLE_EQ(study_.rows[0].objective, 0.7);  // the last epoch's val_accuracy
  ASSERT_TRUE(coordinator->best_trial().has_value());
  EXPECT_EQ(coordinator->best_trial()->trial_id, 0);
  // Trial 1 was best until trial 0 beat it; trial 2 never was.
  EXPECT_EQ(artifacts_.discarded, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(searcher_->observed.size(), 3u);
  EXPECT_EQ(coordinator->trials_finished(), 3);
}

TEST_F(CoordinatorTest, MinimizeGoalPrefersLowerObjective) {
  config_.sweep.metric.name = "val_loss";
  config_.sweep.metric.goal = Goal::kMinimize;
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ControlMessage done;
  done.kind = MessageKind::kTrialResult;
  done.result.trial_id = 0;
  done.result.status = TrialStatus::kCompleted;
  done.result.curve = {{1, {1.0, 0.4, 0.5, 0.1}}};
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator->Handle(0, done, &reply).ok());
  Request(*coordinator, 0);
  done.result.trial_id = 1;
  done.result.curve = {{1, {1.0, 0.3, 0.5, 0.1}}};
  ASSERT_TRUE(coordinator->Handle(0, done, &reply).ok());
  EXPECT_EQ(coordinator->best_trial()->trial_id, 1);
  EXPECT_DOUBLE_EQ(study_.rows[1].objective, 0.3);
}

TEST_F(CoordinatorTest, FailedTrialHasNoObjectiveAndNeverBecomesBest) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ControlMessage done;
  done.kind = MessageKind::kTrialResult;
  done.result.trial_id = 0;
  done.result.status = TrialStatus::kFailed;
  done.result.curve = {{1, {1.0, 0.4, 0.99, 0.1}}};
  done.result.message = "non-finite loss at epoch 2 step 3";
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator->Handle(0, done, &reply).ok());
  EXPECT_TRUE(std::isnan(study_.rows[0].objective));
  EXPECT_FALSE(coordinator->best_trial().has_value());
  EXPECT_NE(progress_.str().find("non-finite loss"), std::string::npos);
}

TEST_F(CoordinatorTest, ProtocolViolationsAreErrors) {
  auto coordinator = Make(2);
  Request(*coordinator, 0);
  ControlMessage request;
  request.kind = MessageKind::kRequestTrial;
  std::optional<ControlMessage> reply;
  EXPECT_FALSE(coordinator->Handle(0, request, &reply).ok());  // still running trial 0
  EXPECT_FALSE(Finish(*coordinator, 1, 0, 0.5).ok());          // group 1 never ran trial 0
  EXPECT_FALSE(coordinator->Handle(7, request, &reply).ok());  // no such group
  ControlMessage report;
  report.kind = MessageKind::kEpochReport;
  report.trial_id = 5;
  EXPECT_FALSE(coordinator->Handle(0, report, &reply).ok());
}

TEST_F(CoordinatorTest, StudyWriteFailureIsReported) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  study_.fail_next = true;
  Status status = Finish(*coordinator, 0, 0, 0.5);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("disk full"), std::string::npos);
}

TEST_F(CoordinatorTest, EpochReportsOfARunningTrialAreAnswered) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ControlMessage report;
  report.kind = MessageKind::kEpochReport;
  report.trial_id = 0;
  report.metrics = {1, {1.0, 1.0, 0.5, 0.1}};
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator->Handle(0, report, &reply).ok());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->kind, MessageKind::kEpochDecision);
  EXPECT_EQ(reply->trial_id, 0);
  EXPECT_TRUE(reply->keep_going);
}

TEST_F(CoordinatorTest, TrialSeedsDependOnSweepSeedAndTrialIdOnly) {
  auto first = Make(2);
  const ControlMessage a = Request(*first, 1);
  const ControlMessage b = Request(*first, 0);
  EXPECT_NE(a.trial.seed, b.trial.seed);
  EXPECT_EQ(a.trial.seed, DeriveSeed(1234, kTrainingPurpose, 0));
  EXPECT_EQ(b.trial.seed, DeriveSeed(1234, kTrainingPurpose, 1));
}

TEST_F(CoordinatorTest, ProgressLineShowsParamsObjectiveBestAndCounts) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  now_ += 30.0;
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.8765).ok());
  const std::string line = progress_.str();
  EXPECT_NE(line.find("trial 0 | lr=0.1 | val_accuracy 0.8765 (completed, 2 ep"), std::string::npos)
      << line;
  EXPECT_NE(line.find("best 0.8765 (trial 0)"), std::string::npos) << line;
  EXPECT_NE(line.find("1/5 done | elapsed 30s, ~2m00s left"), std::string::npos) << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
}

}  // namespace
}  // namespace hpo
