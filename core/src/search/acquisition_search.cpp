#include "acquisition_search.hpp"

#include <LBFGSB.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <numeric>
#include <random>

#include "gaussian.hpp"
#include "parzen_estimator.hpp"
#include "sobol.hpp"

namespace hpo {

namespace {

constexpr int kSobolCandidates = 1024;
constexpr int kLocalRounds = 4;
constexpr int kLocalCentres = 4;
constexpr int kPerturbationsPerCentre = 64;
constexpr int kCoordinateSweeps = 3;
constexpr int kGradientStarts = 4;
constexpr int kGradientIterations = 50;
constexpr double kGradientStep = 1e-5;
constexpr double kMostCoordinateValues = 64;
constexpr double kFirstPerturbationSigma = 0.1;
constexpr double kCategoryChangeProbability = 0.2;

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

// The first candidates, on the inputs' grids: scrambled Sobol' points, or uniform ones from `rng`
// beyond the dimensions Sobol' supports, then `incumbents`.
Eigen::MatrixXd FirstCandidates(const InputSpace& space, uint64_t trial_seed, std::mt19937_64& rng,
                                const std::vector<Eigen::VectorXd>& incumbents) {
  Eigen::MatrixXd candidates(kSobolCandidates + static_cast<Eigen::Index>(incumbents.size()),
                             space.size());
  for (size_t i = 0; i < incumbents.size(); ++i) {
    candidates.row(kSobolCandidates + static_cast<Eigen::Index>(i)) = incumbents[i].transpose();
  }
  if (space.size() <= ScrambledSobolSequence::kMaxDimensions) {
    const ScrambledSobolSequence sobol(static_cast<int>(space.size()), true, trial_seed);
    for (Eigen::Index i = 0; i < kSobolCandidates; ++i) {
      const std::vector<double> u = sobol.Point(static_cast<uint64_t>(i));
      for (Eigen::Index input = 0; input < space.size(); ++input) {
        candidates(i, input) = space.Snap(input, u[static_cast<size_t>(input)]);
      }
    }
  } else {
    for (Eigen::Index i = 0; i < kSobolCandidates; ++i) {
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

// `inputs`, then the copies of it with input `input` at each of its other values, on the inputs'
// grids (an input of more than kMostCoordinateValues values, or a continuous one: none).
Eigen::MatrixXd CoordinateValues(const InputSpace& space, const Eigen::VectorXd& inputs,
                                 Eigen::Index input) {
  const double values =
      space.categorical[input] ? space.categories[input] : space.grid_steps[input] + 1.0;
  if (values < 2.0 || values > kMostCoordinateValues) return inputs.transpose();
  const auto count = static_cast<Eigen::Index>(values);
  Eigen::MatrixXd variants = inputs.transpose().replicate(count + 1, 1);
  for (Eigen::Index k = 0; k < count; ++k) {
    const double u =
        space.categorical[input] ? static_cast<double>(k) : static_cast<double>(k) / (values - 1.0);
    variants(k + 1, input) = space.categorical[input] ? u : space.Snap(input, u);
  }
  return variants;
}

// From `start` (scored `score`), each categorical or grid input set in turn to its best value with
// the others held, for at most kCoordinateSweeps sweeps or until a sweep changes nothing: the
// exhaustive search of discrete inputs that random perturbations only sample.
Eigen::VectorXd CoordinateSearch(const GaussianProcess& process, const InputSpace& space,
                                 const Absence& absence, Eigen::VectorXd start, double score,
                                 double best) {
  for (int sweep = 0; sweep < kCoordinateSweeps; ++sweep) {
    bool changed = false;
    for (Eigen::Index input = 0; input < space.size(); ++input) {
      Eigen::MatrixXd variants = CoordinateValues(space, start, input);
      if (variants.rows() == 1) continue;
      absence.Impute(space, &variants);
      const Eigen::VectorXd scores = Acquisition(process, variants, best);
      const Eigen::Index top = TopRows(scores, 1).front();
      if (scores(top) > score) {
        start = variants.row(top).transpose();
        score = scores(top);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return start;
}

// Minus the log expected improvement below `best` as a function of the continuous inputs that are
// present in `start` (the others held), with its central-difference gradient, for LBFGSpp.
class NegativeAcquisition {
 public:
  NegativeAcquisition(const GaussianProcess& process, const InputSpace& space,
                      const Eigen::VectorXd& start, double best)
      : process_(process), start_(start), best_(best) {
    for (Eigen::Index input = 0; input < space.size(); ++input) {
      if (!space.categorical[input] && space.grid_steps[input] == 0.0 && start(input) >= 0.0)
        free_.push_back(input);
    }
  }
  Eigen::Index size() const { return static_cast<Eigen::Index>(free_.size()); }
  Eigen::VectorXd FreeOf(const Eigen::VectorXd& inputs) const { return inputs(free_); }
  Eigen::VectorXd InputsAt(const Eigen::VectorXd& x) const {
    Eigen::VectorXd inputs = start_;
    inputs(free_) = x;
    return inputs;
  }

  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& gradient) {
    const Eigen::Index n = size();
    Eigen::MatrixXd points = InputsAt(x).transpose().replicate(2 * n + 1, 1);
    for (Eigen::Index k = 0; k < n; ++k) {
      points(1 + 2 * k, free_[k]) += kGradientStep;
      points(2 + 2 * k, free_[k]) -= kGradientStep;
    }
    const Eigen::VectorXd scores = Acquisition(process_, points, best_);
    for (Eigen::Index k = 0; k < n; ++k)
      gradient(k) = -(scores(1 + 2 * k) - scores(2 + 2 * k)) / (2.0 * kGradientStep);
    return -scores(0);
  }

 private:
  const GaussianProcess& process_;
  Eigen::VectorXd start_;
  double best_;
  std::vector<Eigen::Index> free_;
};

// `start` with its present continuous inputs moved by L-BFGS-B within the unit cube to a local
// maximum of the acquisition (the discrete inputs held); `start` itself where that fails.
Eigen::VectorXd GradientAscent(const GaussianProcess& process, const InputSpace& space,
                               const Eigen::VectorXd& start, double best) {
  NegativeAcquisition objective(process, space, start, best);
  if (objective.size() == 0) return start;
  LBFGSpp::LBFGSBParam<double> options;
  options.max_iterations = kGradientIterations;
  options.epsilon = 1e-6;
  LBFGSpp::LBFGSBSolver<double> solver(options);
  Eigen::VectorXd x = objective.FreeOf(start);
  const Eigen::VectorXd lower = Eigen::VectorXd::Zero(objective.size());
  const Eigen::VectorXd upper = Eigen::VectorXd::Ones(objective.size());
  double value = 0.0;
  try {
    solver.minimize(objective, x, value, lower, upper);
  } catch (const std::exception&) {
    return start;
  }
  return objective.InputsAt(x);
}

}  // namespace

Eigen::VectorXd BestCandidate(const GaussianProcess& process, const InputSpace& space,
                              const Absence& absence,
                              const std::vector<Eigen::VectorXd>& incumbents, uint64_t trial_seed,
                              double best) {
  std::mt19937_64 rng(trial_seed);
  Eigen::MatrixXd candidates = FirstCandidates(space, trial_seed, rng, incumbents);
  absence.Impute(space, &candidates);
  Eigen::VectorXd scores = Acquisition(process, candidates, best);
  double sigma = kFirstPerturbationSigma;
  for (int round = 0; round < kLocalRounds; ++round, sigma *= 0.5) {
    // An observed point's own expected improvement is small (its variance is), so it would rarely
    // be among the best; the first round perturbs around it anyway.
    std::vector<Eigen::Index> centres = TopRows(scores, kLocalCentres);
    if (round == 0) {
      for (size_t i = 0; i < incumbents.size(); ++i) {
        const Eigen::Index row = kSobolCandidates + static_cast<Eigen::Index>(i);
        if (std::find(centres.begin(), centres.end(), row) == centres.end()) centres.push_back(row);
      }
    }
    candidates = Perturbations(space, candidates, centres, sigma, rng);
    absence.Impute(space, &candidates);
    scores = Acquisition(process, candidates, best);
  }
  // From each of the best kGradientStarts: gradient ascent on the continuous inputs, then the
  // coordinate search of the discrete ones.
  const std::vector<Eigen::Index> starts = TopRows(scores, kGradientStarts);
  Eigen::MatrixXd refined(static_cast<Eigen::Index>(starts.size()), space.size());
  for (size_t i = 0; i < starts.size(); ++i) {
    refined.row(static_cast<Eigen::Index>(i)) =
        GradientAscent(process, space, candidates.row(starts[i]).transpose(), best).transpose();
  }
  absence.Impute(space, &refined);
  const Eigen::VectorXd refined_scores = Acquisition(process, refined, best);
  const Eigen::Index top = TopRows(refined_scores, 1).front();
  return CoordinateSearch(process, space, absence, refined.row(top).transpose(),
                          refined_scores(top), best);
}

}  // namespace hpo
