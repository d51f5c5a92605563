// Private to hpo_core: predicting a trial's final loss from its partial learning curve, for
// `search.model: curves` (the GP searcher fits the predictions; the curve scheduler of
// sched/curve_scheduler.cpp continues or pauses trials by them). Losses follow the metric's goal
// (lower is better). Plain values, no MPI or torch; a const predictor is safe to share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hpo/config.hpp"

namespace hpo {

// The loss of an objective under the metric's goal (negated when maximising); NaN, a missing or
// failed value, is +infinity.
double LossOf(Goal goal, double objective);

// A trial's learning curve as the model reads it: the losses of epochs 1..k. Epochs before
// `first_reported` had no finite report and carry that epoch's loss; the curve's extrapolation
// fits only from there on, and it is no reference for the population (its early gains are
// unknown).
struct LearningCurve {
  std::vector<double> losses;
  int64_t first_reported = 1;
};

// The curve of a trial's losses by epoch (`losses_by_epoch[e - 1]` is epoch e's, non-finite
// where no report reached the coordinator or it was not a number): epochs 1..k, k the last epoch
// with a finite loss; an epoch without one between two finite losses takes the loss interpolated
// linearly between them. Gaps come from programs that report every few epochs, a NaN that later
// recovers, and reports lost when a job was killed before they were written, its trial resuming
// from a later checkpoint. Empty losses without a finite one.
LearningCurve CurveThroughGaps(const std::vector<double>& losses_by_epoch);

// A Gaussian belief about a trial's loss at the last epoch.
struct FinalPrediction {
  double mean = 0.0;
  double variance = 0.0;
};

// Predicts the loss at `final_epoch` from the losses of epochs 1..k (k >= 1, all finite) with two
// estimates, combined by their precisions (inverse variances) when both exist:
//  * Extrapolation of the curve itself (k >= 3): for each of five shapes phi(t) (power laws
//    t^-1/2, t^-1, t^-2 and saturating exponentials exp(-t/2), exp(-t/5)), least squares fits
//    loss(t) = a + b phi(t) with b >= 0 (a constant when the curve rises); the prediction at
//    final_epoch has the fit's predictive variance s^2 (1 + x (X'X)^-1 x'), s^2 the residual
//    variance (at least kMinResidualVariance). The shapes are averaged with weights
//    proportional to RSS^(-1/2) (their likelihoods' k-th roots: on a few epochs the shapes
//    cannot be told apart, and the full likelihood gave one all the weight); the variance adds
//    their spread about the average and (a quarter of the predicted change from the last
//    loss)^2, since a shape that fits the epochs seen may still bend otherwise later. Beside the
//    population's estimate it counts as at most twice as certain (kExtrapolationCertaintyCap):
//    a curve may still take off as other curves did.
//  * The population (>= 2 reference curves, complete curves of other trials): the loss at k plus
//    the references' mean gain from epoch k to final_epoch, with their gains' variance (times
//    1 + 1/n for the estimated mean), at least two reports' variance (ReportVariance): a gain
//    is the difference of two reports, however alike a few references happen to be.
// With neither (k < 3 and fewer than 2 references), the last loss with a standard deviation of
// the larger of the change since epoch 1 and 5% of the last loss's magnitude (at least 1e-3).
// At or past final_epoch the prediction is that epoch's loss with variance 0.
class CurvePredictor {
 public:
  explicit CurvePredictor(int64_t final_epoch);

  // A complete curve: at least final_epoch losses, all finite (others are ignored).
  void AddReference(const std::vector<double>& losses);
  // The same, ignoring a curve whose first epochs were not reported.
  void AddReference(const LearningCurve& curve);
  int64_t references() const { return references_; }
  // The variance of one report about its curve's trend: the references' second differences
  // loss(t+1) - 2 loss(t) + loss(t-1) in the second half of their epochs, where the trend is
  // nearly straight, have the variance 6 s^2 for reports that scatter with variance s^2 (a
  // validation metric measured on a finite set). 0 without references or below 3 epochs.
  double ReportVariance() const;

  FinalPrediction Predict(const std::vector<double>& losses) const;
  // The same, given Extrapolate(losses, final_epoch()) computed before (the costly part, which
  // depends on the curve alone: callers that predict often keep it per curve).
  FinalPrediction Predict(const std::vector<double>& losses,
                          const std::optional<FinalPrediction>& extrapolation) const;

  // The curve's own extrapolation to `final_epoch` (the first estimate above), or nullopt below
  // 3 losses or at or past final_epoch.
  static std::optional<FinalPrediction> Extrapolate(const std::vector<double>& losses,
                                                    int64_t final_epoch);
  // The same, fitted on the epochs from `curve.first_reported` on (nullopt below 3 of them).
  static std::optional<FinalPrediction> Extrapolate(const LearningCurve& curve,
                                                    int64_t final_epoch);

  int64_t final_epoch() const { return final_epoch_; }

 private:
  int64_t final_epoch_;
  int64_t references_ = 0;
  // Per epoch k = 1 .. final_epoch - 1: the sum and sum of squares of the references' gains
  // loss(final_epoch) - loss(k).
  std::vector<double> gain_sum_;
  std::vector<double> gain_square_sum_;
  // The sum of the references' squared second differences in their second half, and their count.
  double second_difference_square_sum_ = 0.0;
  int64_t second_differences_ = 0;
};

// The probability that a loss drawn from `prediction` is below `best`.
double ProbabilityOfImprovement(const FinalPrediction& prediction, double best);

}  // namespace hpo
