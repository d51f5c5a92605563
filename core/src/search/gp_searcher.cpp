#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "acquisition_search.hpp"
#include "common/seeding.hpp"
#include "conditions.hpp"
#include "gaussian_process.hpp"
#include "gp_inputs.hpp"
#include "searchers.hpp"

namespace hpo {

namespace {

using DataPoint = TrialHistory::DataPoint;

constexpr uint64_t kGpPurpose = 0x6770ULL;  // "gp"
constexpr char kGpStateTag[] = "hpo-gp-state/v1";
constexpr size_t kMaxFitPoints = 200;
constexpr size_t kObservedCentres = 2;
// The losses the model fits are the finite ones at the fidelity (the highest epoch observed), or
// every finite one when `any_epoch` (predicted finals, whatever epoch they are from); with none,
// worst stays -infinity.
struct FidelityLosses {
  bool any_epoch = false;
  int64_t fidelity = std::numeric_limits<int64_t>::min();
  double worst = -std::numeric_limits<double>::infinity();
  double best = std::numeric_limits<double>::infinity();

  bool Modelled(const DataPoint& point) const {
    return (any_epoch || point.epoch == fidelity) && std::isfinite(point.loss);
  }
};

// The fidelity of `observed` and the worst and best of its finite losses.
FidelityLosses LossesAtFidelity(const std::vector<DataPoint>& observed, bool any_epoch) {
  FidelityLosses losses;
  losses.any_epoch = any_epoch;
  for (const DataPoint& point : observed) losses.fidelity = std::max(losses.fidelity, point.epoch);
  for (const DataPoint& point : observed) {
    if (!losses.Modelled(point)) continue;
    losses.worst = std::max(losses.worst, point.loss);
    losses.best = std::min(losses.best, point.loss);
  }
  return losses;
}

// The model inputs of an observed or pending point (kAbsentInput for its absent parameters).
Eigen::VectorXd InputsOf(const InputSpace& space, const std::vector<ModelDimension>& dimensions,
                         const DataPoint& point) {
  Eigen::VectorXd inputs(space.size());
  for (Eigen::Index input = 0; input < space.size(); ++input) {
    const size_t parameter = space.parameter_index[input];
    const double coordinate = (*point.coordinates)[parameter];
    inputs(input) = std::isnan(coordinate) ? kAbsentInput
                                           : space.Scale(dimensions[parameter], input, coordinate);
  }
  return inputs;
}

// The model inputs of the kObservedCentres observed points of lowest loss at the fidelity, best
// first: the acquisition's optimum is most often near them, so its local search starts there too.
std::vector<Eigen::VectorXd> BestObservedInputs(const InputSpace& space,
                                                const std::vector<ModelDimension>& dimensions,
                                                const std::vector<DataPoint>& observed,
                                                const FidelityLosses& losses) {
  std::vector<const DataPoint*> modelled;
  for (const DataPoint& point : observed) {
    if (losses.Modelled(point)) modelled.push_back(&point);
  }
  const size_t count = std::min(kObservedCentres, modelled.size());
  std::partial_sort(modelled.begin(), modelled.begin() + static_cast<std::ptrdiff_t>(count),
                    modelled.end(),
                    [](const DataPoint* a, const DataPoint* b) { return a->loss < b->loss; });
  std::vector<Eigen::VectorXd> inputs;
  for (size_t i = 0; i < count; ++i) inputs.push_back(InputsOf(space, dimensions, *modelled[i]));
  return inputs;
}

// The process fitted on (at most kMaxFitPoints, evenly strided) observed points and conditioned on
// every point, observed then pending. Values: the fidelity's finite losses, each with its own
// variance (predicted finals; 0 otherwise) as known noise; the rest (pending trials included) at
// the worst of those.
GaussianProcess FitProcess(const InputSpace& space, const std::vector<ModelDimension>& dimensions,
                           const std::vector<DataPoint>& observed,
                           const std::vector<DataPoint>& pending, const FidelityLosses& losses) {
  std::vector<const DataPoint*> rows;  // observed, then pending (each by trial id)
  for (const DataPoint& point : observed) rows.push_back(&point);
  const size_t observed_rows = rows.size();
  for (const DataPoint& point : pending) rows.push_back(&point);

  Eigen::MatrixXd points(static_cast<Eigen::Index>(rows.size()), space.size());
  Eigen::VectorXd values(points.rows());
  Eigen::VectorXd known_noise = Eigen::VectorXd::Zero(points.rows());
  for (size_t r = 0; r < rows.size(); ++r) {
    const DataPoint& point = *rows[r];
    const Eigen::Index row = static_cast<Eigen::Index>(r);
    points.row(row) = InputsOf(space, dimensions, point).transpose();
    const bool modelled = r < observed_rows && losses.Modelled(point);
    values(row) = modelled ? point.loss : losses.worst;
    if (modelled) known_noise(row) = point.variance;
  }
  const size_t stride = (observed_rows + kMaxFitPoints - 1) / kMaxFitPoints;
  std::vector<Eigen::Index> fit_rows;
  for (size_t r = 0; r < observed_rows; r += stride)
    fit_rows.push_back(static_cast<Eigen::Index>(r));
  const Eigen::MatrixXd fit_points = points(fit_rows, Eigen::all);
  const Eigen::VectorXd fit_values = values(fit_rows);
  const Eigen::VectorXd fit_noise = known_noise(fit_rows);
  return GaussianProcess(fit_points, fit_values, points, values, space.categorical, fit_noise,
                         known_noise);
}

}  // namespace

Status GpSearcher::Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  HPO_RETURN_IF_ERROR(CheckStartupTrials(config));
  searcher->reset(new GpSearcher(config));
  return Status::Ok();
}

GpSearcher::GpSearcher(const SweepConfig& config)
    : ModelBasedSearcher(config, kGpStateTag, PredictsFinals(config) ? "curves" : "gp", "GP"),
      predicts_finals_(PredictsFinals(config)) {}

bool GpSearcher::PredictsFinals(const SweepConfig& config) {
  return config.search.model == BayesModel::kCurves;
}

std::optional<Assignment> GpSearcher::ModelSuggestion(int64_t trial_id,
                                                      std::vector<DataPoint> observed,
                                                      std::vector<DataPoint> pending) const {
  const std::vector<ModelDimension>& dimensions = history().dimensions();
  const InputSpace space(dimensions);
  if (space.size() == 0) return std::nullopt;  // nothing to model: every parameter is fixed
  const FidelityLosses losses = LossesAtFidelity(observed, predicts_finals_);
  if (!std::isfinite(losses.worst)) return std::nullopt;
  const GaussianProcess process = FitProcess(space, dimensions, observed, pending, losses);
  const uint64_t trial_seed = DeriveSeed(seed(), kGpPurpose, static_cast<uint64_t>(trial_id));
  const Absence absence{history().parameters(), dimensions, HasConditions(history().parameters())};
  const Eigen::VectorXd chosen = BestCandidate(
      process, space, absence, BestObservedInputs(space, dimensions, observed, losses), trial_seed,
      losses.best);
  return ToAssignment(history().parameters(), dimensions, space, chosen);
}

}  // namespace hpo
