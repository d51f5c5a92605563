// The early-stopping schedulers: Hyperband rungs, ASHA and median-rule decisions against
// hand-computed scripts (both goals, asynchronous arrivals), the two rules combined, and the saved
// state (round trip, another config's state, garbage).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "sched/scheduler.hpp"
#include "sched/stopping_rules.hpp"

namespace hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

HyperbandSpec MinIterSpec(int64_t min_iter, int64_t eta) {
  HyperbandSpec spec;
  spec.enabled = true;
  spec.min_iter = min_iter;
  spec.eta = eta;
  return spec;
}

HyperbandSpec MaxIterSpec(int64_t max_iter, int64_t s, int64_t eta) {
  HyperbandSpec spec;
  spec.enabled = true;
  spec.max_iter = max_iter;
  spec.s = s;
  spec.eta = eta;
  return spec;
}

// A config with neither rule enabled; tests switch on what they need.
SweepConfig BaseConfig(Goal goal, int64_t epochs) {
  SweepConfig config;
  config.path = "test.yaml";
  config.sweep.metric.name = goal == Goal::kMaximize ? "val_accuracy" : "val_loss";
  config.sweep.metric.goal = goal;
  config.execution.epochs = epochs;
  return config;
}

SweepConfig AshaConfig(Goal goal, int64_t epochs, int64_t min_iter, int64_t eta) {
  SweepConfig config = BaseConfig(goal, epochs);
  config.sweep.early_terminate = MinIterSpec(min_iter, eta);
  return config;
}

SweepConfig MedianConfig(Goal goal, int64_t epochs, int64_t min_trials, int64_t start_step) {
  SweepConfig config = BaseConfig(goal, epochs);
  config.median_stopping.enabled = true;
  config.median_stopping.min_trials = min_trials;
  config.median_stopping.start_step = start_step;
  return config;
}

std::unique_ptr<Scheduler> Make(const SweepConfig& config) {
  std::unique_ptr<Scheduler> scheduler;
  const Status status = MakeScheduler(config, &scheduler);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_NE(scheduler, nullptr);
  return scheduler;
}

// One report and the decision expected for it. `reason`, when given, is the exact stop reason.
struct Step {
  int64_t trial;
  int64_t epoch;
  double objective;
  bool keep_going;
  const char* reason = nullptr;
};

// Epochs first..last of `trial`, none of them a rung or a median check, all going on.
void AppendPlainEpochs(std::vector<Step>* steps, int64_t trial, int64_t first, int64_t last,
                       double objective) {
  for (int64_t epoch = first; epoch <= last; ++epoch) {
    steps->push_back({trial, epoch, objective, true});
  }
}

// Runs `steps` in order and checks every decision; `negate` feeds -objective (the same script
// under the opposite goal).
void RunScript(Scheduler* scheduler, const std::vector<Step>& steps, bool negate = false) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    const double objective = negate ? -step.objective : step.objective;
    const SchedulerDecision decision = scheduler->OnEpoch(step.trial, step.epoch, objective);
    EXPECT_EQ(decision.keep_going, step.keep_going)
        << "step " << i << ": trial " << step.trial << " epoch " << step.epoch << " objective "
        << objective << (decision.keep_going ? "" : ": " + decision.reason);
    if (decision.keep_going) {
      EXPECT_EQ(decision.reason, "") << "step " << i;
    } else {
      EXPECT_FALSE(decision.reason.empty()) << "step " << i;
    }
    if (step.reason != nullptr && !negate) {
      EXPECT_EQ(decision.reason, step.reason) << "step " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rungs

TEST(HyperbandRungsTest, MinIterFormMultipliesByEtaBelowEpochs) {
  EXPECT_EQ(HyperbandRungs(MinIterSpec(1, 3), 27), (std::vector<int64_t>{1, 3, 9}));
  EXPECT_EQ(HyperbandRungs(MinIterSpec(1, 3), 28), (std::vector<int64_t>{1, 3, 9, 27}));
  // W&B's test: min_iter 3, eta 3 gives bands 3, 9, 27, ...; below 10 epochs, 3 and 9.
  EXPECT_EQ(HyperbandRungs(MinIterSpec(3, 3), 10), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(HyperbandRungs(MinIterSpec(2, 2), 16), (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(HyperbandRungs(MinIterSpec(4, 3), 5), (std::vector<int64_t>{4}));
}

TEST(HyperbandRungsTest, MaxIterFormDividesByPowersOfEta) {
  // W&B's documentation: max_iter 27, s 2, eta 3 gives brackets 27/9 = 3 and 27/3 = 9.
  EXPECT_EQ(HyperbandRungs(MaxIterSpec(27, 2, 3), 27), (std::vector<int64_t>{3, 9}));
  // W&B's doctest: max_iter 5, eta 2, s 2 gives 5/4 = 1 and 5/2 = 2.
  EXPECT_EQ(HyperbandRungs(MaxIterSpec(5, 2, 2), 5), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(HyperbandRungs(MaxIterSpec(27, 3, 3), 27), (std::vector<int64_t>{1, 3, 9}));
  // 10/2 = 5, 10/4 = 2, 10/8 = 1; 10/16 = 0 and 10/32 = 0 are dropped.
  EXPECT_EQ(HyperbandRungs(MaxIterSpec(10, 5, 2), 10), (std::vector<int64_t>{1, 2, 5}));
  // Rungs at or past the epochs are dropped: 81/3 = 27 is not below 20.
  EXPECT_EQ(HyperbandRungs(MaxIterSpec(81, 2, 3), 20), (std::vector<int64_t>{9}));
}

TEST(HyperbandRungsTest, EmptyWhenNothingLiesBelowEpochs) {
  EXPECT_TRUE(HyperbandRungs(MinIterSpec(5, 3), 5).empty());
  EXPECT_TRUE(HyperbandRungs(MinIterSpec(1, 3), 1).empty());
  EXPECT_TRUE(HyperbandRungs(MaxIterSpec(2, 1, 3), 2).empty());  // 2/3 = 0
  EXPECT_TRUE(HyperbandRungs(MinIterSpec(1, 1), 100).empty());   // eta < 2 defines no rungs
  EXPECT_TRUE(HyperbandRungs(HyperbandSpec(), 100).empty());     // neither form
}

TEST(HyperbandRungsTest, HugeValuesNeitherOverflowNorLoopForever) {
  const std::vector<int64_t> rungs = HyperbandRungs(MinIterSpec(1, 2), kInt64Max);
  ASSERT_EQ(rungs.size(), 63u);  // 2^0 .. 2^62
  EXPECT_EQ(rungs.back(), int64_t{1} << 62);
  EXPECT_EQ(HyperbandRungs(MaxIterSpec(100, kInt64Max, 10), 100), (std::vector<int64_t>{1, 10}));
}

TEST(HyperbandRungsTest, ParsedConfigGivesWandbRungs) {
  const std::string text =
      "task: synthetic\nepochs: 27\nsweep:\n  method: random\n  run_cap: 4\n"
      "  early_terminate: {type: hyperband, max_iter: 27, s: 2}\n  metric: {name: val_loss}\n"
      "  parameters:\n    lr: {values: [0.1]}\n";
  SweepConfig config;
  const Status status = ParseConfig(text, "test.yaml", &config);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(HyperbandRungs(config.sweep.early_terminate, config.execution.epochs),
            (std::vector<int64_t>{3, 9}));
}

// ---------------------------------------------------------------------------------------------
// MakeScheduler

TEST(MakeSchedulerTest, NullWhenNeitherRuleIsEnabled) {
  std::unique_ptr<Scheduler> scheduler;
  ASSERT_TRUE(MakeScheduler(BaseConfig(Goal::kMinimize, 10), &scheduler).ok());
  EXPECT_EQ(scheduler, nullptr);
}

TEST(MakeSchedulerTest, BadInputWhenNoRungLiesBelowEpochs) {
  std::unique_ptr<Scheduler> scheduler;
  const Status status = MakeScheduler(AshaConfig(Goal::kMinimize, 3, 3, 3), &scheduler);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "test.yaml: sweep.early_terminate: no rung below epochs (3), so it could never stop "
            "a trial");
  EXPECT_EQ(scheduler, nullptr);
}

TEST(MakeSchedulerTest, BadInputForSettingsTheParserRejects) {
  std::unique_ptr<Scheduler> scheduler;
  EXPECT_EQ(MakeScheduler(AshaConfig(Goal::kMinimize, 10, 1, 1), &scheduler).code(),
            Status::Code::kBadInput);
  EXPECT_EQ(MakeScheduler(MedianConfig(Goal::kMinimize, 10, 0, 1), &scheduler).code(),
            Status::Code::kBadInput);
  EXPECT_EQ(MakeScheduler(MedianConfig(Goal::kMinimize, 3, 1, 3), &scheduler).code(),
            Status::Code::kBadInput);
  EXPECT_EQ(scheduler, nullptr);
}

// ---------------------------------------------------------------------------------------------
// ASHA

// eta 3, rungs at epochs 1, 3 and 9 (rung indices 0, 1, 2) of 10; goal maximize. A trial goes on
// at a rung iff the number of strictly better values recorded there (NaN worst) is below
// max(1, floor(n / 3)), n counting every trial recorded at the rung, itself included; between
// rungs, the same test with its best value so far against the last rung it passed. Trials arrive
// out of order: trial 0 passes rung 1 and reaches rung 2 before most trials reach rung 0.
std::vector<Step> AshaScript() {
  std::vector<Step> steps = {
      {0, 1, 0.50, true},  // rung 0: n 1, slots 1, better 0
      {1, 1, 0.60, true},  // rung 0: n 2, slots 1, better 0
      {0, 2, 0.62, true},  // not a rung: best 0.62, rung 0 n 2, slots 1, better 0
      {2, 1, 0.40, false,  // rung 0: n 3, slots 1, better 2 (0.50, 0.60)
       "stopped at rung 0 (epoch 1): val_accuracy 0.4 not in the top 1/3 of 3 trials at this "
       "rung"},
      {0, 3, 0.58, true},   // rung 1: n 1
      {1, 2, 0.62, true},   // not a rung
      {3, 1, 0.55, false},  // rung 0: n 4, slots 1, better 1 (0.60)
      {1, 3, 0.61, true},   // rung 1: n 2, slots 1, better 0 (0.58 is worse)
      {4, 1, 0.70, true},   // rung 0: n 5, slots 1, better 0
  };
  AppendPlainEpochs(&steps, 0, 4, 8, 0.7);
  const std::vector<Step> more = {
      {5, 1, 0.65, true},   // rung 0: n 6, slots 2, better 1 (0.70)
      {0, 9, 0.80, true},   // rung 2: n 1
      {4, 2, 0.71, true},   // not a rung
      {4, 3, 0.57, false},  // rung 1: n 3 (0.58, 0.61, 0.57), slots 1, better 2
      {6, 1, 0.60, false},  // rung 0: n 7, slots 2, better 2 (0.70, 0.65); the tie with 0.60
                            // does not count against it
      {7, 1, 0.65, true},   // rung 0: n 8, slots 2, better 1 (0.70); the tie with 0.65 counts
                            // for it
      {5, 2, 0.60, true},   // not a rung
      {5, 3, 0.62, true},   // rung 1: n 4 (0.58, 0.61, 0.57, 0.62), slots 1, better 0
      {8, 1, kNaN, false,   // rung 0: n 9, slots 3, NaN is worse than all 8
       "stopped at rung 0 (epoch 1): val_accuracy nan not in the top 1/3 of 9 trials at this "
       "rung"},
      {9, 1, 0.66, true},   // rung 0: n 10, slots 3, better 1 (0.70)
      {7, 2, 0.60, true},   // not a rung
      {7, 3, 0.60, false},  // rung 1: n 5, slots 1, better 2 (0.61, 0.62)
  };
  steps.insert(steps.end(), more.begin(), more.end());
  AppendPlainEpochs(&steps, 1, 4, 8, 0.6);
  steps.push_back({1, 9, 0.79, false,  // rung 2: n 2 (0.80, 0.79), slots 1, better 1
                   "stopped at rung 2 (epoch 9): val_accuracy 0.79 not in the top 1/3 of 2 "
                   "trials at this rung"});
  steps.push_back({9, 2, 0.63, true});
  steps.push_back({9, 3, 0.63, true});  // rung 1: n 6, slots 2, better 0
  AppendPlainEpochs(&steps, 5, 4, 8, 0.7);
  steps.push_back({5, 9, 0.80, true});   // rung 2: n 3, slots 1, better 0 (ties with 0.80)
  steps.push_back({0, 10, 0.10, true});  // the last epoch is not a rung
  return steps;
}

TEST(AshaTest, ScriptedDecisionsMaximize) {
  std::unique_ptr<Scheduler> scheduler = Make(AshaConfig(Goal::kMaximize, 10, 1, 3));
  RunScript(scheduler.get(), AshaScript());
}

TEST(AshaTest, ScriptedDecisionsMinimizeMirrorMaximize) {
  std::unique_ptr<Scheduler> scheduler = Make(AshaConfig(Goal::kMinimize, 10, 1, 3));
  RunScript(scheduler.get(), AshaScript(), /*negate=*/true);
  const SchedulerDecision decision = scheduler->OnEpoch(10, 1, 0.0);  // rung 0: n 11, better 10
  EXPECT_FALSE(decision.keep_going);
  EXPECT_EQ(decision.reason,
            "stopped at rung 0 (epoch 1): val_loss 0 not in the top 1/3 of 11 trials at this rung");
}

TEST(AshaTest, DecisionsDependOnArrivalOrderNotTrialIds) {
  // eta 2, rungs 1 and 2 of 4 epochs. A late trial (id 9) reaches rung 0 first and goes on; the
  // earlier ids that arrive after it are judged against it.
  std::unique_ptr<Scheduler> scheduler = Make(AshaConfig(Goal::kMinimize, 4, 1, 2));
  RunScript(scheduler.get(), {
                                 {9, 1, 5.0, true},   // rung 0: n 1
                                 {9, 2, 4.0, true},   // rung 1: n 1
                                 {0, 1, 6.0, false},  // rung 0: n 2, slots 1, better 1
                                 {1, 1, 3.0, true},   // rung 0: n 3, slots 1, better 0
                                 {2, 1, 4.0, true},   // rung 0: n 4, slots 2, better 1
                                 {1, 2, 4.5, false},  // rung 1: n 2, slots 1, better 1
                                 {2, 2, 3.5, true},   // rung 1: n 3, slots 1, better 0
                                 {2, 3, 9.0, true},   // not a rung; best so far 3.5 leads rung 1
                                 // Not a rung: trial 9's best so far (4.0) now has 3.5 ahead of
                                 // it at rung 1 (n 3, slots 1), so it stops.
                                 {9, 3, 9.0, false,
                                  "stopped at epoch 3: best val_loss 4 so far no longer in the top "
                                  "1/2 of 3 trials at rung 1 (epoch 2)"},
                             });
}

TEST(AshaTest, BetweenRungsTheBestSoFarIsCheckedAgainstTheLastRung) {
  // eta 3, rungs at epochs 1 and 3 of 9; goal maximize. Trial 0 is the first at rung 0 and goes
  // on with a poor value; once the rung fills up with better trials it stops at its next epoch,
  // unless its best so far (any epoch) has caught up. The last epoch always goes on.
  std::unique_ptr<Scheduler> scheduler = Make(AshaConfig(Goal::kMaximize, 9, 1, 3));
  RunScript(scheduler.get(),
            {
                {0, 1, 0.20, true},  // rung 0: n 1
                {0, 2, 0.25, true},  // not a rung: rung 0 n 1, best 0.25, better 0
                {1, 1, 0.70, true},  // rung 0: n 2, slots 1, better 0
                {0, 3, 0.30, true},  // rung 1: n 1 (trial 1 not there yet)
                {0, 4, 0.35, true},  // rung 1: n 1, better 0
                {1, 2, 0.72, true},  // not a rung: rung 0 n 2, best 0.72, better 0
                {1, 3, 0.75, true},  // rung 1: n 2, slots 1, better 0 (0.30 is worse)
                {0, 5, 0.40, false,  // rung 1: n 2, slots 1, 0.75 is better than 0.40
                 "stopped at epoch 5: best val_accuracy 0.4 so far no longer in the top 1/3 of 2 "
                 "trials at rung 1 (epoch 3)"},
                {2, 1, 0.60, false},  // rung 0: n 3, slots 1, better 1 (0.70)
                {3, 1, 0.65, false},  // rung 0: n 4, slots 1, better 1
                {4, 1, 0.50, false},  // rung 0: n 5, slots 1, better 3
                {5, 1, 0.68, true},   // rung 0: n 6, slots 2, better 1 (0.70)
                {6, 1, 0.69, true},   // rung 0: n 7, slots 2, better 1 (0.70)
                // Not a rung: the best so far counts (0.69; 0.66 would have 0.70 and 0.68 ahead).
                {6, 2, 0.66, true},  // rung 0: n 7, slots 2, better 1 (0.70)
                {7, 1, 0.71, true},  // rung 0: n 8, slots 2, better 0
                // Trial 5's best 0.68 now has 0.70, 0.69 and 0.71 ahead of it (n 8, slots 2).
                {5, 2, 0.67, false,
                 "stopped at epoch 2: best val_accuracy 0.68 so far no longer in the top 1/3 of 8 "
                 "trials at rung 0 (epoch 1)"},
                {7, 2, 0.50, true},  // not a rung: best 0.71 still leads rung 0
                {1, 8, 0.10, true},  // best 0.75 leads rung 1
                {1, 9, 0.10, true},  // the last epoch goes on
            });
}

// eta 3, rungs at epochs 1 and 3 of 9; goal maximize. Trial 1 reaches rung 1 first (0.70); trial
// 0, better all along, dips to 0.60 on rung 1's own epoch. Strict judges the dip and stops it; not
// strict judges its best so far (0.85) and lets it go on, but records the dip at the rung.
std::vector<Step> RungDipScript(bool strict) {
  std::vector<Step> steps = {
      {1, 1, 0.65, true},  // rung 0: n 1
      {1, 2, 0.66, true},  // not a rung
      {1, 3, 0.70, true},  // rung 1: n 1
      {0, 1, 0.80, true},  // rung 0: n 2, better 0
      {0, 2, 0.85, true},  // not a rung: best 0.85 leads rung 0
  };
  if (strict) {
    steps.push_back({0, 3, 0.60, false,  // rung 1: n 2, slots 1, better 1 (0.70 > 0.60)
                     "stopped at rung 1 (epoch 3): val_accuracy 0.6 not in the top 1/3 of 2 "
                     "trials at this rung"});
    return steps;
  }
  const std::vector<Step> lenient = {
      {0, 3, 0.60, true},  // rung 1: n 2, slots 1, best 0.85: better 0
      // Trial 1's best 0.71 is judged against 0.60, the value recorded for trial 0 at rung 1.
      {1, 4, 0.71, true},
      {2, 1, 0.50, false,  // rung 0: n 3, slots 1, better 2
       "stopped at rung 0 (epoch 1): best val_accuracy 0.5 so far not in the top 1/3 of 3 trials "
       "at this rung"},
  };
  steps.insert(steps.end(), lenient.begin(), lenient.end());
  return steps;
}

TEST(AshaTest, StrictJudgesTheRungsEpochNotStrictTheBestSoFar) {
  SweepConfig config = AshaConfig(Goal::kMaximize, 9, 1, 3);
  ASSERT_TRUE(config.sweep.early_terminate.strict);  // the default
  std::unique_ptr<Scheduler> strict = Make(config);
  RunScript(strict.get(), RungDipScript(true));
  config.sweep.early_terminate.strict = false;
  std::unique_ptr<Scheduler> lenient = Make(config);
  RunScript(lenient.get(), RungDipScript(false));
  // A saved state restores only under the same setting.
  EXPECT_EQ(Make(config)->RestoreState(strict->SaveState()).code(), Status::Code::kBadInput);
  EXPECT_TRUE(Make(config)->RestoreState(lenient->SaveState()).ok());
}

TEST(AshaTest, TrialEndForgetsTheBestSoFarButKeepsTheRungRecords) {
  // eta 2, rungs 1 and 2 of 5; goal maximize.
  std::unique_ptr<Scheduler> scheduler = Make(AshaConfig(Goal::kMaximize, 5, 1, 2));
  RunScript(scheduler.get(), {{0, 1, 0.9, true}, {1, 1, 0.5, false}, {0, 2, 0.9, true}});
  scheduler->OnTrialEnd(1, TrialStatus::kStopped);
  scheduler->OnTrialEnd(0, TrialStatus::kCompleted);
  // Trial 0's record at rung 1 (0.9) still judges others; its best is gone from the state.
  RunScript(scheduler.get(), {{2, 1, 0.95, true}, {2, 2, 0.8, false}});
  std::unique_ptr<Scheduler> other = Make(AshaConfig(Goal::kMaximize, 5, 1, 2));
  RunScript(other.get(), {{0, 1, 0.9, true},
                          {1, 1, 0.5, false},
                          {0, 2, 0.9, true},
                          {2, 1, 0.95, true},
                          {2, 2, 0.8, false}});
  EXPECT_LT(scheduler->SaveState().size(), other->SaveState().size());
}

TEST(AshaTest, RepeatedReportReplacesTheTrialsValue) {
  // After a resume a trial may report a rung again: it stays one trial there, with its new value.
  // eta 3, one rung at epoch 2 of 5; goal maximize.
  std::unique_ptr<Scheduler> scheduler = Make(AshaConfig(Goal::kMaximize, 5, 2, 3));
  RunScript(scheduler.get(),
            {
                {0, 2, 0.5, true},  // n 1
                {1, 2, 0.6, true},  // n 2, slots 1, better 0
                {1, 1, 0.55, true},
                {1, 2, 0.6, true},  // still n 2
                {2, 2, 0.4, false,  // n 3, not 4
                 "stopped at rung 0 (epoch 2): val_accuracy 0.4 not in the top 1/3 of 3 trials at "
                 "this rung"},
                {0, 2, 0.7, true},   // trial 0 now 0.7: n 3, better 0
                {1, 2, 0.6, false},  // n 3, slots 1, better 1 (trial 0's new 0.7)
            });
}

// ---------------------------------------------------------------------------------------------
// Median stopping rule

// min_trials 2, start_step 2, 5 epochs, goal minimize. Running averages are over epochs 1..e;
// a trial stops when its best so far is strictly worse than their median.
std::vector<Step> MedianScript() {
  return {
      {0, 1, 1.0, true},
      {0, 2, 0.8, true},  // no other trial at epoch 2
      {0, 3, 0.6, true},
      {0, 4, 0.5, true},
      {0, 5, 0.4, true},
      {1, 1, 1.2, true},  // before start_step
      {1, 2, 0.9, true},  // one other trial at epoch 2, min_trials 2
      {2, 1, 2.0, true},  // worse than both others, but before start_step
      // Others at epoch 2: trial 0 (1.0 + 0.8) / 2 = 0.9, trial 1 (1.2 + 0.9) / 2 = 1.05.
      {2, 2, 1.5, false,
       "stopped at epoch 2 by the median rule: best val_loss 1.5 worse than the median running "
       "average 0.975 of 2 trials"},
      {3, 1, 0.9, true},
      {3, 2, 0.95, true},  // median of 0.9, 1.05, 1.75 is 1.05; best 0.9
      {1, 3, 0.85, true},  // only trial 0 at epoch 3
      // Others at epoch 3: trial 0 0.8, trial 1 (1.2 + 0.9 + 0.85) / 3 = 0.98333; median 0.891667.
      // Its best (0.9, epoch 1) is strictly worse.
      {3, 3, 1.0, false,
       "stopped at epoch 3 by the median rule: best val_loss 0.9 worse than the median running "
       "average 0.891667 of 2 trials"},
      {1, 4, 0.5, true},  // only trial 0 at epoch 4
      {1, 5, 9.0, true},  // the last epoch is never stopped
      // No finite objective: its best is NaN, worse than the median of 0.9, 0.925, 1.05, 1.75.
      {4, 1, kNaN, true},
      {4, 2, kNaN, false,
       "stopped at epoch 2 by the median rule: best val_loss nan worse than the median running "
       "average 0.9875 of 4 trials"},
      // Trial 4 has no running average and is not counted.
      {5, 1, 3.0, true},
      {5, 2, 3.0, false,
       "stopped at epoch 2 by the median rule: best val_loss 3 worse than the median running "
       "average 0.9875 of 4 trials"},
  };
}

// ---------------------------------------------------------------------------------------------
// ASHA, promotion variant

SweepConfig PromotionConfig(Goal goal) {
  SweepConfig config = AshaConfig(goal, 9, 1, 3);  // rungs at epochs 1 and 3
  config.sweep.early_terminate.promotion = true;
  return config;
}

// Checks a pause decision: stopped for now, not for good, with the reason given.
void ExpectPause(const SchedulerDecision& decision, const std::string& reason) {
  EXPECT_FALSE(decision.keep_going);
  EXPECT_TRUE(decision.pause);
  EXPECT_EQ(decision.reason, reason);
}

TEST(AshaPromotionTest, HandComputedRungsPauseAndPromote) {
  std::unique_ptr<Scheduler> scheduler = Make(PromotionConfig(Goal::kMaximize));
  // Rung 0 (epoch 1): the first arrivals pause, whatever their value: floor(n / 3) = 0.
  ExpectPause(scheduler->OnEpoch(0, 1, 0.5),
              "paused at rung 0 (epoch 1): val_accuracy 0.5 not in the top 1/3 of 1 trial at "
              "this rung so far");
  ExpectPause(scheduler->OnEpoch(1, 1, 0.7),
              "paused at rung 0 (epoch 1): val_accuracy 0.7 not in the top 1/3 of 2 trials at "
              "this rung so far");
  EXPECT_EQ(scheduler->Promote(false), std::nullopt);
  // n = 3: one slot, but trial 2 (0.6) is behind trial 1 (0.7): it pauses, and trial 1, paused
  // and now in the top 1, is promoted.
  ExpectPause(scheduler->OnEpoch(2, 1, 0.6),
              "paused at rung 0 (epoch 1): val_accuracy 0.6 not in the top 1/3 of 3 trials at "
              "this rung so far");
  EXPECT_EQ(scheduler->paused_trials(), 3u);
  EXPECT_EQ(scheduler->Promote(false), std::optional<int64_t>(1));
  EXPECT_EQ(scheduler->Promote(false), std::nullopt);
  EXPECT_EQ(scheduler->paused_trials(), 2u);
  // n = 4: trial 3 (0.9) is ahead of everyone: in the top floor(4 / 3) = 1, it goes on at once.
  const SchedulerDecision promptly = scheduler->OnEpoch(3, 1, 0.9);
  EXPECT_TRUE(promptly.keep_going);
  EXPECT_FALSE(promptly.pause);
  // n = 6, two slots, both taken by trials 3 and 1: trials 4 and 5 pause, nobody is promotable.
  ExpectPause(scheduler->OnEpoch(4, 1, 0.1),
              "paused at rung 0 (epoch 1): val_accuracy 0.1 not in the top 1/3 of 5 trials at "
              "this rung so far");
  ExpectPause(scheduler->OnEpoch(5, 1, 0.2),
              "paused at rung 0 (epoch 1): val_accuracy 0.2 not in the top 1/3 of 6 trials at "
              "this rung so far");
  EXPECT_EQ(scheduler->Promote(false), std::nullopt);
  // Between rungs trials go on; at rung 1 (epoch 3) trial 1 arrives first and pauses.
  EXPECT_TRUE(scheduler->OnEpoch(1, 2, 0.0).keep_going);
  ExpectPause(scheduler->OnEpoch(1, 3, 0.75),
              "paused at rung 1 (epoch 3): val_accuracy 0.75 not in the top 1/3 of 1 trial at "
              "this rung so far");
  EXPECT_EQ(scheduler->Promote(false), std::nullopt);
  // Nothing else can run: the best paused trial of the highest rung goes on (trial 1, rung 1).
  EXPECT_EQ(scheduler->Promote(true), std::optional<int64_t>(1));
  // A promoted trial resumed from a checkpoint before the rung reports it again and goes on.
  EXPECT_TRUE(scheduler->OnEpoch(1, 3, 0.75).keep_going);
  EXPECT_TRUE(scheduler->OnEpoch(1, 9, 0.8).keep_going);
  // Once a trial has run every epoch, idleness promotes nobody out of turn.
  EXPECT_EQ(scheduler->Promote(true), std::nullopt);
  EXPECT_EQ(scheduler->paused_trials(), 4u);  // trials 0, 2, 4, 5
  EXPECT_EQ(scheduler->WhyLeftPaused(), "at a rung, never in its top 1/eta");
}

TEST(AshaPromotionTest, MinimizeMirrorsMaximizeAndTiesGoToTheLowerId) {
  std::unique_ptr<Scheduler> scheduler = Make(PromotionConfig(Goal::kMinimize));
  EXPECT_TRUE(scheduler->OnEpoch(7, 1, 0.3).pause);
  EXPECT_TRUE(scheduler->OnEpoch(4, 1, 0.3).pause);
  EXPECT_TRUE(scheduler->OnEpoch(9, 1, 0.8).pause);
  // n = 3, one slot: 7 and 4 tie (ties do not count against either), the lower id goes first.
  EXPECT_EQ(scheduler->Promote(false), std::optional<int64_t>(4));
  EXPECT_EQ(scheduler->Promote(false), std::optional<int64_t>(7));
  EXPECT_EQ(scheduler->Promote(false), std::nullopt);
}

TEST(AshaPromotionTest, SavedStateKeepsPausedAndPromotedTrials) {
  const SweepConfig config = PromotionConfig(Goal::kMaximize);
  std::unique_ptr<Scheduler> original = Make(config);
  original->OnEpoch(0, 1, 0.5);
  original->OnEpoch(1, 1, 0.7);
  original->OnEpoch(2, 1, 0.6);
  ASSERT_EQ(original->Promote(false), std::optional<int64_t>(1));
  std::unique_ptr<Scheduler> restored = Make(config);
  ASSERT_TRUE(restored->RestoreState(original->SaveState()).ok());
  EXPECT_EQ(restored->SaveState(), original->SaveState());
  EXPECT_EQ(restored->paused_trials(), 2u);
  EXPECT_EQ(restored->Promote(false), std::nullopt);  // trial 1 was promoted already
  EXPECT_TRUE(restored->OnEpoch(1, 1, 0.7).keep_going);
  // The stopping variant's state is another config's.
  EXPECT_EQ(Make(AshaConfig(Goal::kMaximize, 9, 1, 3))->RestoreState(original->SaveState()).code(),
            Status::Code::kBadInput);
}

TEST(MedianRuleTest, ScriptedDecisionsMinimize) {
  std::unique_ptr<Scheduler> scheduler = Make(MedianConfig(Goal::kMinimize, 5, 2, 2));
  RunScript(scheduler.get(), MedianScript());
}

TEST(MedianRuleTest, ScriptedDecisionsMaximizeMirrorMinimize) {
  std::unique_ptr<Scheduler> scheduler = Make(MedianConfig(Goal::kMaximize, 5, 2, 2));
  RunScript(scheduler.get(), MedianScript(), /*negate=*/true);
}

TEST(MedianRuleTest, WaitsForStartStepAndMinTrials) {
  // min_trials 3, start_step 3, 6 epochs, goal maximize.
  std::unique_ptr<Scheduler> scheduler = Make(MedianConfig(Goal::kMaximize, 6, 3, 3));
  std::vector<Step> steps;
  AppendPlainEpochs(&steps, 0, 1, 3, 0.8);
  AppendPlainEpochs(&steps, 1, 1, 3, 0.8);
  const std::vector<Step> rest = {
      {2, 1, 0.1, true},  // before start_step
      {2, 2, 0.1, true},  // before start_step
      {2, 3, 0.1, true},  // two others at epoch 3, min_trials 3
      {3, 1, 0.9, true},
      {3, 2, 0.9, true},
      {3, 3, 0.05, true},  // median of 0.8, 0.8, 0.1 is 0.8; its best so far is 0.9
      {4, 1, 0.5, true},
      {4, 2, 0.5, true},
      // Others at epoch 3: 0.8, 0.8, 0.1, (0.9 + 0.9 + 0.05) / 3 = 0.616667; median 0.708333.
      {4, 3, 0.5, false,
       "stopped at epoch 3 by the median rule: best val_accuracy 0.5 worse than the median "
       "running average 0.708333 of 4 trials"},
      {2, 4, 0.1, true},  // no other trial at epoch 4
  };
  steps.insert(steps.end(), rest.begin(), rest.end());
  RunScript(scheduler.get(), steps);
}

TEST(MedianRuleTest, ReportsNumberedByBatchAreComparedAtTheirSteps) {
  // A command sweep without `epochs` whose program numbers its reports by batch: the rule kept
  // a point per step up to the largest (96 GB at step 4e9, std::bad_alloc). At step 2e9 each
  // other trial's running average is its last report's at or before it: trial 0's 1.0 (it
  // trained to 4e9), trial 1's 1.2 (to 3e9); median 1.1.
  std::unique_ptr<Scheduler> scheduler =
      Make(MedianConfig(Goal::kMinimize, kUnboundedEpochs, 2, 2));
  RunScript(scheduler.get(), {
                                 {0, 1000000000, 1.0, true},
                                 {0, 4000000000, 0.8, true},  // no other trial that far
                                 {1, 1000000000, 1.2, true},  // one other trial, min_trials 2
                                 {1, 3000000000, kNaN, true},
                                 {2, 2000000000, 1.5, false,
                                  "stopped at epoch 2000000000 by the median rule: best val_loss "
                                  "1.5 worse than the median running average 1.1 of 2 trials"},
                             });
}

TEST(MedianRuleTest, EqualToTheMedianGoesOn) {
  std::unique_ptr<Scheduler> scheduler = Make(MedianConfig(Goal::kMinimize, 3, 1, 1));
  RunScript(scheduler.get(), {
                                 {0, 1, 1.0, true},
                                 {1, 1, 1.0, true},   // equal, not strictly worse
                                 {2, 1, 1.5, false},  // median 1.0
                             });
}

// ---------------------------------------------------------------------------------------------
// Both rules

TEST(CombinedSchedulerTest, EitherRuleStopsAndAshaIsAskedFirst) {
  // ASHA: min_iter 2, eta 2, rungs 2 and 4 of 6. Median rule: min_trials 1, start_step 1.
  SweepConfig config = AshaConfig(Goal::kMaximize, 6, 2, 2);
  config.median_stopping.enabled = true;
  config.median_stopping.min_trials = 1;
  config.median_stopping.start_step = 1;
  std::unique_ptr<Scheduler> scheduler = Make(config);
  RunScript(
      scheduler.get(),
      {
          {0, 1, 0.5, true},
          {0, 2, 0.6, true},  // ASHA rung 0: n 1
          {1, 1, 0.4, false,  // the median rule alone
           "stopped at epoch 1 by the median rule: best val_accuracy 0.4 worse than the median "
           "running average 0.5 of 1 trial"},
          {2, 1, 0.55, true},  // median of 0.5, 0.4 is 0.45
          // ASHA rung 0: n 2, slots 1, better 1 (0.6). The median rule keeps it (0.58 > 0.55).
          {2, 2, 0.58, false,
           "stopped at rung 0 (epoch 2): val_accuracy 0.58 not in the top 1/2 of 2 trials at this "
           "rung"},
          {3, 1, 0.52, true},  // median of 0.5, 0.4, 0.55 is 0.5
          // Both stop it (ASHA: n 3, better 2; median of 0.55, 0.565 is 0.5575 > best 0.52):
          // ASHA's reason wins.
          {3, 2, 0.1, false,
           "stopped at rung 0 (epoch 2): val_accuracy 0.1 not in the top 1/2 of 3 trials at this "
           "rung"},
          // The median rule saw every report, including those of trials ASHA stopped: median of
          // 0.5, 0.4, 0.55, 0.52 is 0.51.
          {4, 1, 0.45, false,
           "stopped at epoch 1 by the median rule: best val_accuracy 0.45 worse than the median "
           "running average 0.51 of 4 trials"},
          {0, 3, 0.7, true},
          {0, 4, 0.7, true},  // ASHA rung 1: n 1
      });
}

// ---------------------------------------------------------------------------------------------
// Saved state

SweepConfig BothConfig(Goal goal = Goal::kMaximize, int64_t eta = 3, int64_t start_step = 2) {
  SweepConfig config = AshaConfig(goal, 10, 1, eta);
  config.median_stopping.enabled = true;
  config.median_stopping.min_trials = 2;
  config.median_stopping.start_step = start_step;
  return config;
}

TEST(SchedulerStateTest, RestoreContinuesExactlyAsTheOriginal) {
  struct Case {
    SweepConfig config;
    std::vector<Step> steps;
  };
  const Case cases[] = {{AshaConfig(Goal::kMaximize, 10, 1, 3), AshaScript()},
                        {MedianConfig(Goal::kMinimize, 5, 2, 2), MedianScript()},
                        {BothConfig(), AshaScript()}};
  for (const auto& [config, steps] : cases) {
    const size_t half = steps.size() / 2;
    std::unique_ptr<Scheduler> original = Make(config);
    for (size_t i = 0; i < half; ++i) {
      original->OnEpoch(steps[i].trial, steps[i].epoch, steps[i].objective);
    }
    const std::string state = original->SaveState();
    std::unique_ptr<Scheduler> restored = Make(config);
    ASSERT_TRUE(restored->RestoreState(state).ok());
    EXPECT_EQ(restored->SaveState(), state);
    std::unique_ptr<Scheduler> fresh = Make(config);

    int stops = 0;
    int differences_from_fresh = 0;
    for (size_t i = half; i < steps.size(); ++i) {
      const Step& step = steps[i];
      const SchedulerDecision expected = original->OnEpoch(step.trial, step.epoch, step.objective);
      const SchedulerDecision actual = restored->OnEpoch(step.trial, step.epoch, step.objective);
      const SchedulerDecision from_scratch = fresh->OnEpoch(step.trial, step.epoch, step.objective);
      EXPECT_EQ(actual.keep_going, expected.keep_going) << "step " << i;
      EXPECT_EQ(actual.reason, expected.reason) << "step " << i;
      stops += expected.keep_going ? 0 : 1;
      differences_from_fresh += from_scratch.reason != expected.reason ? 1 : 0;
    }
    EXPECT_GT(stops, 0);
    EXPECT_GT(differences_from_fresh, 0);  // the restored records matter
    EXPECT_EQ(restored->SaveState(), original->SaveState());
  }
}

TEST(SchedulerStateTest, StateWithoutBestValuesFromBeforeStillRestores) {
  // hpo.scheduler.v1 had the same layout without ASHA's best-so-far values: its studies resume,
  // with the rung records and no best values (a resumed trial's next report starts them again).
  const SweepConfig config = AshaConfig(Goal::kMaximize, 10, 1, 3);
  std::unique_ptr<Scheduler> source = Make(config);
  RunScript(source.get(), {{0, 1, 0.5, true}, {1, 1, 0.6, true}, {2, 1, 0.4, false}});
  for (int64_t trial = 0; trial < 3; ++trial) source->OnTrialEnd(trial, TrialStatus::kStopped);
  std::string state = source->SaveState();
  const std::string v2 = "hpo.scheduler.v2";
  ASSERT_EQ(state.substr(8, v2.size()), v2);
  ASSERT_EQ(state.substr(state.size() - 8), std::string(8, '\0'));  // no best values
  std::string v1 = state.substr(0, state.size() - 8);
  v1[8 + v2.size() - 1] = '1';
  std::unique_ptr<Scheduler> restored = Make(config);
  ASSERT_TRUE(restored->RestoreState(v1).ok());
  EXPECT_EQ(restored->SaveState(), state);
  RunScript(restored.get(), {{3, 1, 0.55, false}});  // rung 0: n 4, better 1 (0.6)
  EXPECT_EQ(restored->RestoreState(v1 + std::string(8, '\0')).code(), Status::Code::kBadInput);
}

TEST(SchedulerStateTest, StateOfAnotherConfigIsBadInput) {
  std::unique_ptr<Scheduler> source = Make(BothConfig());
  source->OnEpoch(0, 1, 0.5);
  const std::string state = source->SaveState();
  const SweepConfig others[] = {
      BothConfig(Goal::kMaximize, 2),     // another eta (and rungs)
      BothConfig(Goal::kMaximize, 3, 3),  // another start_step
      BothConfig(Goal::kMinimize),        // another goal
      AshaConfig(Goal::kMaximize, 10, 1, 3), MedianConfig(Goal::kMaximize, 10, 2, 2),
      AshaConfig(Goal::kMaximize, 28, 1, 3),  // one more rung (27)
  };
  for (const SweepConfig& config : others) {
    std::unique_ptr<Scheduler> scheduler = Make(config);
    const Status status = scheduler->RestoreState(state);
    EXPECT_EQ(status.code(), Status::Code::kBadInput);
    EXPECT_NE(status.message().find("from another config"), std::string::npos) << status.message();
  }
}

TEST(SchedulerStateTest, GarbageIsBadInputAndChangesNothing) {
  std::unique_ptr<Scheduler> source = Make(BothConfig());
  RunScript(source.get(), {{0, 1, 0.5, true}, {1, 1, 0.6, true}, {0, 2, 0.65, true}});
  const std::string state = source->SaveState();

  std::unique_ptr<Scheduler> scheduler = Make(BothConfig());
  scheduler->OnEpoch(7, 1, 0.9);
  const std::string before = scheduler->SaveState();
  std::vector<std::string> garbage = {"", "garbage", "grid/v1/9", state + '\0',
                                      std::string(64, '\xff')};
  for (size_t length = 0; length < state.size(); ++length) {
    garbage.push_back(state.substr(0, length));
  }
  for (const std::string& bytes : garbage) {
    const Status status = scheduler->RestoreState(bytes);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << bytes.size() << " bytes";
  }
  EXPECT_EQ(scheduler->SaveState(), before);
  EXPECT_TRUE(scheduler->RestoreState(state).ok());
  EXPECT_EQ(scheduler->SaveState(), state);
}

}  // namespace
}  // namespace hpo

TEST(RungRecordTest, CountsStrictlyBetterValuesForEitherGoalWithNanWorst) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  hpo::sched_internal::RungRecord maximized(hpo::Goal::kMaximize);
  for (const auto& [id, value] :
       std::vector<std::pair<int64_t, double>>{{0, 0.5}, {1, 0.7}, {2, 0.5}, {3, nan}, {4, 0.9}}) {
    maximized.Record(id, value);
  }
  EXPECT_EQ(maximized.size(), 5u);
  EXPECT_EQ(maximized.CountBetterThan(0.9), 0);
  EXPECT_EQ(maximized.CountBetterThan(0.7), 1);
  EXPECT_EQ(maximized.CountBetterThan(0.5), 2);  // the other 0.5 ties: not better
  EXPECT_EQ(maximized.CountBetterThan(0.1), 4);
  EXPECT_EQ(maximized.CountBetterThan(nan), 4);  // every number beats NaN; NaNs tie
  // A repeated record replaces the trial's value.
  maximized.Record(4, 0.6);
  EXPECT_EQ(maximized.size(), 5u);
  EXPECT_EQ(maximized.CountBetterThan(0.65), 1);
  EXPECT_EQ(maximized.values().at(4), 0.6);
  maximized.Record(3, 1.0);
  EXPECT_EQ(maximized.CountBetterThan(nan), 5);

  hpo::sched_internal::RungRecord minimized(hpo::Goal::kMinimize);
  minimized.Record(7, 0.2);
  minimized.Record(8, 0.1);
  minimized.Record(9, nan);
  EXPECT_EQ(minimized.CountBetterThan(0.15), 1);
  EXPECT_EQ(minimized.CountBetterThan(0.3), 2);
  // Rank order: best first, NaN last, ties by trial id.
  EXPECT_TRUE(minimized.RankOf(8, 0.1) < minimized.RankOf(7, 0.2));
  EXPECT_TRUE(minimized.RankOf(7, 0.2) < minimized.RankOf(9, nan));
  EXPECT_TRUE(minimized.RankOf(1, 0.2) < minimized.RankOf(7, 0.2));
  // Copies are independent.
  hpo::sched_internal::RungRecord copy = minimized;
  copy.Record(10, 0.0);
  EXPECT_EQ(copy.CountBetterThan(0.1), 1);
  EXPECT_EQ(minimized.CountBetterThan(0.1), 0);
  minimized.Clear();
  EXPECT_EQ(minimized.size(), 0u);
  EXPECT_EQ(minimized.CountBetterThan(nan), 0);
}
