// search.model curves: the final-value predictions on curves of known shape, the population
// prior, the scheduler's acquisition (continue the trial predicted best, not the one ahead now),
// its start-up, idle promotion, replay on resume and saved state, and the searcher's data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "sched/curve_scheduler.hpp"
#include "sched/scheduler.hpp"
#include "search/curve_prediction.hpp"
#include "search/searcher.hpp"
#include "search/trial_history.hpp"

namespace hpo {
namespace {

using sched_internal::CurveScheduler;

constexpr int64_t kEpochs = 27;

// losses(t) for t = 1 .. k of `shape`.
template <typename Shape>
std::vector<double> Curve(Shape shape, int64_t k) {
  std::vector<double> losses;
  for (int64_t t = 1; t <= k; ++t) losses.push_back(shape(static_cast<double>(t)));
  return losses;
}

// The final loss lies within the prediction's two-sigma interval, which is informative.
void ExpectWithinInterval(const FinalPrediction& prediction, double truth, double max_sigma) {
  const double sigma = std::sqrt(prediction.variance);
  EXPECT_LE(std::abs(prediction.mean - truth), 2.0 * sigma)
      << "mean " << prediction.mean << " sigma " << sigma << " truth " << truth;
  EXPECT_LT(sigma, max_sigma);
}

TEST(CurvePredictorTest, PowerLawOfAnExponentItDoesNotFitExactlyIsWithinItsInterval) {
  const auto shape = [](double t) { return 0.2 + 0.8 * std::pow(t, -0.7); };
  const CurvePredictor predictor(kEpochs);
  for (int64_t k : {5, 9, 15}) {
    SCOPED_TRACE(k);
    ExpectWithinInterval(predictor.Predict(Curve(shape, k)), shape(kEpochs), 0.15);
  }
}

TEST(CurvePredictorTest, ExponentialSaturationIsWithinItsInterval) {
  const auto shape = [](double t) { return 0.1 + 0.9 * std::exp(-t / 3.0); };
  const CurvePredictor predictor(kEpochs);
  // Four epochs leave the shapes far apart; the interval narrows as the curve bends.
  for (const auto& [k, max_sigma] :
       std::vector<std::pair<int64_t, double>>{{4, 0.25}, {6, 0.2}, {9, 0.15}, {12, 0.1}}) {
    SCOPED_TRACE(k);
    ExpectWithinInterval(predictor.Predict(Curve(shape, k)), shape(kEpochs), max_sigma);
  }
}

TEST(CurvePredictorTest, NoisyCurveIsWithinItsWiderInterval) {
  // A power law with alternating noise of 0.01: the residuals widen the interval.
  const auto shape = [](double t) {
    return 0.3 + 0.5 / std::sqrt(t) + (static_cast<int64_t>(t) % 2 == 0 ? 0.01 : -0.01);
  };
  const CurvePredictor predictor(kEpochs);
  const FinalPrediction noisy = predictor.Predict(Curve(shape, 9));
  ExpectWithinInterval(noisy, 0.3 + 0.5 / std::sqrt(27.0), 0.1);
  const FinalPrediction smooth =
      predictor.Predict(Curve([](double t) { return 0.3 + 0.5 / std::sqrt(t); }, 9));
  EXPECT_GT(noisy.variance, 4.0 * smooth.variance);
}

// Ahead now but flattening (A) against behind now and still falling steeply (B).
const auto kFlattening = [](double t) { return 0.30 + 0.10 * std::exp(-t); };
const auto kSteep = [](double t) { return 0.10 + 1.00 / t; };

TEST(CurvePredictorTest, CrossingCurvesArePredictedToCross) {
  const CurvePredictor predictor(kEpochs);
  const std::vector<double> ahead = Curve(kFlattening, 4);
  const std::vector<double> behind = Curve(kSteep, 4);
  ASSERT_LT(ahead.back(), behind.back());
  const FinalPrediction a = predictor.Predict(ahead);
  const FinalPrediction b = predictor.Predict(behind);
  EXPECT_LT(b.mean, a.mean);
  ExpectWithinInterval(a, kFlattening(kEpochs), 0.05);
  ExpectWithinInterval(b, kSteep(kEpochs), 0.1);
}

TEST(CurvePredictorTest, ShortCurvesTakeTheReferencesMeanGain) {
  CurvePredictor predictor(3);
  predictor.AddReference({1.0, 0.8, 0.5});      // gains from epoch 1: -0.5, from epoch 2: -0.3
  predictor.AddReference({0.9, 0.6, 0.3});      // -0.6, -0.3
  predictor.AddReference({0.7, std::nan("")});  // not complete: ignored
  EXPECT_EQ(predictor.references(), 2);
  const FinalPrediction one = predictor.Predict({0.8});
  EXPECT_NEAR(one.mean, 0.8 - 0.55, 1e-12);
  // Sample variance of (-0.5, -0.6) is 0.005, times 1 + 1/2.
  EXPECT_NEAR(one.variance, 0.005 * 1.5, 1e-12);
  const FinalPrediction done = predictor.Predict({0.8, 0.7, 0.65});
  EXPECT_EQ(done.mean, 0.65);
  EXPECT_EQ(done.variance, 0.0);
}

TEST(CurvePredictorTest, AFlatStartMayStillTakeOffAsOtherCurvesDid) {
  // Two of four references stayed flat for 5 epochs, then took off. A curve flat for 3 epochs
  // fits a flat line exactly, but it is not sure to stay flat: the predictor gave it no chance
  // to end below 0.5 (its extrapolation's variance 1e-8 outweighed the population's), though
  // half the references that started so ended at 0.3.
  CurvePredictor predictor(9);
  for (int copy = 0; copy < 2; ++copy) {
    predictor.AddReference({0.9, 0.9, 0.9, 0.9, 0.9, 0.7, 0.5, 0.4, 0.3});
  }
  predictor.AddReference({0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.47, 0.45, 0.44});
  predictor.AddReference({0.9, 0.85, 0.8, 0.76, 0.72, 0.7, 0.68, 0.67, 0.66});
  const FinalPrediction flat = predictor.Predict({0.9, 0.9, 0.9});
  EXPECT_GT(ProbabilityOfImprovement(flat, 0.5), 0.02);
  EXPECT_LT(flat.mean, 0.9);
}

TEST(CurvePredictorTest, WithNothingToGoOnTheSpreadIsTheChangeSoFar) {
  const CurvePredictor predictor(kEpochs);
  const FinalPrediction two = predictor.Predict({0.9, 0.6});
  EXPECT_EQ(two.mean, 0.6);
  EXPECT_NEAR(two.variance, 0.3 * 0.3, 1e-12);
  const FinalPrediction one = predictor.Predict({0.5});
  EXPECT_NEAR(one.variance, 0.025 * 0.025, 1e-12);  // 5% of the last loss
}

TEST(CurvePredictorTest, CurveThroughGapsInterpolatesMissingEpochs) {
  const double none = std::numeric_limits<double>::infinity();
  const LearningCurve late = CurveThroughGaps({none, 0.5, none, 0.3, std::nan(""), none});
  EXPECT_EQ(late.losses, (std::vector<double>{0.5, 0.5, 0.4, 0.3}));
  EXPECT_EQ(late.first_reported, 2);
  const LearningCurve sparse = CurveThroughGaps({0.9, none, none, 0.6});
  EXPECT_EQ(sparse.losses, (std::vector<double>{0.9, 0.8, 0.7, 0.6}));
  EXPECT_EQ(sparse.first_reported, 1);
  EXPECT_TRUE(CurveThroughGaps({none, std::nan("")}).losses.empty());
  EXPECT_TRUE(CurveThroughGaps({}).losses.empty());
  // A curve reported from epoch 4 on is extrapolated from its reports alone, and is no reference.
  const LearningCurve resumed = CurveThroughGaps({none, none, none, 0.25, 0.2, 1.0 / 6.0});
  const std::optional<FinalPrediction> extrapolated = CurvePredictor::Extrapolate(resumed, 20);
  ASSERT_TRUE(extrapolated.has_value());
  EXPECT_NEAR(extrapolated->mean, 0.05, 0.02);
  EXPECT_FALSE(CurvePredictor::Extrapolate(CurveThroughGaps({none, none, 0.3, 0.2}), 20));
  CurvePredictor predictor(3);
  predictor.AddReference(CurveThroughGaps({none, 0.5, 0.4}));
  EXPECT_EQ(predictor.references(), 0);
}

TEST(CurvePredictorTest, ReportVarianceIsTheReferencesScatterAboutTheirTrend) {
  // 200 references: 0.1 + 1/t plus independent normal scatter of standard deviation 0.01.
  std::mt19937 generator(7);
  std::normal_distribution<double> scatter(0.0, 0.01);
  CurvePredictor predictor(kEpochs);
  EXPECT_EQ(predictor.ReportVariance(), 0.0);
  for (int reference = 0; reference < 200; ++reference) {
    std::vector<double> losses = Curve(kSteep, kEpochs);
    for (double& loss : losses) loss += scatter(generator);
    predictor.AddReference(losses);
  }
  EXPECT_NEAR(std::sqrt(predictor.ReportVariance()), 0.01, 0.001);
  CurvePredictor smooth(kEpochs);
  smooth.AddReference(Curve(kSteep, kEpochs));
  EXPECT_LT(smooth.ReportVariance(), 1e-7);  // the trend's own curvature
}

TEST(CurvePredictorTest, ProbabilityOfImprovement) {
  EXPECT_NEAR(ProbabilityOfImprovement({0.5, 0.01}, 0.5), 0.5, 1e-12);
  EXPECT_GT(ProbabilityOfImprovement({0.4, 0.01}, 0.5), 0.8);
  EXPECT_EQ(ProbabilityOfImprovement({0.4, 0.0}, 0.5), 1.0);
  EXPECT_EQ(ProbabilityOfImprovement({0.6, 0.0}, 0.5), 0.0);
}

SweepConfig CurvesConfig(int64_t run_cap, int64_t startup_trials) {
  SweepConfig config;
  config.path = "curves.yaml";
  config.sweep.method = SearchMethod::kBayes;
  config.search.model = BayesModel::kCurves;
  config.search.startup_trials = startup_trials;
  config.sweep.run_cap = run_cap;
  config.sweep.metric.name = "val_loss";
  config.sweep.metric.goal = Goal::kMinimize;
  config.execution.epochs = kEpochs;
  config.sweep.early_terminate.enabled = true;
  config.sweep.early_terminate.min_iter = 4;
  config.sweep.early_terminate.eta = 3;  // decisions at epochs 4 and 12
  return config;
}

std::unique_ptr<Scheduler> MakeCurves(int64_t run_cap, int64_t startup_trials) {
  std::unique_ptr<Scheduler> scheduler;
  const Status status = MakeScheduler(CurvesConfig(run_cap, startup_trials), &scheduler);
  EXPECT_TRUE(status.ok()) << status.message();
  return scheduler;
}

// Reports `shape`'s epochs from..to; returns the last decision.
template <typename Shape>
SchedulerDecision Report(Scheduler* scheduler, int64_t trial_id, Shape shape, int64_t from,
                         int64_t to) {
  SchedulerDecision decision;
  for (int64_t epoch = from; epoch <= to; ++epoch) {
    decision = scheduler->OnEpoch(trial_id, epoch, shape(static_cast<double>(epoch)));
    if (epoch < to) {
      EXPECT_TRUE(decision.keep_going) << "epoch " << epoch;
    }
  }
  return decision;
}

TEST(CurveSchedulerTest, ContinuesTheTrialPredictedBestNotTheOneAheadNow) {
  // Two trials, run_cap 2: once both reported no new trial can start. The steep one reaches its
  // decision epoch first and pauses (start-up: new trials first); the flattening one, ahead at
  // epoch 4, pauses for it, and Promote names the steep one.
  std::unique_ptr<Scheduler> scheduler = MakeCurves(2, 2);
  const SchedulerDecision steep = Report(scheduler.get(), 1, kSteep, 1, 4);
  EXPECT_FALSE(steep.keep_going);
  EXPECT_TRUE(steep.pause);
  EXPECT_NE(steep.reason.find("a new trial is expected to gain more per epoch"), std::string::npos)
      << steep.reason;
  const SchedulerDecision flattening = Report(scheduler.get(), 0, kFlattening, 1, 4);
  EXPECT_TRUE(flattening.pause);
  const std::string prefix = "paused at epoch 4: predicted final val_loss ";
  ASSERT_EQ(flattening.reason.rfind(prefix, 0), 0u) << flattening.reason;
  const double predicted = std::stod(flattening.reason.substr(prefix.size()));
  EXPECT_NEAR(predicted, kFlattening(kEpochs), 0.02) << flattening.reason;
  EXPECT_NE(flattening.reason.find("paused trial 1 is expected to gain more"), std::string::npos)
      << flattening.reason;
  EXPECT_EQ(scheduler->paused_trials(), 2u);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(1));
  EXPECT_EQ(scheduler->paused_trials(), 1u);
  // Trial 1 goes on at every epoch to 12: the flattening one is worth less still.
  EXPECT_TRUE(Report(scheduler.get(), 1, kSteep, 5, 12).keep_going);
}

TEST(CurveSchedulerTest, TheSameTrialsTheOtherWayRoundContinueTheSteepOne) {
  std::unique_ptr<Scheduler> scheduler = MakeCurves(2, 2);
  EXPECT_TRUE(Report(scheduler.get(), 0, kFlattening, 1, 4).pause);
  EXPECT_TRUE(Report(scheduler.get(), 1, kSteep, 1, 4).keep_going);
  // A free group can start no new trial (run_cap 2): the paused one is better than idling.
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(0));
}

TEST(CurveSchedulerTest, StartUpTrialsPauseForNewOnesAndIdlePromotionTrainsTheBest) {
  std::unique_ptr<Scheduler> scheduler = MakeCurves(100, 3);
  EXPECT_TRUE(Report(scheduler.get(), 0, kFlattening, 1, 4).pause);
  EXPECT_TRUE(Report(scheduler.get(), 1, kSteep, 1, 4).pause);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::nullopt);  // 2 of 3 start-up trials
  // Idle: nothing runs and nothing new starts, and no trial has trained every epoch. No new
  // trial will start from now on, so trial 1 goes on to the end.
  EXPECT_EQ(scheduler->Promote(/*idle=*/true), std::optional<int64_t>(1));
  EXPECT_TRUE(Report(scheduler.get(), 1, kSteep, 5, kEpochs).keep_going);
  scheduler->OnTrialEnd(1, TrialStatus::kCompleted);
  // Trial 0 is predicted far above trial 1's final value, but it paused at the first rung (4),
  // before the last (12): idle promotion still gives it its chance (see
  // OnceNoNewTrialCanStartAPausedTrialBeforeTheLastRungStillGoesOn).
  EXPECT_EQ(scheduler->Promote(/*idle=*/true), std::optional<int64_t>(0));
}

// The reports of `shape` at epochs from..to.
template <typename Shape>
std::map<int64_t, double> Reports(Shape shape, int64_t from, int64_t to) {
  std::map<int64_t, double> reports;
  for (int64_t epoch = from; epoch <= to; ++epoch) {
    reports[epoch] = shape(static_cast<double>(epoch));
  }
  return reports;
}

TEST(CurveSchedulerTest, OnceNoNewTrialCanStartAHopelessPausedTrialStaysPausedWhileOthersRun) {
  // run_cap 3: once trial 2 has reported no new trial can start. Trial 1 trains every epoch;
  // a group that frees up while trial 2 still runs is not given trial 0, paused past the last
  // rung (12) with a predicted final value far worse than trial 1's (a sweep of 40 trials on an
  // H200 trained all 40 to the end when any paused trial went on once run_cap trials had
  // reported).
  std::unique_ptr<Scheduler> scheduler = MakeCurves(3, 3);
  scheduler->ReplayTrial(0, Reports(kFlattening, 1, 13), TrialStatus::kPaused);
  scheduler->ReplayTrial(1, Reports(kSteep, 1, 4), TrialStatus::kPaused);
  scheduler->ReplayTrial(2, Reports(kSteep, 1, 1), TrialStatus::kRunning);
  // No trial has trained every epoch yet: the best paused one goes on.
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(1));
  EXPECT_TRUE(Report(scheduler.get(), 1, kSteep, 5, kEpochs).keep_going);
  scheduler->OnTrialEnd(1, TrialStatus::kCompleted);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::nullopt);
  EXPECT_EQ(scheduler->paused_trials(), 1u);
  // Nor once nothing else runs: the sweep ends with trial 0 paused, and says why.
  scheduler->OnTrialEnd(2, TrialStatus::kCompleted);
  EXPECT_EQ(scheduler->Promote(/*idle=*/true), std::nullopt);
  EXPECT_EQ(scheduler->WhyLeftPaused(), "past the last rung, each under a 5 % chance to end best");
}

TEST(CurveSchedulerTest, WhenResumesStartOverAPausedTrialCostsAllItsEpochs) {
  // run_cap 2: no new trial can start. Trial 0 paused 3 epochs before the end; trial 1, 0.1
  // above its curve, after 4 epochs: its wider prediction is worth more improvement, but trial 0
  // costs fewer epochs to finish and goes on first. When the programs start over on resume (a
  // command trial without a checkpoint), both would train every epoch again, and the one worth
  // more goes on.
  const auto behind = [](double t) { return 0.1 + kSteep(t); };
  for (const bool start_over : {false, true}) {
    std::unique_ptr<Scheduler> scheduler = MakeCurves(2, 2);
    scheduler->ReplayTrial(0, Reports(kSteep, 1, 24), TrialStatus::kPaused);
    scheduler->ReplayTrial(1, Reports(behind, 1, 4), TrialStatus::kPaused);
    if (start_over) scheduler->ResumesStartOver();
    EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(start_over ? 1 : 0))
        << "start_over " << start_over;
  }
}

TEST(CurveSchedulerTest, OnceNoNewTrialCanStartAPausedTrialBeforeTheLastRungStillGoesOn) {
  // As above, but trial 0 paused at the first rung (4), before the last (12): its prediction
  // rests on 4 epochs and the sweep's complete curves, so it is not left behind on it (on the
  // recorded Fashion-MNIST curves such trials, given under 1e-6, went on to the best values).
  std::unique_ptr<Scheduler> scheduler = MakeCurves(3, 3);
  scheduler->ReplayTrial(0, Reports(kFlattening, 1, 4), TrialStatus::kPaused);
  scheduler->ReplayTrial(1, Reports(kSteep, 1, kEpochs), TrialStatus::kCompleted);
  scheduler->ReplayTrial(2, Reports(kSteep, 1, 1), TrialStatus::kRunning);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(0));
  EXPECT_EQ(scheduler->paused_trials(), 0u);
}

// A validation metric's scatter about its trend, the same in every trial (one validation set):
// the sweep's curves run parallel, their gains agree exactly, yet one report is off by up to
// 0.004.
const auto kScatter = [](double t) { return 0.004 * std::sin(2.3 * t); };
const auto kSteepScattered = [](double t) { return kSteep(t) + kScatter(t); };

TEST(CurvePredictorTest, AFewReferencesThatGainedAlikeStillLeaveTwoReportsScatter) {
  // Three references shifted copies of one curve, so their gains from epoch 1 agree exactly (seed
  // 1 of the outcome sweep's first three agreed to 5e-4), each report scattered by about 0.004:
  // a new curve's final value after one epoch is uncertain by at least the scatter of the two
  // reports a gain spans (before: the variance floor, 1e-8).
  CurvePredictor predictor(kEpochs);
  for (double shift : {0.0, 0.0001, 0.0002}) {
    predictor.AddReference(
        Curve([shift](double t) { return kSteepScattered(t) + shift; }, kEpochs));
  }
  ASSERT_GT(predictor.ReportVariance(), 1e-5);
  const FinalPrediction prediction = predictor.Predict({kSteep(1) + 0.05});
  EXPECT_GE(prediction.variance, 2.0 * predictor.ReportVariance());
}

TEST(CurveSchedulerTest, OnceNoNewTrialCanStartAPausedTrialWithinOneReportsScatterGoesOn) {
  // run_cap 4: no new trial can start. Trial 1 trained every epoch (the incumbent); trial 0 paused
  // at the last rung (12), its trend 0.003 above trial 1's. The two references gained alike, but
  // its final value is one report, which scatters by about 0.004 here, and the gap is within
  // that: its prediction keeps two reports' scatter (CurvePredictor) and it goes on.
  std::unique_ptr<Scheduler> scheduler = MakeCurves(4, 4);
  const auto close_behind = [](double t) { return kSteepScattered(t) + 0.003; };
  const auto far_behind = [](double t) { return kSteepScattered(t) + 0.02; };
  scheduler->ReplayTrial(1, Reports(kSteepScattered, 1, kEpochs), TrialStatus::kCompleted);
  scheduler->ReplayTrial(2, Reports(far_behind, 1, kEpochs), TrialStatus::kCompleted);
  scheduler->ReplayTrial(0, Reports(close_behind, 1, 12), TrialStatus::kPaused);
  scheduler->ReplayTrial(3, Reports(kSteep, 1, 1), TrialStatus::kRunning);
  CurvePredictor predictor(kEpochs);
  predictor.AddReference(Curve(kSteepScattered, kEpochs));
  predictor.AddReference(Curve(far_behind, kEpochs));
  const std::optional<FinalPrediction> trend =
      static_cast<CurveScheduler*>(scheduler.get())->PredictFinal(0);
  ASSERT_TRUE(trend.has_value());
  EXPECT_GT(predictor.ReportVariance(), 1e-5);
  EXPECT_GT(ProbabilityOfImprovement(*trend, kSteepScattered(kEpochs)), 0.05);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(0));
}

TEST(CurveSchedulerTest, OnceOnlyContendersMayGoOnATrialDoesNotPauseForOneThatMayNot) {
  // As above, but trial 0 is 0.05 behind: it stays paused. Trial 3, far behind too, reaches the
  // first rung: it pauses for no paused trial Promote would not take (a real sweep paused a
  // trial 12 times for such a one, and promoted it straight back each time).
  std::unique_ptr<Scheduler> scheduler = MakeCurves(4, 4);
  const auto behind = [](double t) { return kSteepScattered(t) + 0.05; };
  const auto far_behind = [](double t) { return kSteepScattered(t) + 0.2; };
  scheduler->ReplayTrial(1, Reports(kSteepScattered, 1, kEpochs), TrialStatus::kCompleted);
  scheduler->ReplayTrial(2, Reports(behind, 1, kEpochs), TrialStatus::kCompleted);
  scheduler->ReplayTrial(0, Reports(behind, 1, 12), TrialStatus::kPaused);
  EXPECT_EQ(Report(scheduler.get(), 3, far_behind, 1, 4).reason, "");
  EXPECT_EQ(scheduler->paused_trials(), 1u);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::nullopt);
}

// A real sweep's first 11 trials (bench/configs/fmnist_outcome_bohb.yaml, seed 2: validation
// accuracy per epoch, 9 epochs, rungs at 1 and 3, 10 start-up trials), as the scheduler saw them
// once trial 10 finished: trials 2, 3, 6 and 10 complete (3 leads at 0.9185), the others paused.
const std::map<int64_t, std::vector<double>>& Seed2Curves() {
  static const std::map<int64_t, std::vector<double>> curves = {
      {0, {0.8247, 0.8497}},
      {1, {0.8708, 0.8842, 0.8940, 0.8887}},
      {2, {0.8622, 0.8873, 0.8950, 0.9035, 0.9047, 0.9050, 0.9118, 0.9083, 0.9173}},
      {3, {0.8928, 0.8855, 0.9028, 0.9097, 0.9128, 0.9117, 0.9080, 0.9147, 0.9185}},
      {4, {0.8135, 0.8482}},
      {5, {0.8457, 0.8713, 0.8830, 0.8867}},
      {6, {0.8647, 0.8820, 0.8907, 0.8958, 0.9023, 0.9042, 0.9060, 0.9077, 0.9028}},
      {7, {0.8827, 0.8895, 0.8937}},
      {8, {0.8452, 0.8777, 0.8818, 0.8822}},
      {9, {0.8078, 0.8427}},
      {10, {0.8648, 0.8952, 0.8997, 0.8980, 0.9072, 0.9013, 0.9015, 0.9060, 0.8990}}};
  return curves;
}

// The curve scheduler of that sweep with run_cap `run_cap`, its trials replayed (without trial
// 10 when `with_trial_10` is false).
std::unique_ptr<Scheduler> Seed2Scheduler(int64_t run_cap, bool with_trial_10) {
  SweepConfig config = CurvesConfig(run_cap, 10);
  config.sweep.metric.name = "val_accuracy";
  config.sweep.metric.goal = Goal::kMaximize;
  config.execution.epochs = 9;
  config.sweep.early_terminate.min_iter = 1;
  std::unique_ptr<Scheduler> scheduler;
  EXPECT_TRUE(MakeScheduler(config, &scheduler).ok());
  for (const auto& [id, accuracies] : Seed2Curves()) {
    if (id == 10 && !with_trial_10) continue;
    std::map<int64_t, double> reports;
    for (size_t i = 0; i < accuracies.size(); ++i) {
      reports[static_cast<int64_t>(i) + 1] = accuracies[i];
    }
    scheduler->ReplayTrial(id, reports,
                           accuracies.size() == 9 ? TrialStatus::kCompleted : TrialStatus::kPaused);
  }
  return scheduler;
}

TEST(CurveSchedulerTest, WhileNewTrialsCanStartAPausedTrialThatMayNotEndBestIsNotPromoted) {
  // A new trial's value is the mean EI of the trials seen; with trial 3 ahead of them all it was
  // as small as a hopeless trial's, and the sweep promoted sgd trials predicted 0.87-0.90 for 20
  // of its next epochs (trial 0 first) while no new trial started. A free group starts one.
  std::unique_ptr<Scheduler> scheduler = Seed2Scheduler(40, true);
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::nullopt);
  EXPECT_EQ(scheduler->paused_trials(), 7u);
  // Once no new trial can start, those paused before the last rung still go on.
  EXPECT_TRUE(Seed2Scheduler(11, true)->Promote(/*idle=*/false).has_value());
}

TEST(CurveSchedulerTest, WhileNewTrialsCanStartATrialThatMayNotEndBestGivesWayPastTheLastRung) {
  // The same sweep trained trial 10 (adamw, lr 8.2e-3) to its 9th epoch, to end at 0.899.
  const std::vector<double>& accuracies = Seed2Curves().at(10);
  std::unique_ptr<Scheduler> scheduler = Seed2Scheduler(40, false);
  scheduler->ReplayTrial(10, {{1, accuracies[0]}, {2, accuracies[1]}}, TrialStatus::kRunning);
  EXPECT_TRUE(scheduler->OnEpoch(10, 3, accuracies[2]).keep_going);  // may end best
  const SchedulerDecision decision = scheduler->OnEpoch(10, 4, accuracies[3]);
  EXPECT_TRUE(decision.pause);
  EXPECT_EQ(decision.reason,
            "paused at epoch 4: predicted final val_accuracy 0.908 +- 0.0039; under a 5 % chance "
            "to end best, it gives way to new trials");
  // Once no new trial can start it trains on: nothing else could use the group.
  scheduler = Seed2Scheduler(11, false);
  scheduler->ReplayTrial(10, {{1, accuracies[0]}, {2, accuracies[1]}}, TrialStatus::kRunning);
  EXPECT_TRUE(scheduler->OnEpoch(10, 3, accuracies[2]).keep_going);
  EXPECT_TRUE(scheduler->OnEpoch(10, 4, accuracies[3]).keep_going);
}

TEST(CurveSchedulerTest, ATrialThatStallsAfterTheFirstRungGivesWayBeforeTheNext) {
  // Trial 0 is ahead and steep at epoch 4 (the first rung), then flat at 0.30 from epoch 5:
  // judged at every epoch, it pauses for the steep trial 1 before the second rung (12).
  const auto stalls = [](double t) { return t <= 4.0 ? 0.05 + 1.0 / t : 0.30; };
  std::unique_ptr<Scheduler> scheduler = MakeCurves(2, 2);
  EXPECT_TRUE(Report(scheduler.get(), 1, kSteep, 1, 4).pause);  // start-up: new trials first
  EXPECT_TRUE(Report(scheduler.get(), 0, stalls, 1, 4).keep_going);
  int64_t paused_at = 0;
  SchedulerDecision decision;
  for (int64_t epoch = 5; epoch < kEpochs && paused_at == 0; ++epoch) {
    decision = scheduler->OnEpoch(0, epoch, stalls(static_cast<double>(epoch)));
    if (decision.pause) paused_at = epoch;
  }
  EXPECT_GT(paused_at, 4);
  EXPECT_LT(paused_at, 12);
  EXPECT_NE(decision.reason.find("paused trial 1 is expected to gain more per epoch"),
            std::string::npos)
      << decision.reason;
  EXPECT_EQ(scheduler->Promote(/*idle=*/false), std::optional<int64_t>(1));
}

TEST(CurveSchedulerTest, NotANumberAtADecisionEpochStops) {
  std::unique_ptr<Scheduler> scheduler = MakeCurves(10, 1);
  Report(scheduler.get(), 0, kSteep, 1, 3);
  const SchedulerDecision decision = scheduler->OnEpoch(0, 4, std::nan(""));
  EXPECT_FALSE(decision.keep_going);
  EXPECT_FALSE(decision.pause);
  EXPECT_NE(decision.reason.find("not a number"), std::string::npos) << decision.reason;
}

TEST(CurveSchedulerTest, ReportsWithGapsAreJudgedOnTheCurveThroughThem) {
  // Gaps in a trial's reports: a trial resumed from a checkpoint at epoch 5 after its first
  // reports were lost with a killed job (it reports from epoch 6 on), a program that reports every
  // second epoch, and one whose first report was not a number. Each is judged from the first
  // rung on (the killed CI job's resume crashed here), and its prediction is the full curve's.
  std::unique_ptr<Scheduler> scheduler = MakeCurves(100, 1);
  auto* curves = static_cast<CurveScheduler*>(scheduler.get());
  for (int64_t epoch = 1; epoch <= kEpochs; ++epoch) {  // two complete references
    scheduler->OnEpoch(0, epoch, kSteep(epoch));
    scheduler->OnEpoch(1, epoch, kFlattening(epoch));
  }
  for (int64_t epoch = 6; epoch <= 8; ++epoch) {
    const SchedulerDecision resumed = scheduler->OnEpoch(2, epoch, kSteep(epoch));
    EXPECT_FALSE(!resumed.keep_going && !resumed.pause) << "epoch " << epoch << resumed.reason;
  }
  for (int64_t epoch = 2; epoch <= 8; epoch += 2) {
    const SchedulerDecision sparse = scheduler->OnEpoch(3, epoch, kSteep(epoch));
    EXPECT_FALSE(!sparse.keep_going && !sparse.pause) << "epoch " << epoch << sparse.reason;
  }
  scheduler->OnEpoch(4, 1, std::nan(""));
  for (int64_t epoch = 2; epoch <= 4; ++epoch) scheduler->OnEpoch(4, epoch, kSteep(epoch));
  for (const int64_t trial_id : {2, 3, 4}) {
    const std::optional<FinalPrediction> gapped = curves->PredictFinal(trial_id);
    ASSERT_TRUE(gapped.has_value()) << trial_id;
    EXPECT_NEAR(gapped->mean, kSteep(kEpochs), 0.05) << trial_id;
  }
}

TEST(CurveSchedulerTest, AReportNumberedPastTheLastEpochIsNotKept) {
  // A program that numbers its reports by batch (`step: 5000000`) beside `epochs: 27`: the
  // scheduler kept a loss per step up to it (40 MB a trial, and O(steps) per report).
  std::unique_ptr<Scheduler> scheduler = MakeCurves(10, 1);
  Report(scheduler.get(), 0, kSteep, 1, 3);
  const size_t before = scheduler->SaveState().size();
  EXPECT_TRUE(scheduler->OnEpoch(0, 5000000, 0.1).keep_going);
  EXPECT_EQ(scheduler->SaveState().size(), before);
}

TEST(CurveSchedulerTest, ReplayOnResumeRebuildsTheSameStateAndDecisions) {
  std::unique_ptr<Scheduler> live = MakeCurves(4, 2);
  std::map<int64_t, std::map<int64_t, double>> reports;
  std::map<int64_t, TrialStatus> statuses;
  const std::vector<double> scales = {1.0, 0.7, 1.3, 0.9};
  for (int64_t id = 0; id < 4; ++id) {
    statuses[id] = TrialStatus::kRunning;
    for (int64_t epoch = 1; epoch <= 12; ++epoch) {
      const double value = scales[static_cast<size_t>(id)] * kSteep(static_cast<double>(epoch));
      reports[id][epoch] = value;
      const SchedulerDecision decision = live->OnEpoch(id, epoch, value);
      if (decision.pause) statuses[id] = TrialStatus::kPaused;
      if (!decision.keep_going) break;
    }
  }
  std::unique_ptr<Scheduler> replayed = MakeCurves(4, 2);
  for (const auto& [id, trial_reports] : reports) {
    replayed->ReplayTrial(id, trial_reports, statuses[id]);
  }
  EXPECT_EQ(replayed->SaveState(), live->SaveState());
  EXPECT_GT(live->paused_trials(), 0u);
  EXPECT_EQ(replayed->Promote(false), live->Promote(false));
  EXPECT_EQ(replayed->Promote(true), live->Promote(true));
}

TEST(CurveSchedulerTest, SavedStateRoundTripsAndRejectsOthers) {
  std::unique_ptr<Scheduler> scheduler = MakeCurves(3, 2);
  Report(scheduler.get(), 0, kSteep, 1, 4);
  Report(scheduler.get(), 1, kFlattening, 1, 4);
  const std::string state = scheduler->SaveState();
  std::unique_ptr<Scheduler> restored = MakeCurves(3, 2);
  ASSERT_TRUE(restored->RestoreState(state).ok());
  EXPECT_EQ(restored->SaveState(), state);
  EXPECT_EQ(restored->paused_trials(), scheduler->paused_trials());

  std::unique_ptr<Scheduler> other = MakeCurves(3, 5);  // another startup_trials
  EXPECT_EQ(other->RestoreState(state).code(), Status::Code::kBadInput);
  EXPECT_EQ(restored->RestoreState(state.substr(0, state.size() - 3)).code(),
            Status::Code::kBadInput);
  EXPECT_EQ(restored->SaveState(), state);  // unchanged by the failed restore
  EXPECT_NE(scheduler->ConfigFingerprint(), other->ConfigFingerprint());
}

TEST(CurveSchedulerTest, MakeSchedulerRefusesTheMedianRuleBesideIt) {
  SweepConfig config = CurvesConfig(10, 2);
  config.median_stopping.enabled = true;
  std::unique_ptr<Scheduler> scheduler;
  const Status status = MakeScheduler(config, &scheduler);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("curves.yaml: median_stopping"), std::string::npos)
      << status.message();
  config.median_stopping.enabled = false;
  config.sweep.early_terminate.enabled = false;
  ASSERT_TRUE(MakeScheduler(config, &scheduler).ok());
  EXPECT_EQ(scheduler, nullptr);  // without early_terminate every trial runs every epoch
}

TEST(CurveSchedulerTest, MethodRandomKeepsRandomDrawsAndJudgesTrialsByCurves) {
  ParameterSpec lr;
  lr.name = "lr";
  lr.distribution = Distribution::kLogUniformValues;
  lr.min = 1e-4;
  lr.max = 1.0;
  SweepConfig with_curves = CurvesConfig(10, 2);
  with_curves.sweep.method = SearchMethod::kRandom;
  with_curves.sweep.parameters = {lr};
  SweepConfig plain = with_curves;
  plain.search.model = BayesModel::kTpe;

  std::unique_ptr<Scheduler> scheduler;
  ASSERT_TRUE(MakeScheduler(with_curves, &scheduler).ok());
  ASSERT_NE(scheduler, nullptr);
  EXPECT_EQ(scheduler->ConfigFingerprint().rfind("hpo.scheduler.curves.v1", 0), 0u)
      << "the curve scheduler judges the trials";
  std::unique_ptr<Scheduler> asha;
  ASSERT_TRUE(MakeScheduler(plain, &asha).ok());
  EXPECT_NE(asha->ConfigFingerprint(), scheduler->ConfigFingerprint());

  std::unique_ptr<Searcher> drawn;
  std::unique_ptr<Searcher> random;
  ASSERT_TRUE(MakeSearcher(with_curves, &drawn).ok());
  ASSERT_TRUE(MakeSearcher(plain, &random).ok());
  for (int64_t id = 0; id < 5; ++id) {
    const std::optional<Assignment> a = drawn->Suggest(id);
    const std::optional<Assignment> b = random->Suggest(id);
    ASSERT_TRUE(a && b);
    ASSERT_NE(FindParam(*a, "lr"), nullptr);
    ASSERT_NE(FindParam(*b, "lr"), nullptr);
    EXPECT_EQ(*FindParam(*a, "lr"), *FindParam(*b, "lr")) << "trial " << id;
    drawn->Observe(id, *a, TrialStatus::kCompleted, static_cast<double>(id));
  }
}

TEST(CurveSearcherDataTest, EveryTrialThatReportedIsModelledAtItsPredictedFinal) {
  ParameterSpec lr;
  lr.name = "lr";
  lr.distribution = Distribution::kUniform;
  lr.min = 0.0;
  lr.max = 1.0;
  TrialHistory history({lr}, {DimensionOf(lr)}, {Goal::kMaximize}, 1,
                       TrialHistory::DataRule::kPredictedFinals, 3, /*seed=*/0);
  const Assignment params = {{"lr", 0.5}};
  for (int64_t id : {0, 1}) {  // two complete curves: accuracy gains 0.3 and 0.2 from epoch 1
    history.RecordEpoch(id, params, 1, 0.5);
    history.RecordEpoch(id, params, 2, 0.6);
    history.RecordEpoch(id, params, 3, id == 0 ? 0.8 : 0.7);
    history.RecordResult(id, params, TrialStatus::kCompleted, id == 0 ? 0.8 : 0.7);
  }
  history.RecordEpoch(2, params, 1, 0.6);  // running, one report
  history.RecordSuggestion(3, params);     // running, no report: pending
  history.RecordResult(4, params, TrialStatus::kFailed, std::nan(""));
  history.RecordEpoch(5, params, 2, 0.65);  // resumed at epoch 2, its first report lost
  std::vector<TrialHistory::DataPoint> observed, pending;
  ASSERT_TRUE(history.CollectData(6, &observed, &pending));
  ASSERT_EQ(observed.size(), 5u);
  EXPECT_NEAR(observed[0].loss, -0.8, 1e-12);
  EXPECT_NEAR(observed[1].loss, -0.7, 1e-12);
  EXPECT_NEAR(observed[2].loss, -(0.6 + 0.25), 1e-12);  // epoch 1 plus the mean gain
  EXPECT_EQ(observed[3].trial_id, 4);
  EXPECT_TRUE(std::isinf(observed[3].loss));
  EXPECT_EQ(observed[4].trial_id, 5);
  EXPECT_NEAR(observed[4].loss, -(0.65 + 0.15), 1e-12);  // epoch 2 plus the gain from epoch 2
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].trial_id, 3);
}

}  // namespace
}  // namespace hpo
