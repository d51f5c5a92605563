#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "common/seeding.hpp"
#include "coord/coordinator.hpp"
#include "coordinator_test_support.hpp"
#include "hpo/task_catalog.hpp"
#include "sched/scheduler.hpp"
#include "search/searcher.hpp"
#include "tasks/classifier_description.hpp"

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
  void ObserveEpoch(int64_t trial_id, const Assignment&, int64_t epoch, double objective) override {
    observed_epochs.push_back({trial_id, epoch, objective});
  }
  std::optional<int64_t> SpaceSize() const override { return space_; }
  std::string SaveState() const override { return std::string("\x01\xab", 2); }
  Status RestoreState(const std::string&) override { return Status::Ok(); }

  std::vector<int64_t> suggested;
  std::vector<std::pair<int64_t, double>> observed;
  struct EpochObservation {
    int64_t trial_id;
    int64_t epoch;
    double objective;
  };
  std::vector<EpochObservation> observed_epochs;

 private:
  std::optional<int64_t> space_;
};

// Trials 0 and 1 are cheap suggestions; later ones are computed off the coordinator's thread and
// wait until `release` is set. Each suggests {"lr": number of observations when it started}, so a
// suggestion shows which snapshot it was computed from.
class SlowSearcher final : public Searcher {
 public:
  std::optional<Assignment> Suggest(int64_t trial_id) override {
    const SuggestionComputation computation = StartSuggestion(trial_id);
    return FinishSuggestion(trial_id, computation ? computation() : std::nullopt);
  }
  SuggestionComputation StartSuggestion(int64_t trial_id) override {
    if (trial_id < 2) return {};
    const double seen = static_cast<double>(observed);
    return [gate = gate_, seen, this]() -> std::optional<Assignment> {
      ++computing;
      gate.wait();
      return Assignment{{"lr", seen}};
    };
  }
  std::optional<Assignment> FinishSuggestion(int64_t, std::optional<Assignment> computed) override {
    return computed ? computed : Assignment{{"lr", -1.0}};
  }
  void Observe(int64_t, const Assignment&, TrialStatus, double) override { ++observed; }
  std::optional<int64_t> SpaceSize() const override { return std::nullopt; }
  std::string SaveState() const override { return "slow"; }
  Status RestoreState(const std::string&) override { return Status::Ok(); }

  int observed = 0;
  std::atomic<int> computing{0};
  // Set by the test to let every computation finish.
  std::promise<void> release;

 private:
  std::shared_future<void> gate_ = release.get_future().share();
};

// Records staged rows and, per publish, how many rows it covered; a publish can take
// `publish_seconds` on the fixture's clock and can be made to fail.
class RecordingStudy final : public StudyWriter {
 public:
  Status Stage(const TrialResult& result) override {
    if (fail_next) return Status::Failure("disk full");
    rows.push_back(result);
    return Status::Ok();
  }
  Status StageTable(const MetricTable&) override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  Status Publish(const std::map<std::string, StudyAttribute>& set) override {
    if (fail_publish) return Status::Failure("file system gone");
    for (const auto& [name, value] : set) attributes[name] = value;
    publishes.push_back(rows.size());
    *clock += publish_seconds;
    return Status::Ok();
  }

  std::vector<TrialResult> rows;  // staged, in order
  std::vector<size_t> publishes;  // per publish: the rows staged by then
  std::map<std::string, StudyAttribute> attributes;
  bool fail_next = false;
  bool fail_publish = false;
  double* clock = nullptr;
  double publish_seconds = 0.0;
};

// Stops trial `victim` at epoch `at_epoch`; records what it was told.
class ScriptedScheduler final : public Scheduler {
 public:
  SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective) override {
    seen.push_back({trial_id, epoch, objective});
    if (trial_id == victim && epoch == at_epoch) return {false, "stopped at rung 0 (epoch 1)"};
    return {};
  }
  void OnTrialEnd(int64_t trial_id, TrialStatus status) override {
    ended.emplace_back(trial_id, status);
  }
  std::string SaveState() const override { return "sched"; }
  Status RestoreState(const std::string&) override { return Status::Ok(); }

  int64_t victim = -1;
  int64_t at_epoch = 1;
  std::vector<ScriptedSearcher::EpochObservation> seen;
  std::vector<std::pair<int64_t, TrialStatus>> ended;
};

class RecordingArtifacts final : public TrialArtifacts {
 public:
  void Discard(int64_t trial_id) override { discarded.push_back(trial_id); }
  void DiscardCheckpoint(int64_t trial_id) override { checkpoints_discarded.push_back(trial_id); }
  std::vector<int64_t> discarded;
  std::vector<int64_t> checkpoints_discarded;
};

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.execution.task = "synthetic";
    config_.metric_names = ClassifierMetricNames();
    config_.execution.seed = 1234;
    config_.sweep.metric.name = "val_accuracy";
    config_.sweep.metric.goal = Goal::kMaximize;
    config_.sweep.run_cap = 5;
    study_.clock = &now_;
  }

  std::unique_ptr<Coordinator> Make(int groups, std::optional<int64_t> space = std::nullopt,
                                    bool with_scheduler = false) {
    auto searcher = std::make_unique<ScriptedSearcher>(space);
    searcher_ = searcher.get();
    std::unique_ptr<Scheduler> scheduler;
    if (with_scheduler) {
      auto scripted = std::make_unique<ScriptedScheduler>();
      scheduler_ = scripted.get();
      scheduler = std::move(scripted);
    }
    return MakeWith(groups, std::move(searcher), std::move(scheduler));
  }

  // A coordinator of config_ over `groups` with ASHA's promotion variant over 9 epochs (rungs at
  // epochs 1 and 3) and scripted trials.
  std::unique_ptr<Coordinator> MakeWithPromotion(int groups) {
    config_.execution.epochs = 9;
    config_.sweep.early_terminate.enabled = true;
    config_.sweep.early_terminate.min_iter = 1;
    config_.sweep.early_terminate.eta = 3;
    config_.sweep.early_terminate.promotion = true;
    std::unique_ptr<Scheduler> scheduler;
    EXPECT_TRUE(MakeScheduler(config_, &scheduler).ok());
    return MakeWith(groups, std::make_unique<ScriptedSearcher>(std::nullopt), std::move(scheduler));
  }

  // A coordinator of config_ over `groups` with these collaborators and the fixture's study,
  // artifacts, progress stream and clock.
  std::unique_ptr<Coordinator> MakeWith(int groups, std::unique_ptr<Searcher> searcher,
                                        std::unique_ptr<Scheduler> scheduler = nullptr) {
    CoordinatorDeps deps;
    deps.searcher = std::move(searcher);
    deps.scheduler = std::move(scheduler);
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
  ControlMessage Report(Coordinator& coordinator, int group, int64_t trial_id, int64_t epoch,
                        double accuracy) {
    ControlMessage report;
    report.kind = MessageKind::kEpochReport;
    report.trial_id = trial_id;
    report.metrics = {epoch, {1.0, 1.0, accuracy, 0.1}};
    std::optional<ControlMessage> reply;
    Status status = coordinator.Handle(group, report, &reply);
    EXPECT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(ControlMessage{});
  }

  Status SendResult(Coordinator& coordinator, int group, int64_t trial_id, TrialStatus status,
                    std::vector<double> accuracies, std::string message = "") {
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial_id;
    done.result.status = status;
    for (size_t i = 0; i < accuracies.size(); ++i) {
      done.result.curve.push_back({static_cast<int64_t>(i + 1), {1.0, 1.0, accuracies[i], 0.1}});
    }
    done.result.message = std::move(message);
    std::optional<ControlMessage> reply;
    return coordinator.Handle(group, done, &reply);
  }

  // A completed one-epoch trial whose val_loss (the second metric) is `loss`.
  Status FinishWithValLoss(Coordinator& coordinator, int64_t trial_id, double loss) {
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial_id;
    done.result.status = TrialStatus::kCompleted;
    done.result.curve = {{1, {1.0, loss, 0.5, 0.1}}};
    std::optional<ControlMessage> reply;
    return coordinator.Handle(0, done, &reply);
  }

  ScriptedSearcher* searcher_ = nullptr;
  ScriptedScheduler* scheduler_ = nullptr;
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
  // Trial 1 was best until trial 0 beat it; trial 2 never was. Their weights go once the study
  // that names trial 0 the best is published.
  EXPECT_TRUE(artifacts_.discarded.empty());
  ASSERT_TRUE(coordinator->Publish().ok());
  EXPECT_EQ(artifacts_.discarded, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(searcher_->observed.size(), 3u);
  EXPECT_EQ(coordinator->trials_finished(), 3);
}

TEST_F(CoordinatorTest, MinimizeGoalPrefersLowerObjective) {
  config_.sweep.metric.name = "val_loss";
  config_.sweep.metric.goal = Goal::kMinimize;
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ASSERT_TRUE(FinishWithValLoss(*coordinator, 0, 0.4).ok());
  Request(*coordinator, 0);
  ASSERT_TRUE(FinishWithValLoss(*coordinator, 1, 0.3).ok());
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

TEST_F(CoordinatorTest, NonFiniteFinalObjectivesAreFailuresAndNeverBest) {
  config_.sweep.metric.name = "val_loss";
  config_.sweep.metric.goal = Goal::kMinimize;
  auto coordinator = Make(1);
  const double infinity = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double loss : {-infinity, nan, 0.3, infinity}) {
    Request(*coordinator, 0);
    ASSERT_TRUE(
        FinishWithValLoss(*coordinator, static_cast<int64_t>(study_.rows.size()), loss).ok());
  }
  ASSERT_EQ(study_.rows.size(), 4u);
  EXPECT_EQ(study_.rows[0].status, TrialStatus::kFailed);
  EXPECT_EQ(study_.rows[0].message, "val_loss is -inf at its last report (epoch 1)");
  EXPECT_TRUE(std::isnan(study_.rows[0].objective));
  EXPECT_EQ(study_.rows[1].status, TrialStatus::kFailed);
  EXPECT_EQ(study_.rows[1].message, "val_loss is nan at its last report (epoch 1)");
  EXPECT_EQ(study_.rows[2].status, TrialStatus::kCompleted);
  EXPECT_EQ(study_.rows[3].status, TrialStatus::kFailed);
  ASSERT_TRUE(coordinator->best_trial().has_value());
  EXPECT_EQ(coordinator->best_trial()->trial_id, 2);
  EXPECT_EQ(coordinator->last_failure(), "trial 3: val_loss is inf at its last report (epoch 1)");
}

TEST_F(CoordinatorTest, ACompletedTrialThatReportedNothingFailed) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ASSERT_TRUE(SendResult(*coordinator, 0, 0, TrialStatus::kCompleted, {}).ok());
  EXPECT_EQ(study_.rows[0].status, TrialStatus::kFailed);
  EXPECT_EQ(study_.rows[0].message, "reported no val_accuracy");
  EXPECT_FALSE(coordinator->best_trial().has_value());
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

TEST_F(CoordinatorTest, AfterAResumeTheTimeLeftIsAtTheRateOfThisRun) {
  auto coordinator = Make(1);
  for (int64_t trial_id = 0; trial_id < 2; ++trial_id) {
    Request(*coordinator, 0);
    now_ += 10.0;
    ASSERT_TRUE(Finish(*coordinator, 0, trial_id, 0.5).ok());
  }
  ASSERT_TRUE(coordinator->Publish().ok());
  StudyContents contents;
  contents.trials = study_.rows;
  contents.extra_attributes = study_.attributes;
  coordinator = Make(1);  // the resumed run's clock starts now
  ASSERT_TRUE(coordinator->Restore(contents).ok());
  progress_.str("");
  Request(*coordinator, 0);
  now_ += 30.0;
  ASSERT_TRUE(Finish(*coordinator, 0, 2, 0.5).ok());
  // One trial in this run's 30 s, two to go; the two trials before the resume took none of it.
  const std::string line = progress_.str();
  EXPECT_NE(line.find("3/5 done | elapsed 30s, ~1m00s left"), std::string::npos) << line;
}

TEST_F(CoordinatorTest, ProgressLineLeavesOutTheSweepsConstantParameters) {
  ParameterSpec data;
  data.name = "train_file";  // `value:`: the same in every trial
  data.type = ParamType::kString;
  data.values = {std::string("data/train.tsv")};
  ParameterSpec lr;
  lr.name = "lr";
  lr.distribution = Distribution::kUniform;
  config_.sweep.parameters = {lr, data};
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ControlMessage done;
  done.kind = MessageKind::kTrialResult;
  done.result.trial_id = 0;
  done.result.status = TrialStatus::kCompleted;
  done.result.params = {{"lr", 0.1}, {"train_file", std::string("data/train.tsv")}};
  done.result.curve = {{1, {1.0, 1.0, 0.5, 0.1}}};
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator->Handle(0, done, &reply).ok());
  const std::string line = progress_.str();
  EXPECT_NE(line.find("trial 0 | lr=0.1 | val_accuracy 0.5000 (completed"), std::string::npos)
      << line;
  EXPECT_EQ(line.find("train_file"), std::string::npos) << line;
}

TEST_F(CoordinatorTest, AFailureWithAStderrTailIsOneProgressLine) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  const std::string message =
      "rank 0: exit status 1; its stderr ends:\nTraceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\nRuntimeError: boom\n";
  ASSERT_TRUE(SendResult(*coordinator, 0, 0, TrialStatus::kFailed, {0.5}, message).ok());
  const std::string line = progress_.str();
  EXPECT_NE(line.find("[rank 0: exit status 1; its stderr ends: ... RuntimeError: boom]"),
            std::string::npos)
      << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_EQ(study_.rows[0].message, message);  // the study keeps it whole
}

TEST_F(CoordinatorTest, SchedulerStopsATrialAndItsReasonIsRecorded) {
  auto coordinator = Make(2, std::nullopt, /*with_scheduler=*/true);
  scheduler_->victim = 1;
  Request(*coordinator, 0);
  Request(*coordinator, 1);
  EXPECT_TRUE(Report(*coordinator, 0, 0, 1, 0.6).keep_going);
  const ControlMessage stop = Report(*coordinator, 1, 1, 1, 0.3);
  EXPECT_FALSE(stop.keep_going);
  EXPECT_EQ(stop.trial_id, 1);
  // The trainer reports a generic message; the scheduler's reason replaces it.
  ASSERT_TRUE(
      SendResult(*coordinator, 1, 1, TrialStatus::kStopped, {0.3}, "stopped by scheduler").ok());
  ASSERT_EQ(study_.rows.size(), 1u);
  EXPECT_EQ(study_.rows[0].status, TrialStatus::kStopped);
  EXPECT_EQ(study_.rows[0].message, "stopped at rung 0 (epoch 1)");
  EXPECT_EQ(study_.rows[0].epochs, 1);
  EXPECT_DOUBLE_EQ(study_.rows[0].objective, 0.3);
  ASSERT_EQ(scheduler_->seen.size(), 2u);
  EXPECT_DOUBLE_EQ(scheduler_->seen[1].objective, 0.3);  // the sweep metric, val_accuracy
  ASSERT_EQ(scheduler_->ended.size(), 1u);
  EXPECT_EQ(scheduler_->ended[0].second, TrialStatus::kStopped);
  // The searcher saw every epoch, and the group got its next trial at once.
  EXPECT_EQ(searcher_->observed_epochs.size(), 2u);
  EXPECT_EQ(Request(*coordinator, 1).trial.trial_id, 2);
}

TEST_F(CoordinatorTest, SearchStateIsPublishedWithTheResults) {
  auto coordinator = Make(1, std::nullopt, /*with_scheduler=*/true);
  Request(*coordinator, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  EXPECT_TRUE(study_.attributes.empty());
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1}));
  // Fingerprints only (bounded): the states are rebuilt from the study on resume.
  EXPECT_EQ(std::get<std::string>(study_.attributes.at("searcher_fingerprint")), "01ab");
  EXPECT_EQ(std::get<std::string>(study_.attributes.at("scheduler_fingerprint")), "7363686564");
  EXPECT_EQ(study_.attributes.count("searcher_state"), 0u);
}

TEST_F(CoordinatorTest, ReachingTheTargetStopsOtherTrialsAndEndsDispatch) {
  config_.sweep.metric.target = 0.9;
  auto coordinator = Make(2);
  Request(*coordinator, 0);
  Request(*coordinator, 1);
  EXPECT_TRUE(Report(*coordinator, 0, 0, 1, 0.95).keep_going);  // reaches it: goes on
  EXPECT_FALSE(Report(*coordinator, 1, 1, 1, 0.5).keep_going);  // stopped for the target
  ASSERT_TRUE(SendResult(*coordinator, 1, 1, TrialStatus::kStopped, {0.5}).ok());
  EXPECT_NE(study_.rows[0].message.find("target was reached by trial 0"), std::string::npos);
  EXPECT_EQ(Request(*coordinator, 1).kind, MessageKind::kNoMoreTrials);
  ASSERT_TRUE(SendResult(*coordinator, 0, 0, TrialStatus::kCompleted, {0.95, 0.96}).ok());
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator->Finished());
  EXPECT_NE(coordinator->end_reason().find("trial 0 reached the target val_accuracy 0.9"),
            std::string::npos)
      << coordinator->end_reason();
  EXPECT_FALSE(coordinator->too_many_failures());
}

TEST_F(CoordinatorTest, MinimizeTargetIsReachedFromAbove) {
  config_.sweep.metric.name = "val_loss";
  config_.sweep.metric.goal = Goal::kMinimize;
  config_.sweep.metric.target = 0.2;
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ASSERT_TRUE(FinishWithValLoss(*coordinator, 0, 0.3).ok());
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kTrial);  // 0.3 is not <= 0.2
  ASSERT_TRUE(FinishWithValLoss(*coordinator, 1, 0.2).ok());
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kNoMoreTrials);
}

TEST_F(CoordinatorTest, TimeBudgetEndsDispatchButRunningTrialsFinish) {
  config_.budget.time_budget_s = 60.0;
  auto coordinator = Make(2);
  Request(*coordinator, 0);
  now_ += 61.0;
  EXPECT_EQ(Request(*coordinator, 1).kind, MessageKind::kNoMoreTrials);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  EXPECT_EQ(study_.rows.size(), 1u);
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator->Finished());
  EXPECT_NE(coordinator->end_reason().find("time budget of 1m00s"), std::string::npos);
  EXPECT_NE(progress_.str().find("sweep ending early"), std::string::npos);
}

TEST_F(CoordinatorTest, MoreFailuresThanAllowedEndTheSweepAsAFailure) {
  config_.budget.max_failed_trials = 1;
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ASSERT_TRUE(SendResult(*coordinator, 0, 0, TrialStatus::kFailed, {}, "non-finite loss").ok());
  EXPECT_FALSE(coordinator->too_many_failures());  // one failure is allowed
  Request(*coordinator, 0);
  ASSERT_TRUE(SendResult(*coordinator, 0, 1, TrialStatus::kFailed, {}, "non-finite loss").ok());
  EXPECT_TRUE(coordinator->too_many_failures());
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kNoMoreTrials);
  EXPECT_NE(coordinator->end_reason().find("2 trials failed, more than max_failed_trials (1)"),
            std::string::npos);
  EXPECT_EQ(study_.rows.size(), 2u);  // both failures are in the study
}

// A real random searcher and ASHA over a small space, for the resume tests.
SweepConfig ResumableConfig() {
  const std::string text = R"(task: synthetic
epochs: 3
seed: 77
sweep:
  method: random
  run_cap: 7
  metric: {name: val_accuracy, goal: maximize}
  early_terminate: {type: hyperband, min_iter: 1, eta: 2}
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    width: {values: [8, 16, 32]}
)";
  SweepConfig config;
  const Status status = ParseConfig(text, "resume.yaml", &config);
  EXPECT_TRUE(status.ok()) << status.message();
  return config;
}

// Drives a coordinator over two groups with a fixed script and records every dispatch. After
// every `publish_every`-th result the coordinator is idle (and publishes what is staged).
struct ScriptedSweep {
  SweepConfig config = ResumableConfig();
  RecordingStudy study;
  RecordingArtifacts artifacts;
  std::unique_ptr<Coordinator> coordinator;
  std::vector<TrialSpec> dispatched;
  size_t publish_every = 1;
  size_t results = 0;
  double clock = 0.0;

  ScriptedSweep() {
    study.clock = &clock;
    coordinator = MakeCoordinator();
  }

  std::unique_ptr<Coordinator> MakeCoordinator() {
    CoordinatorDeps deps = test_support::ConfiguredDeps(config, &study);
    deps.artifacts = &artifacts;
    return std::make_unique<Coordinator>(config, 2, std::move(deps));
  }

  // The study as a reader finds it: its rows and attributes.
  StudyContents Contents() const {
    StudyContents contents;
    contents.trials = study.rows;
    contents.extra_attributes = study.attributes;
    return contents;
  }

  // What a crash leaves: the study as last published (what was staged after it is lost). A new
  // coordinator takes it over.
  void CrashAndResume() {
    study.rows.resize(study.publishes.empty() ? 0 : study.publishes.back());
    coordinator = MakeCoordinator();
    const Status status = coordinator->Restore(Contents());
    ASSERT_TRUE(status.ok()) << status.message();
  }

  std::optional<TrialSpec> Request(int group) {
    ControlMessage request;
    std::optional<ControlMessage> reply;
    EXPECT_TRUE(coordinator->Handle(group, request, &reply).ok());
    if (!reply || reply->kind != MessageKind::kTrial) return std::nullopt;
    dispatched.push_back(reply->trial);
    return reply->trial;
  }

  // Reports epochs 1..3 (accuracy from the learning rate) and sends the result.
  void Run(int group, const TrialSpec& trial) {
    const double lr = std::get<double>(
        FindParam(trial.params, "lr") ? *FindParam(trial.params, "lr") : ParamValue(0.0));
    std::vector<EpochMetrics> curve;
    TrialStatus status = TrialStatus::kCompleted;
    for (int64_t epoch = 1; epoch <= 3; ++epoch) {
      ControlMessage report;
      report.kind = MessageKind::kEpochReport;
      report.trial_id = trial.trial_id;
      report.metrics = {epoch, {1.0, 1.0, 1.0 - std::fabs(std::log10(lr) + 2.0) / epoch, 0.1}};
      curve.push_back(report.metrics);
      std::optional<ControlMessage> reply;
      EXPECT_TRUE(coordinator->Handle(group, report, &reply).ok());
      if (!reply->keep_going) {
        if (epoch < 3) status = TrialStatus::kStopped;
        break;
      }
    }
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial.trial_id;
    done.result.status = status;
    done.result.params = trial.params;
    done.result.curve = curve;
    std::optional<ControlMessage> reply;
    EXPECT_TRUE(coordinator->Handle(group, done, &reply).ok());
    if (++results % publish_every == 0) {
      EXPECT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
    }
  }
};

TEST(CoordinatorResumeTest, ACrashAtAnyDispatchResumesLikeTheUninterruptedSweep) {
  // The uninterrupted sweep: groups alternate, each runs its trial to the end.
  ScriptedSweep whole;
  while (true) {
    std::optional<TrialSpec> trial = whole.Request(0);
    if (!trial) break;
    whole.Run(0, *trial);
  }
  ASSERT_EQ(whole.study.rows.size(), 7u);

  // Publishing after every result, and after every third: then the crash also loses up to two
  // staged results, whose trials run again from their checkpoints.
  for (size_t publish_every : {1, 3}) {
    for (size_t crash_after = 1; crash_after < 7; ++crash_after) {
      SCOPED_TRACE("crash after " + std::to_string(crash_after) + " results, publishing every " +
                   std::to_string(publish_every));
      ScriptedSweep sweep;
      sweep.publish_every = publish_every;
      // Group 1 gets a trial that is still running at the crash; group 0 finishes trials.
      std::optional<TrialSpec> running = sweep.Request(1);
      ASSERT_TRUE(running);
      for (size_t done = 0; done < crash_after; ++done) sweep.Run(0, *sweep.Request(0));
      sweep.CrashAndResume();
      // The running trial comes back first, identical; the sweep then goes on to run_cap.
      std::optional<TrialSpec> again = sweep.Request(0);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->trial_id, running->trial_id);
      EXPECT_EQ(again->seed, running->seed);
      EXPECT_EQ(FormatParamValue(again->params[0].value),
                FormatParamValue(running->params[0].value));
      sweep.Run(0, *again);
      while (std::optional<TrialSpec> trial = sweep.Request(0)) sweep.Run(0, *trial);
      ASSERT_EQ(sweep.study.rows.size(), 7u);
      // Same trials, same hyperparameters, same seeds as the uninterrupted sweep.
      std::map<int64_t, const TrialSpec*> by_id;
      for (const TrialSpec& trial : whole.dispatched) by_id[trial.trial_id] = &trial;
      for (const TrialSpec& trial : sweep.dispatched) {
        ASSERT_EQ(by_id.count(trial.trial_id), 1u);
        EXPECT_EQ(trial.seed, by_id[trial.trial_id]->seed);
        for (size_t p = 0; p < trial.params.size(); ++p) {
          EXPECT_EQ(FormatParamValueExact(trial.params[p].value),
                    FormatParamValueExact(by_id[trial.trial_id]->params[p].value));
        }
      }
    }
  }
}

TEST(CoordinatorResumeTest, ADamagedStateIsBadInput) {
  ScriptedSweep sweep;
  sweep.Run(0, *sweep.Request(0));
  StudyContents contents = sweep.Contents();
  contents.extra_attributes["searcher_fingerprint"] = std::string("zz");
  std::unique_ptr<Coordinator> coordinator = sweep.MakeCoordinator();
  const Status status = coordinator->Restore(contents);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("searcher_fingerprint is damaged"), std::string::npos)
      << status.message();
  contents.extra_attributes.erase("searcher_fingerprint");
  EXPECT_NE(sweep.MakeCoordinator()->Restore(contents).message().find(
                "no attribute searcher_fingerprint"),
            std::string::npos);
  // Another search's fingerprint (valid hex) is refused, naming both.
  contents.extra_attributes["searcher_fingerprint"] = std::string("6f74686572");  // "other"
  const Status other = sweep.MakeCoordinator()->Restore(contents);
  EXPECT_EQ(other.code(), Status::Code::kBadInput);
  EXPECT_NE(other.message().find("written by another search"), std::string::npos)
      << other.message();
}

TEST(CoordinatorResumeTest, AStudyOfOtherMetricsIsBadInput) {
  // A config without the study's metrics (a study's stored config, read without its task) found
  // no objective, and every epoch report replayed as NaN without a word.
  ScriptedSweep sweep;
  sweep.Run(0, *sweep.Request(0));
  StudyContents contents = sweep.Contents();
  contents.layout.metric_names = sweep.config.metric_names;
  EXPECT_TRUE(sweep.MakeCoordinator()->Restore(contents).ok());
  sweep.config.metric_names.clear();
  const Status status = sweep.MakeCoordinator()->Restore(contents);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  std::string metrics;
  for (const std::string& name : contents.layout.metric_names) {
    metrics += (metrics.empty() ? "" : ", ") + name;
  }
  EXPECT_EQ(status.message(), "the study's metrics (" + metrics + ") are not this sweep's ()");
}

// TPE (past its start-up trials) with ASHA and the median rule: the state a resume rebuilds.
constexpr char kReplayedConfig[] = R"(task: synthetic
epochs: 3
seed: 5
search: {model: tpe, startup_trials: 3}
median_stopping: {min_trials: 2, start_step: 1}
sweep:
  method: bayes
  run_cap: 40
  metric: {name: val_accuracy, goal: maximize}
  early_terminate: {type: hyperband, min_iter: 1, eta: 2}
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    width: {values: [8, 16, 32]}
)";

// Drives a coordinator over kReplayedConfig with two groups: group 1 runs one long trial (two
// epochs reported, still running at the end) while group 0 runs 12 trials whose accuracy peaks at
// lr 0.01.
class ReplayedSweep {
 public:
  explicit ReplayedSweep(Coordinator& coordinator) : coordinator_(coordinator) {}

  void Run() {
    ControlMessage request;
    request.kind = MessageKind::kRequestTrial;
    const TrialSpec long_trial = Handle(1, request)->trial;
    (void)Report(1, long_trial.trial_id, 1, 0.5);
    for (int i = 0; i < 12; ++i) {
      RunToTheEnd(Handle(0, request)->trial);
      if (i == 5) (void)Report(1, long_trial.trial_id, 2, 0.6);  // whatever the verdict
    }
  }

 private:
  std::optional<ControlMessage> Handle(int group, const ControlMessage& message) {
    std::optional<ControlMessage> reply;
    EXPECT_TRUE(coordinator_.Handle(group, message, &reply).ok());
    // A TPE suggestion is computed on the coordinator's worker thread: its answer comes later.
    while (message.kind == MessageKind::kRequestTrial && !reply) {
      for (auto& [to, later] : coordinator_.TakeReplies()) {
        if (to == group) reply = std::move(later);
      }
      std::this_thread::yield();
    }
    return reply;
  }

  bool Report(int group, int64_t trial, int64_t epoch, double accuracy) {
    ControlMessage message;
    message.kind = MessageKind::kEpochReport;
    message.trial_id = trial;
    message.metrics = {epoch, {1.0, 1.0, accuracy, 0.1}};
    return Handle(group, message)->keep_going;
  }

  // Group 0 trains `trial` until the scheduler stops it or its 3 epochs are done.
  void RunToTheEnd(const TrialSpec& trial) {
    const double lr = std::get<double>(*FindParam(trial.params, "lr"));
    ControlMessage done;
    done.kind = MessageKind::kTrialResult;
    done.result.trial_id = trial.trial_id;
    done.result.params = trial.params;
    done.result.status = TrialStatus::kCompleted;
    for (int64_t epoch = 1; epoch <= 3; ++epoch) {
      const double accuracy = 1.0 - std::fabs(std::log10(lr) + 2.0) / static_cast<double>(epoch);
      done.result.curve.push_back({epoch, {1.0, 1.0, accuracy, 0.1}});
      if (!Report(0, trial.trial_id, epoch, accuracy)) {
        done.result.status = epoch < 3 ? TrialStatus::kStopped : TrialStatus::kCompleted;
        break;
      }
    }
    (void)Handle(0, done);
  }

  Coordinator& coordinator_;
};

TEST(CoordinatorResumeTest, ReplayingTheStudyRebuildsTheSearcherAndSchedulerState) {
  // At the publish one trial is still running with two epochs reported. A coordinator restored
  // from the published study (rows and attributes only) must hold the same searcher and scheduler
  // state as the one that wrote it, though neither state is in the study.
  SweepConfig config;
  ASSERT_TRUE(ParseConfig(kReplayedConfig, "replay.yaml", &config).ok());
  RecordingStudy study;
  double clock = 0.0;
  study.clock = &clock;
  const auto make = [&](Searcher** searcher, Scheduler** scheduler) {
    return std::make_unique<Coordinator>(
        config, 2, test_support::ConfiguredDeps(config, &study, searcher, scheduler));
  };
  Searcher* searcher = nullptr;
  Scheduler* scheduler = nullptr;
  std::unique_ptr<Coordinator> coordinator = make(&searcher, &scheduler);
  ReplayedSweep(*coordinator).Run();
  ASSERT_TRUE(coordinator->Publish().ok());
  const std::string searcher_state = searcher->SaveState();
  const std::string scheduler_state = scheduler->SaveState();

  StudyContents contents;
  contents.trials = study.rows;
  contents.extra_attributes = study.attributes;
  coordinator = make(&searcher, &scheduler);
  ASSERT_TRUE(coordinator->Restore(contents).ok());
  EXPECT_EQ(searcher->SaveState(), searcher_state);
  EXPECT_EQ(scheduler->SaveState(), scheduler_state);
  EXPECT_EQ(coordinator->trials_unfinished(), 1u);
}

// Replies TakeReplies gives within `seconds` (waiting on progress, not a fixed time) until
// `count` have arrived.
std::vector<std::pair<int, ControlMessage>> AwaitReplies(Coordinator& coordinator, size_t count,
                                                         double seconds = 60.0) {
  std::vector<std::pair<int, ControlMessage>> replies;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (replies.size() < count && std::chrono::steady_clock::now() < deadline) {
    for (auto& reply : coordinator.TakeReplies()) replies.push_back(std::move(reply));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return replies;
}

TEST_F(CoordinatorTest, OtherGroupsAreAnsweredWhileASuggestionIsComputed) {
  config_.sweep.run_cap = 4;
  auto slow = std::make_unique<SlowSearcher>();
  SlowSearcher* searcher = slow.get();
  const std::unique_ptr<Coordinator> made = MakeWith(2, std::move(slow));
  Coordinator& coordinator = *made;
  EXPECT_EQ(Request(coordinator, 0).trial.trial_id, 0);
  EXPECT_EQ(Request(coordinator, 1).trial.trial_id, 1);
  ASSERT_TRUE(Finish(coordinator, 0, 0, 0.5).ok());

  // Trial 2's suggestion is computed on another thread: group 0 has no answer yet.
  ControlMessage request;
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator.Handle(0, request, &reply).ok());
  EXPECT_FALSE(reply.has_value());
  EXPECT_EQ(coordinator.requests_waiting(), 1u);
  // Meanwhile group 1 is answered at once: its epoch report, its result, and its request waits
  // in line behind group 0's.
  EXPECT_TRUE(Report(coordinator, 1, 1, 1, 0.6).keep_going);
  ASSERT_TRUE(Finish(coordinator, 1, 1, 0.7).ok());
  EXPECT_EQ(study_.rows.size(), 2u);
  ASSERT_TRUE(coordinator.Handle(1, request, &reply).ok());
  EXPECT_FALSE(reply.has_value());
  EXPECT_TRUE(coordinator.TakeReplies().empty());
  EXPECT_EQ(coordinator.requests_waiting(), 2u);
  // A group that asks twice without an answer is a protocol error.
  EXPECT_FALSE(coordinator.Handle(1, request, &reply).ok());

  searcher->release.set_value();
  const auto replies = AwaitReplies(coordinator, 2);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].first, 0);
  EXPECT_EQ(replies[0].second.trial.trial_id, 2);
  // Computed from the snapshot taken at group 0's request: one observation, not two.
  EXPECT_EQ(std::get<double>(*FindParam(replies[0].second.trial.params, "lr")), 1.0);
  EXPECT_EQ(replies[1].first, 1);
  EXPECT_EQ(replies[1].second.trial.trial_id, 3);
  EXPECT_EQ(std::get<double>(*FindParam(replies[1].second.trial.params, "lr")), 2.0);
  EXPECT_EQ(searcher->computing.load(), 2);
  EXPECT_EQ(coordinator.requests_waiting(), 0u);
}

TEST_F(CoordinatorTest, AnInterruptionWhileASuggestionIsComputedAnswersNoMoreTrials) {
  auto slow = std::make_unique<SlowSearcher>();
  SlowSearcher* searcher = slow.get();
  const std::unique_ptr<Coordinator> made = MakeWith(2, std::move(slow));
  Coordinator& coordinator = *made;
  EXPECT_EQ(Request(coordinator, 0).trial.trial_id, 0);
  EXPECT_EQ(Request(coordinator, 1).trial.trial_id, 1);
  ASSERT_TRUE(Finish(coordinator, 0, 0, 0.5).ok());
  ControlMessage request;
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator.Handle(0, request, &reply).ok());
  EXPECT_FALSE(reply.has_value());
  ASSERT_TRUE(Finish(coordinator, 1, 1, 0.7).ok());
  request.interrupt = true;
  ASSERT_TRUE(coordinator.Handle(1, request, &reply).ok());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->kind, MessageKind::kNoMoreTrials);
  EXPECT_FALSE(coordinator.Finished());
  searcher->release.set_value();
  const auto replies = AwaitReplies(coordinator, 1);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].first, 0);
  EXPECT_EQ(replies[0].second.kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator.Finished());
  EXPECT_EQ(coordinator.trials_unfinished(), 0u);
}

// Validation accuracies of an `epochs`-epoch curve: half of `last` until its last epoch.
std::vector<double> RisingTo(int64_t epochs, double last) {
  std::vector<double> values(static_cast<size_t>(epochs), last / 2);
  values.back() = last;
  return values;
}

// `trial_id`'s rows in the study: paused at rung 0 (epoch 1), paused at rung 1 (epochs 2-3),
// completed (epochs 4-9), one start per run.
void ExpectPausedAtBothRungsThenCompleted(const std::vector<TrialResult>& rows, int64_t trial_id) {
  std::vector<const TrialResult*> runs;
  for (const TrialResult& row : rows) {
    if (row.trial_id == trial_id) runs.push_back(&row);
  }
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0]->status, TrialStatus::kPaused);
  EXPECT_EQ(runs[1]->status, TrialStatus::kPaused);
  ASSERT_EQ(runs[1]->curve.size(), 2u);
  EXPECT_EQ(runs[1]->curve.front().epoch, 2);
  EXPECT_EQ(runs[2]->status, TrialStatus::kCompleted);
  EXPECT_EQ(runs[2]->epochs, 9);
  EXPECT_LE(runs[0]->start_time_s, runs[1]->start_time_s);
  EXPECT_LE(runs[1]->start_time_s, runs[2]->start_time_s);
  ASSERT_EQ(runs[2]->curve.size(), 6u);
  EXPECT_EQ(runs[2]->curve.front().epoch, 4);
}

TEST_F(CoordinatorTest, PromotionPausesTrialsAtRungsAndResumesThemInTheTop) {
  config_.sweep.run_cap = 4;
  const std::unique_ptr<Coordinator> made = MakeWithPromotion(2);
  Coordinator& coordinator = *made;
  // A trial reaching a rung outside its top 1/3 so far pauses: told to checkpoint and stop.
  EXPECT_EQ(Request(coordinator, 0).trial.trial_id, 0);
  EXPECT_EQ(Request(coordinator, 1).trial.trial_id, 1);
  ControlMessage decision = Report(coordinator, 0, 0, 1, 0.5);
  EXPECT_FALSE(decision.keep_going);
  EXPECT_TRUE(decision.interrupt);
  ASSERT_TRUE(SendResult(coordinator, 0, 0, TrialStatus::kRunning, {0.5}).ok());
  ASSERT_EQ(study_.rows.size(), 1u);
  EXPECT_EQ(study_.rows[0].status, TrialStatus::kPaused);
  EXPECT_DOUBLE_EQ(study_.rows[0].objective, 0.5);
  EXPECT_TRUE(std::isfinite(study_.rows[0].start_time_s));  // when this run was dispatched
  EXPECT_NE(study_.rows[0].message.find("paused at rung 0 (epoch 1)"), std::string::npos);
  EXPECT_EQ(coordinator.trials_paused(), 1u);
  EXPECT_EQ(coordinator.trials_finished(), 0);
  ASSERT_TRUE(coordinator.Publish().ok());
  EXPECT_TRUE(artifacts_.checkpoints_discarded.empty());  // it resumes from its checkpoint
  EXPECT_FALSE(coordinator.interrupted());

  EXPECT_EQ(Request(coordinator, 0).trial.trial_id, 2);
  EXPECT_TRUE(Report(coordinator, 1, 1, 1, 0.7).interrupt);
  ASSERT_TRUE(SendResult(coordinator, 1, 1, TrialStatus::kRunning, {0.7}).ok());
  EXPECT_EQ(Request(coordinator, 1).trial.trial_id, 3);
  // Three at rung 0: trial 1 (0.7) is the top one; it is promoted before any new trial.
  EXPECT_TRUE(Report(coordinator, 0, 2, 1, 0.6).interrupt);
  ASSERT_TRUE(SendResult(coordinator, 0, 2, TrialStatus::kRunning, {0.6}).ok());
  const TrialSpec promoted = Request(coordinator, 0).trial;
  EXPECT_EQ(promoted.trial_id, 1);
  EXPECT_EQ(promoted.seed, DeriveSeed(config_.execution.seed, kTrainingPurpose, 1));
  // Run cap reached, nobody promotable, trial 1 running: group 1 waits instead of ending.
  EXPECT_TRUE(Report(coordinator, 1, 3, 1, 0.1).interrupt);
  ASSERT_TRUE(SendResult(coordinator, 1, 3, TrialStatus::kRunning, {0.1}).ok());
  ControlMessage request;
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator.Handle(1, request, &reply).ok());
  EXPECT_FALSE(reply.has_value());
  EXPECT_TRUE(coordinator.TakeReplies().empty());
  // Trial 1 pauses again at rung 1 (alone there); then nothing runs, so it is promoted anyway.
  EXPECT_TRUE(Report(coordinator, 0, 1, 2, 0.72).keep_going);
  EXPECT_TRUE(Report(coordinator, 0, 1, 3, 0.75).interrupt);
  ASSERT_TRUE(SendResult(coordinator, 0, 1, TrialStatus::kRunning, RisingTo(3, 0.75)).ok());
  const auto replies = coordinator.TakeReplies();
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].first, 1);
  EXPECT_EQ(replies[0].second.trial.trial_id, 1);
  ASSERT_TRUE(coordinator.Handle(0, request, &reply).ok());
  EXPECT_FALSE(reply.has_value());  // waits while trial 1 runs
  for (int64_t epoch = 4; epoch <= 9; ++epoch) {
    EXPECT_TRUE(Report(coordinator, 1, 1, epoch, 0.8).keep_going);
  }
  ASSERT_TRUE(SendResult(coordinator, 1, 1, TrialStatus::kCompleted, RisingTo(9, 0.8)).ok());
  const auto last = coordinator.TakeReplies();
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].second.kind, MessageKind::kNoMoreTrials);
  EXPECT_EQ(Request(coordinator, 1).kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator.Finished());
  ASSERT_TRUE(coordinator.Publish().ok());

  ExpectPausedAtBothRungsThenCompleted(study_.rows, 1);
  EXPECT_EQ(coordinator.trials_finished(), 1);
  EXPECT_EQ(coordinator.trials_paused(), 3u);
  // Trial 1's last line: 1 of 4 finished and the 3 others paused, so no time is left to run.
  const std::string progress = progress_.str();
  const std::string last_line = progress.substr(progress.rfind("trial 1 |"));
  EXPECT_NE(last_line.find("1/4 done | elapsed"), std::string::npos) << last_line;
  EXPECT_EQ(last_line.find(" left"), std::string::npos) << last_line;
  EXPECT_EQ(artifacts_.checkpoints_discarded, std::vector<int64_t>{1});
  ASSERT_TRUE(coordinator.best_trial().has_value());
  EXPECT_EQ(coordinator.best_trial()->trial_id, 1);
}

TEST_F(CoordinatorTest, StepsReportedPastAPauseLeaveTheTrialPausedForPromotion) {
  // The curve scheduler pauses trial 0 at epoch 1 (start-up: new trials first); its program
  // prints epochs 2-4 before the pause reaches it. Judged on them, the scheduler took the trial
  // for running again, never promoted it, and the sweep ended with it left paused.
  config_.sweep.run_cap = 2;
  config_.execution.epochs = 4;
  config_.sweep.method = SearchMethod::kBayes;
  config_.search.model = BayesModel::kCurves;
  config_.search.startup_trials = 2;
  config_.sweep.early_terminate.enabled = true;
  config_.sweep.early_terminate.min_iter = 1;
  config_.sweep.early_terminate.eta = 2;
  std::unique_ptr<Scheduler> scheduler;
  ASSERT_TRUE(MakeScheduler(config_, &scheduler).ok());
  const std::unique_ptr<Coordinator> made =
      MakeWith(1, std::make_unique<ScriptedSearcher>(std::nullopt), std::move(scheduler));
  Coordinator& coordinator = *made;
  EXPECT_EQ(Request(coordinator, 0).trial.trial_id, 0);
  EXPECT_TRUE(Report(coordinator, 0, 0, 1, 0.5).interrupt);
  for (int64_t epoch = 2; epoch <= 4; ++epoch) {
    const ControlMessage past = Report(coordinator, 0, 0, epoch, 0.5 + 0.1 * epoch);
    EXPECT_FALSE(past.keep_going) << epoch;
    EXPECT_TRUE(past.interrupt) << epoch;
  }
  ASSERT_TRUE(SendResult(coordinator, 0, 0, TrialStatus::kRunning, {0.5, 0.7, 0.8, 0.9}).ok());
  EXPECT_EQ(coordinator.trials_paused(), 1u);
  // Trial 1 runs to its end, or pauses for trial 0; whatever is paused goes on once nothing
  // else can run, until every trial has finished.
  std::set<int64_t> finished;
  for (int round = 0; round < 6 && !coordinator.Finished(); ++round) {
    const ControlMessage reply = Request(coordinator, 0);
    if (reply.kind != MessageKind::kTrial) break;
    const int64_t id = reply.trial.trial_id;
    ASSERT_TRUE(Finish(coordinator, 0, id, 0.6).ok());
    finished.insert(id);
  }
  EXPECT_EQ(finished, (std::set<int64_t>{0, 1}));
  EXPECT_EQ(coordinator.trials_paused(), 0u);
}

TEST_F(CoordinatorTest, APausedRetryKeepsItsSeedAcrossAResume) {
  config_.sweep.run_cap = 1;
  config_.budget.trial_retries = 1;
  std::unique_ptr<Coordinator> coordinator = MakeWithPromotion(1);
  const TrialSpec first = Request(*coordinator, 0).trial;
  ASSERT_TRUE(SendResult(*coordinator, 0, 0, TrialStatus::kFailed, {}, "boom").ok());
  const TrialSpec retry = Request(*coordinator, 0).trial;
  ASSERT_EQ(retry.attempt, 1);
  ASSERT_NE(retry.seed, first.seed);
  EXPECT_TRUE(Report(*coordinator, 0, 0, 1, 0.5).interrupt);  // alone at rung 0: it pauses
  ASSERT_TRUE(SendResult(*coordinator, 0, 0, TrialStatus::kRunning, {0.5}).ok());
  ASSERT_TRUE(coordinator->Publish().ok());

  StudyContents contents;
  contents.trials = study_.rows;
  contents.extra_attributes = study_.attributes;
  coordinator = MakeWithPromotion(1);
  ASSERT_TRUE(coordinator->Restore(contents).ok());
  EXPECT_EQ(coordinator->trials_paused(), 1u);
  // Nothing else can run, so the paused trial goes on, with the retry's seed its checkpoint has.
  const TrialSpec resumed = Request(*coordinator, 0).trial;
  EXPECT_EQ(resumed.trial_id, 0);
  EXPECT_EQ(resumed.seed, retry.seed);
  EXPECT_EQ(resumed.attempt, 1);
}

TEST_F(CoordinatorTest, AnInterruptionEndsDispatchAndRunningTrialsCheckpoint) {
  auto coordinator = Make(2);
  const int64_t first = Request(*coordinator, 0).trial.trial_id;
  ControlMessage request;
  request.interrupt = true;  // group 1's leader got SIGTERM
  std::optional<ControlMessage> reply;
  ASSERT_TRUE(coordinator->Handle(1, request, &reply).ok());
  EXPECT_EQ(reply->kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator->interrupted());
  const ControlMessage decision = Report(*coordinator, 0, first, 1, 0.5);
  EXPECT_FALSE(decision.keep_going);
  EXPECT_TRUE(decision.interrupt);
  // The group checkpoints and reports the trial as still running: it is not a study row.
  ASSERT_TRUE(SendResult(*coordinator, 0, first, TrialStatus::kRunning, {0.5}).ok());
  EXPECT_TRUE(study_.rows.empty());
  EXPECT_EQ(coordinator->trials_unfinished(), 1u);
  EXPECT_EQ(Request(*coordinator, 0).kind, MessageKind::kNoMoreTrials);
  EXPECT_TRUE(coordinator->Finished());
  EXPECT_TRUE(artifacts_.checkpoints_discarded.empty());
}

TEST_F(CoordinatorTest, AFailedTrialRunsAgainWithANewSeedUpToTrialRetries) {
  config_.budget.trial_retries = 1;
  auto coordinator = Make(1);
  const TrialSpec first = Request(*coordinator, 0).trial;
  ASSERT_TRUE(SendResult(*coordinator, 0, first.trial_id, TrialStatus::kFailed, {}, "boom").ok());
  EXPECT_TRUE(study_.rows.empty());
  const TrialSpec retry = Request(*coordinator, 0).trial;
  EXPECT_EQ(retry.trial_id, first.trial_id);
  EXPECT_EQ(retry.attempt, 1);
  EXPECT_NE(retry.seed, first.seed);
  ASSERT_TRUE(SendResult(*coordinator, 0, retry.trial_id, TrialStatus::kFailed, {}, "boom").ok());
  ASSERT_EQ(study_.rows.size(), 1u);
  EXPECT_EQ(study_.rows[0].message, "boom (after 1 retries)");
  EXPECT_EQ(Request(*coordinator, 0).trial.trial_id, first.trial_id + 1);
  // The first attempt's checkpoint went at once; the last one's goes with the published result.
  EXPECT_EQ(artifacts_.checkpoints_discarded, (std::vector<int64_t>{0}));
  ASSERT_TRUE(coordinator->Publish().ok());
  EXPECT_EQ(artifacts_.checkpoints_discarded, (std::vector<int64_t>{0, 0}));
}

TEST_F(CoordinatorTest, AResultIsPublishedWhenIdleAndOnlyThenItsCheckpointDeleted) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  EXPECT_EQ(study_.rows.size(), 1u);  // staged
  EXPECT_TRUE(study_.publishes.empty());
  EXPECT_EQ(coordinator->results_unpublished(), 1u);
  EXPECT_TRUE(artifacts_.checkpoints_discarded.empty());  // a crash now would resume from it
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1}));
  EXPECT_EQ(coordinator->results_unpublished(), 0u);
  EXPECT_EQ(artifacts_.checkpoints_discarded, (std::vector<int64_t>{0}));
  EXPECT_EQ(std::get<std::string>(study_.attributes.at("running_trials")),
            "0000000000000000");  // no trial left unfinished: an empty list
  // Nothing staged: nothing to publish.
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  ASSERT_TRUE(coordinator->Publish().ok());
  EXPECT_EQ(study_.publishes.size(), 1u);
}

TEST_F(CoordinatorTest, TheRunningStateIsPublishedWhenIdleEveryFewSecondsOfLongTrials) {
  auto coordinator = Make(1);
  const double start = now_;
  Request(*coordinator, 0);  // a trial of many minutes starts
  Report(*coordinator, 0, 0, 1, 0.5);
  now_ = start + Coordinator::kRunningStateSeconds - 0.001;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_TRUE(study_.publishes.empty());  // not yet
  now_ = start + Coordinator::kRunningStateSeconds;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/false).ok());
  EXPECT_TRUE(study_.publishes.empty());  // messages are waiting: they come first
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{0}));  // no row: the state alone
  const std::string published = std::get<std::string>(study_.attributes.at("running_trials"));
  EXPECT_NE(published, "0000000000000000");  // trial 0, with its epoch
  // Unchanged since: nothing more to publish, however long the trial runs.
  now_ += 60.0;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes.size(), 1u);
  // A new epoch is published kRunningStateSeconds after it arrived.
  Report(*coordinator, 0, 0, 2, 0.6);
  now_ += Coordinator::kRunningStateSeconds;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes.size(), 2u);
  EXPECT_NE(std::get<std::string>(study_.attributes.at("running_trials")), published);
}

TEST_F(CoordinatorTest, ResultsArrivingFasterThanPublishingArePublishedTogether) {
  study_.publish_seconds = 0.01;  // each publish takes 10 ms: the next is due 0.99 s after it
  auto coordinator = Make(2);
  const double start = now_;
  Request(*coordinator, 0);  // trial 0
  Request(*coordinator, 1);  // trial 1
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());  // the first publish is due at once
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1}));
  EXPECT_DOUBLE_EQ(now_, start + 0.01);
  now_ = start + 0.5;
  Request(*coordinator, 0);  // trial 2
  ASSERT_TRUE(Finish(*coordinator, 1, 1, 0.6).ok());
  ASSERT_TRUE(Finish(*coordinator, 0, 2, 0.7).ok());
  now_ = start + 0.999;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes.size(), 1u);
  EXPECT_EQ(coordinator->results_unpublished(), 2u);
  EXPECT_EQ(artifacts_.checkpoints_discarded, (std::vector<int64_t>{0}));
  now_ = start + 1.001;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1, 3}));  // both results in one publish
  EXPECT_EQ(artifacts_.checkpoints_discarded, (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(CoordinatorTest, ASlowPublishDefersTheNextByTheLongestSpacingAtMost) {
  study_.publish_seconds = 0.4;  // a loaded machine: 99 times that would be 40 s
  auto coordinator = Make(2);
  const double start = now_;
  Request(*coordinator, 0);
  Request(*coordinator, 1);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1}));
  ASSERT_TRUE(Finish(*coordinator, 1, 1, 0.6).ok());
  now_ = start + 0.4 + Coordinator::kLongestPublishSpacingSeconds - 0.001;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes.size(), 1u);  // still spaced
  now_ = start + 0.4 + Coordinator::kLongestPublishSpacingSeconds;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/true).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1, 2}));  // not 40 s later
}

TEST_F(CoordinatorTest, WhileMessagesArriveAResultWaitsAtMostTheLongestDeferral) {
  auto coordinator = Make(1);
  const double start = now_;
  Request(*coordinator, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  now_ = start + Coordinator::kLongestDeferralSeconds - 0.001;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/false).ok());
  EXPECT_TRUE(study_.publishes.empty());
  now_ = start + Coordinator::kLongestDeferralSeconds;
  ASSERT_TRUE(coordinator->PublishIfDue(/*idle=*/false).ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1}));
  // Publish() does not wait for the spacing (the end of the sweep).
  study_.publish_seconds = 10.0;
  Request(*coordinator, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 1, 0.5).ok());
  ASSERT_TRUE(coordinator->Publish().ok());
  EXPECT_EQ(study_.publishes, (std::vector<size_t>{1, 2}));
}

TEST_F(CoordinatorTest, AFailedPublishIsReportedAndKeepsTheCheckpoints) {
  auto coordinator = Make(1);
  Request(*coordinator, 0);
  ASSERT_TRUE(Finish(*coordinator, 0, 0, 0.5).ok());
  study_.fail_publish = true;
  const Status status = coordinator->PublishIfDue(/*idle=*/true);
  EXPECT_NE(status.message().find("file system gone"), std::string::npos) << status.message();
  EXPECT_TRUE(artifacts_.checkpoints_discarded.empty());
  EXPECT_EQ(coordinator->results_unpublished(), 1u);
}

}  // namespace
}  // namespace hpo
