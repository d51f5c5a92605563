#include "curve_prediction.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "gaussian.hpp"

namespace hpo {

namespace {

constexpr int64_t kMinExtrapolationPoints = 3;
constexpr int64_t kMinReferences = 2;
constexpr double kMinResidualVariance = 1e-8;
// A curve's own extrapolation counts as at most this many times as certain as the population's
// estimate (its variance at least the population's over this). Leave-one-out on the replay's 96
// long Fashion-MNIST curves (hpo_bench_asha_replay --calibration), 3 epochs seen: without the cap
// rms z 3.8 and 78 % of finals in the 90 % interval, since curves that stay flat and then take off
// were extrapolated as flat, almost surely; with 2, 1.5 and 86.5 % (1: 1.3 and 88.5 %, but a
// noise-free curve's exact fit then counts only half). The outcome sweep's curves do not change,
// nor do the replay's medians (13-18 of its 200 seeds change at 0.87).
constexpr double kExtrapolationCertaintyCap = 2.0;
constexpr double kExtrapolatedShare = 0.25;
constexpr double kFallbackRelativeSpread = 0.05;
constexpr double kFallbackMinSpread = 1e-3;

using Shape = std::function<double(double)>;

const std::array<Shape, 5>& Shapes() {
  static const std::array<Shape, 5> shapes = {
      [](double t) { return 1.0 / std::sqrt(t); }, [](double t) { return 1.0 / t; },
      [](double t) { return 1.0 / (t * t); },      [](double t) { return std::exp(-t / 2.0); },
      [](double t) { return std::exp(-t / 5.0); },
  };
  return shapes;
}

// One shape's least-squares fit of loss(t) = a + b phi(t), b >= 0, and its prediction at `final`.
struct ShapeFit {
  double prediction = 0.0;
  double variance = 0.0;
  double residual_sum = 0.0;
};

// Fits the losses of epochs first + 1 .. losses.size().
ShapeFit FitShape(const Shape& shape, const std::vector<double>& losses, size_t first,
                  double final_epoch) {
  const auto n = static_cast<double>(losses.size() - first);
  double sum_x = 0.0, sum_y = 0.0, sum_xx = 0.0, sum_xy = 0.0;
  for (size_t i = first; i < losses.size(); ++i) {
    const double x = shape(static_cast<double>(i + 1));
    sum_x += x;
    sum_y += losses[i];
    sum_xx += x * x;
    sum_xy += x * losses[i];
  }
  const double mean_x = sum_x / n;
  const double mean_y = sum_y / n;
  const double spread_xx = sum_xx - n * mean_x * mean_x;
  double slope = spread_xx > 0.0 ? (sum_xy - n * mean_x * mean_y) / spread_xx : 0.0;
  slope = std::max(slope, 0.0);
  const double intercept = mean_y - slope * mean_x;
  ShapeFit fit;
  for (size_t i = first; i < losses.size(); ++i) {
    const double residual = losses[i] - (intercept + slope * shape(static_cast<double>(i + 1)));
    fit.residual_sum += residual * residual;
  }
  const double x_final = shape(final_epoch);
  fit.prediction = intercept + slope * x_final;
  const double residual_variance = std::max(fit.residual_sum / (n - 2.0), kMinResidualVariance);
  // The predictive variance of a new observation at x_final for simple linear regression.
  const double leverage =
      1.0 / n + (spread_xx > 0.0 ? (x_final - mean_x) * (x_final - mean_x) / spread_xx : 0.0);
  fit.variance = residual_variance * (1.0 + leverage);
  return fit;
}

// The shape-averaged extrapolation to `final_epoch` of the losses of epochs first + 1 ..
// losses.size() (see the header).
FinalPrediction AverageOfShapes(const std::vector<double>& losses, size_t first,
                                int64_t final_epoch) {
  std::array<ShapeFit, 5> fits;
  std::array<double, 5> log_weights{};
  const auto n = static_cast<double>(losses.size() - first);
  for (size_t s = 0; s < fits.size(); ++s) {
    fits[s] = FitShape(Shapes()[s], losses, first, static_cast<double>(final_epoch));
    log_weights[s] = -0.5 * std::log(std::max(fits[s].residual_sum / n, 1e-300));
  }
  const double top = *std::max_element(log_weights.begin(), log_weights.end());
  double total = 0.0, mean = 0.0;
  std::array<double, 5> weights{};
  for (size_t s = 0; s < fits.size(); ++s) {
    weights[s] = std::exp(log_weights[s] - top);
    total += weights[s];
    mean += weights[s] * fits[s].prediction;
  }
  mean /= total;
  const double extrapolated = kExtrapolatedShare * (mean - losses.back());
  double variance = extrapolated * extrapolated;
  for (size_t s = 0; s < fits.size(); ++s) {
    const double offset = fits[s].prediction - mean;
    variance += weights[s] / total * (fits[s].variance + offset * offset);
  }
  return {mean, variance};
}

}  // namespace

CurvePredictor::CurvePredictor(int64_t final_epoch)
    : final_epoch_(std::max<int64_t>(final_epoch, 1)),
      gain_sum_(static_cast<size_t>(final_epoch_ - 1), 0.0),
      gain_square_sum_(static_cast<size_t>(final_epoch_ - 1), 0.0) {}

void CurvePredictor::AddReference(const std::vector<double>& losses) {
  if (static_cast<int64_t>(losses.size()) < final_epoch_) return;
  for (int64_t k = 0; k < final_epoch_; ++k) {
    if (!std::isfinite(losses[static_cast<size_t>(k)])) return;
  }
  const double final_loss = losses[static_cast<size_t>(final_epoch_ - 1)];
  for (size_t k = 0; k + 1 < static_cast<size_t>(final_epoch_); ++k) {
    const double gain = final_loss - losses[k];
    gain_sum_[k] += gain;
    gain_square_sum_[k] += gain * gain;
  }
  for (int64_t t = std::max<int64_t>(final_epoch_ / 2, 1); t + 1 < final_epoch_; ++t) {
    const auto at = static_cast<size_t>(t);
    const double second_difference = losses[at + 1] - 2.0 * losses[at] + losses[at - 1];
    second_difference_square_sum_ += second_difference * second_difference;
    ++second_differences_;
  }
  ++references_;
}

double CurvePredictor::ReportVariance() const {
  if (second_differences_ == 0) return 0.0;
  return second_difference_square_sum_ / (6.0 * static_cast<double>(second_differences_));
}

void CurvePredictor::AddReference(const LearningCurve& curve) {
  if (curve.first_reported == 1) AddReference(curve.losses);
}

std::optional<FinalPrediction> CurvePredictor::Extrapolate(const std::vector<double>& losses,
                                                           int64_t final_epoch) {
  return Extrapolate(LearningCurve{losses, 1}, final_epoch);
}

std::optional<FinalPrediction> CurvePredictor::Extrapolate(const LearningCurve& curve,
                                                           int64_t final_epoch) {
  const auto k = static_cast<int64_t>(curve.losses.size());
  const int64_t first = std::max<int64_t>(curve.first_reported, 1) - 1;
  if (k - first < kMinExtrapolationPoints || k >= final_epoch) return std::nullopt;
  return AverageOfShapes(curve.losses, static_cast<size_t>(first), final_epoch);
}

FinalPrediction CurvePredictor::Predict(const std::vector<double>& losses) const {
  return Predict(losses, Extrapolate(losses, final_epoch_));
}

FinalPrediction CurvePredictor::Predict(const std::vector<double>& losses,
                                        const std::optional<FinalPrediction>& extrapolation) const {
  const auto k = static_cast<int64_t>(losses.size());
  if (k >= final_epoch_) return {losses[static_cast<size_t>(final_epoch_ - 1)], 0.0};
  const double last = losses.back();
  bool have_estimate = false;
  double precision_sum = 0.0;
  double weighted_mean = 0.0;
  auto add = [&](const FinalPrediction& estimate) {
    const double precision = 1.0 / std::max(estimate.variance, kMinResidualVariance);
    precision_sum += precision;
    weighted_mean += precision * estimate.mean;
    have_estimate = true;
  };
  std::optional<FinalPrediction> population;
  if (references_ >= kMinReferences) {
    const auto n = static_cast<double>(references_);
    const size_t index = static_cast<size_t>(k - 1);
    const double mean_gain = gain_sum_[index] / n;
    const double gain_variance =
        std::max((gain_square_sum_[index] - n * mean_gain * mean_gain) / (n - 1.0), 0.0);
    // A gain is the difference of two reports, so its spread over curves is at least two
    // reports' scatter, however alike a few references happen to be (bench/RESULTS.md,
    // 2026-12-01: three curves of one sweep gained alike to 0.0005 from epoch 1).
    population = FinalPrediction{
        last + mean_gain,
        std::max({gain_variance * (1.0 + 1.0 / n), 2.0 * ReportVariance(), kMinResidualVariance})};
  }
  if (extrapolation) {
    // A curve may still take off as other curves did, which no fit of its first epochs foresees.
    const double floor = population ? population->variance / kExtrapolationCertaintyCap : 0.0;
    add({extrapolation->mean, std::max(extrapolation->variance, floor)});
  }
  if (population) add(*population);
  if (!have_estimate) {
    const double spread = std::max({std::abs(last - losses.front()),
                                    kFallbackRelativeSpread * std::abs(last), kFallbackMinSpread});
    return {last, spread * spread};
  }
  return {weighted_mean / precision_sum, 1.0 / precision_sum};
}

LearningCurve CurveThroughGaps(const std::vector<double>& losses_by_epoch) {
  LearningCurve curve;
  std::optional<size_t> previous;  // the index of the last finite loss so far
  for (size_t index = 0; index < losses_by_epoch.size(); ++index) {
    const double loss = losses_by_epoch[index];
    if (!std::isfinite(loss)) continue;
    if (!previous) {
      curve.losses.assign(index + 1, loss);
      curve.first_reported = static_cast<int64_t>(index) + 1;
    } else {
      const double from = losses_by_epoch[*previous];
      const auto span = static_cast<double>(index - *previous);
      for (size_t gap = *previous + 1; gap < index; ++gap) {
        curve.losses.push_back(from + (loss - from) * static_cast<double>(gap - *previous) / span);
      }
      curve.losses.push_back(loss);
    }
    previous = index;
  }
  return curve;
}

double LossOf(Goal goal, double objective) {
  if (std::isnan(objective)) return std::numeric_limits<double>::infinity();
  return goal == Goal::kMaximize ? -objective : objective;
}

double ProbabilityOfImprovement(const FinalPrediction& prediction, double best) {
  if (prediction.variance <= 0.0) return prediction.mean < best ? 1.0 : 0.0;
  return NormalCdf((best - prediction.mean) / std::sqrt(prediction.variance));
}

}  // namespace hpo
