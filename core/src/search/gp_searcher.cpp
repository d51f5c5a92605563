#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <utility>

#include "common/seeding.hpp"
#include "conditions.hpp"
#include "gaussian.hpp"
#include "gaussian_process.hpp"
#include "parzen_estimator.hpp"
#include "searchers.hpp"
#include "sobol.hpp"

namespace hpo {

namespace {

using DataPoint = TrialHistory::DataPoint;

constexpr uint64_t kGpPurpose = 0x6770ULL;  // "gp"
constexpr char kGpStateTag[] = "hpo-gp-state/v1";
constexpr size_t kMaxFitPoints = 200;
constexpr int kSobolCandidates = 1024;
constexpr int kLocalRounds = 4;
constexpr int kLocalCentres = 4;
constexpr int kPerturbationsPerCentre = 64;
constexpr double kFirstPerturbationSigma = 0.1;
constexpr double kCategoryChangeProbability = 0.2;
// The model input of an absent (inactive) parameter: one unit below the unit cube, so that an
// absent numeric input is at least 1 from every present value and an absent categorical one is a
// category of its own (distance 1 to every value).
constexpr double kAbsentInput = -1.0;

// The model inputs: the parameters that are not fixed, how each is scaled and snapped.
struct InputSpace {
  std::vector<size_t> parameter_index;  // per input
  std::vector<bool> categorical;        // per input
  std::vector<double> grid_steps;       // per input: grid points - 1 for grids, else 0
  std::vector<double> categories;       // per input: categorical's value count, else 0

  explicit InputSpace(const std::vector<ModelDimension>& dimensions) {
    for (size_t i = 0; i < dimensions.size(); ++i) {
      const ModelDimension& dimension = dimensions[i];
      if (dimension.kind == ModelDimension::Kind::kFixed) continue;
      parameter_index.push_back(i);
      const bool is_categorical = dimension.kind == ModelDimension::Kind::kCategorical;
      categorical.push_back(is_categorical);
      grid_steps.push_back(!is_categorical && dimension.step > 0.0 ? dimension.high : 0.0);
      categories.push_back(is_categorical ? dimension.high + 1.0 : 0.0);
    }
  }
  Eigen::Index size() const { return static_cast<Eigen::Index>(parameter_index.size()); }

  // The model input of a model coordinate and back.
  double Scale(const ModelDimension& dimension, Eigen::Index input, double coordinate) const {
    if (categorical[input]) return coordinate;
    return (coordinate - dimension.low) / (dimension.high - dimension.low);
  }
  double Unscale(const ModelDimension& dimension, Eigen::Index input, double value) const {
    if (categorical[input]) return value;
    return dimension.low + value * (dimension.high - dimension.low);
  }
  // `u` in [0, 1] moved onto the input's grid; categoricals take the u-th category.
  double Snap(Eigen::Index input, double u) const {
    u = std::clamp(u, 0.0, 1.0);
    if (categorical[input])
      return std::min(std::floor(u * categories[input]), categories[input] - 1);
    if (grid_steps[input] > 0.0) return std::round(u * grid_steps[input]) / grid_steps[input];
    return u;
  }
};

// The assignment of `chosen`, the model inputs of a candidate: every parameter, the fixed ones at
// their one value.
Assignment ToAssignment(const std::vector<ParameterSpec>& parameters,
                        const std::vector<ModelDimension>& dimensions, const InputSpace& space,
                        const Eigen::VectorXd& chosen) {
  Assignment assignment;
  Eigen::Index input = 0;
  for (size_t i = 0; i < parameters.size(); ++i) {
    double coordinate = 0.0;
    if (dimensions[i].kind != ModelDimension::Kind::kFixed) {
      coordinate = space.Unscale(dimensions[i], input, chosen(input));
      ++input;
    }
    assignment.push_back(
        {parameters[i].name, DecodeValue(parameters[i], dimensions[i], coordinate)});
  }
  return assignment;
}

// With conditions, what a candidate's inputs become before it is scored: the inputs of the
// parameters that are absent for its values kAbsentInput, the others snapped onto their grids (an
// input that was absent in the candidate it was perturbed from becomes present at the cube's
// edge), so that candidates look like the data the process was fitted on.
struct Absence {
  const std::vector<ParameterSpec>& parameters;
  const std::vector<ModelDimension>& dimensions;
  bool conditional = false;

  void Impute(const InputSpace& space, Eigen::MatrixXd* candidates) const {
    if (!conditional) return;
    for (Eigen::Index row = 0; row < candidates->rows(); ++row) {
      const Eigen::VectorXd inputs = candidates->row(row).transpose();
      const std::vector<bool> active =
          ActiveParameters(parameters, ToAssignment(parameters, dimensions, space, inputs));
      for (Eigen::Index input = 0; input < space.size(); ++input) {
        double& value = (*candidates)(row, input);
        value = active[space.parameter_index[input]] ? space.Snap(input, value) : kAbsentInput;
      }
    }
  }
};

// Row indices of the `count` best-scoring rows of `scores` (ties: lower index first).
std::vector<Eigen::Index> TopRows(const Eigen::VectorXd& scores, size_t count) {
  std::vector<Eigen::Index> order(static_cast<size_t>(scores.size()));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  count = std::min(count, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&scores](Eigen::Index a, Eigen::Index b) {
                      if (scores(a) != scores(b)) return scores(a) > scores(b);
                      return a < b;
                    });
  order.resize(count);
  return order;
}

// Scores every row of `candidates` by log expected improvement below `best`.
Eigen::VectorXd Acquisition(const GaussianProcess& process, const Eigen::MatrixXd& candidates,
                            double best) {
  Eigen::VectorXd mean;
  Eigen::VectorXd variance;
  process.Predict(candidates, &mean, &variance);
  Eigen::VectorXd scores(candidates.rows());
  for (Eigen::Index i = 0; i < candidates.rows(); ++i) {
    scores(i) = LogExpectedImprovement(mean(i), variance(i), best);
  }
  return scores;
}

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
    for (Eigen::Index input = 0; input < space.size(); ++input) {
      const size_t parameter = space.parameter_index[input];
      const double coordinate = (*point.coordinates)[parameter];
      points(row, input) = std::isnan(coordinate)
                               ? kAbsentInput
                               : space.Scale(dimensions[parameter], input, coordinate);
    }
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

// The first candidates, on the inputs' grids: scrambled Sobol' points, or uniform ones from `rng`
// beyond the dimensions Sobol' supports.
Eigen::MatrixXd FirstCandidates(const InputSpace& space, uint64_t trial_seed,
                                std::mt19937_64& rng) {
  Eigen::MatrixXd candidates(kSobolCandidates, space.size());
  if (space.size() <= ScrambledSobolSequence::kMaxDimensions) {
    const ScrambledSobolSequence sobol(static_cast<int>(space.size()), true, trial_seed);
    for (Eigen::Index i = 0; i < candidates.rows(); ++i) {
      const std::vector<double> u = sobol.Point(static_cast<uint64_t>(i));
      for (Eigen::Index input = 0; input < space.size(); ++input) {
        candidates(i, input) = space.Snap(input, u[static_cast<size_t>(input)]);
      }
    }
  } else {
    for (Eigen::Index i = 0; i < candidates.rows(); ++i) {
      for (Eigen::Index input = 0; input < space.size(); ++input) {
        candidates(i, input) = space.Snap(input, OpenUnitUniform(rng));
      }
    }
  }
  return candidates;
}

// Each of the `centres` rows of `candidates`, then kPerturbationsPerCentre perturbations of it:
// continuous inputs moved by a normal step of `sigma`, categoricals changed at random with
// kCategoryChangeProbability.
Eigen::MatrixXd Perturbations(const InputSpace& space, const Eigen::MatrixXd& candidates,
                              const std::vector<Eigen::Index>& centres, double sigma,
                              std::mt19937_64& rng) {
  Eigen::MatrixXd next(static_cast<Eigen::Index>(centres.size()) * (kPerturbationsPerCentre + 1),
                       space.size());
  Eigen::Index row = 0;
  for (Eigen::Index centre : centres) {
    next.row(row++) = candidates.row(centre);
    for (int k = 0; k < kPerturbationsPerCentre; ++k, ++row) {
      for (Eigen::Index input = 0; input < space.size(); ++input) {
        const double from = candidates(centre, input);
        if (space.categorical[input]) {
          const bool change = OpenUnitUniform(rng) < kCategoryChangeProbability;
          next(row, input) = change ? space.Snap(input, OpenUnitUniform(rng)) : from;
        } else {
          next(row, input) =
              space.Snap(input, from + sigma * InverseNormalCdf(OpenUnitUniform(rng)));
        }
      }
    }
  }
  return next;
}

// The model inputs of the candidate of highest log expected improvement below `best`, searched
// among the first candidates, then over kLocalRounds rounds of perturbations around the best ones,
// each round's steps half the last's.
Eigen::VectorXd BestCandidate(const GaussianProcess& process, const InputSpace& space,
                              const Absence& absence, uint64_t trial_seed, double best) {
  std::mt19937_64 rng(trial_seed);
  Eigen::MatrixXd candidates = FirstCandidates(space, trial_seed, rng);
  absence.Impute(space, &candidates);
  Eigen::VectorXd scores = Acquisition(process, candidates, best);
  double sigma = kFirstPerturbationSigma;
  for (int round = 0; round < kLocalRounds; ++round, sigma *= 0.5) {
    candidates = Perturbations(space, candidates, TopRows(scores, kLocalCentres), sigma, rng);
    absence.Impute(space, &candidates);
    scores = Acquisition(process, candidates, best);
  }
  return candidates.row(TopRows(scores, 1).front()).transpose();
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
  const Eigen::VectorXd chosen = BestCandidate(process, space, absence, trial_seed, losses.best);
  return ToAssignment(history().parameters(), dimensions, space, chosen);
}

}  // namespace hpo
