// The GP searcher's acquisition search (core/src/search/acquisition_search.cpp): the candidate it
// returns is a local maximum of the log expected improvement along every continuous input (the
// gradient ascent) and over every value of each discrete input (the coordinate search).

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <Eigen/Core>

#include "../../core/src/search/acquisition_search.hpp"
#include "../../core/src/search/gaussian_process.hpp"
#include "../../core/src/search/gp_inputs.hpp"
#include "../../core/src/search/model_space.hpp"

namespace hpo {
namespace {

ModelDimension Continuous() {
  ModelDimension dimension;
  dimension.kind = ModelDimension::Kind::kNumeric;
  dimension.high = 1.0;
  return dimension;
}

ModelDimension Categorical(int values) {
  ModelDimension dimension;
  dimension.kind = ModelDimension::Kind::kCategorical;
  dimension.high = values - 1;
  return dimension;
}

double LogEi(const GaussianProcess& process, const Eigen::VectorXd& inputs, double best) {
  Eigen::VectorXd mean, variance;
  process.Predict(inputs.transpose(), &mean, &variance);
  return LogExpectedImprovement(mean(0), variance(0), best);
}

// A process fitted on `count` random points of `f` over `space`, and the best value seen.
struct Fitted {
  Eigen::MatrixXd points;
  Eigen::VectorXd values;
  double best = 0.0;
};

template <typename Function>
Fitted FitOn(const InputSpace& space, int count, Function f) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Fitted fitted{Eigen::MatrixXd(count, space.size()), Eigen::VectorXd(count), 0.0};
  for (Eigen::Index i = 0; i < count; ++i) {
    for (Eigen::Index input = 0; input < space.size(); ++input)
      fitted.points(i, input) = space.Snap(input, uniform(rng));
    fitted.values(i) = f(fitted.points.row(i).transpose());
  }
  fitted.best = fitted.values.minCoeff();
  return fitted;
}

TEST(AcquisitionSearchTest, TheCandidateIsALocalMaximumAlongEveryContinuousInput) {
  const std::vector<ModelDimension> dimensions(6, Continuous());
  const InputSpace space(dimensions);
  const Eigen::VectorXd centre =
      (Eigen::VectorXd(6) << 0.31, 0.72, 0.45, 0.58, 0.27, 0.66).finished();
  const Fitted fitted =
      FitOn(space, 30, [&](const Eigen::VectorXd& x) { return (x - centre).squaredNorm(); });
  const GaussianProcess process(fitted.points, fitted.values, fitted.points, fitted.values,
                                space.categorical);
  const std::vector<ParameterSpec> parameters(6);
  const Absence absence{parameters, dimensions, false};
  const Eigen::VectorXd chosen = BestCandidate(process, space, absence, {}, 5, fitted.best);
  const double score = LogEi(process, chosen, fitted.best);
  for (Eigen::Index input = 0; input < 6; ++input) {
    for (const double step : {-1e-3, 1e-3}) {
      Eigen::VectorXd moved = chosen;
      moved(input) = std::clamp(moved(input) + step, 0.0, 1.0);
      EXPECT_LE(LogEi(process, moved, fitted.best), score + 1e-9)
          << "input " << input << " moved by " << step << " from " << chosen.transpose();
    }
  }
}

TEST(AcquisitionSearchTest, NoOtherValueOfADiscreteInputScoresHigher) {
  // Six categoricals of 40 values (one value of each is best) and one continuous input.
  std::vector<ModelDimension> dimensions(6, Categorical(40));
  dimensions.push_back(Continuous());
  const InputSpace space(dimensions);
  const double targets[6] = {7, 22, 10, 35, 3, 18};
  const Fitted fitted = FitOn(space, 60, [&](const Eigen::VectorXd& x) {
    double value = (x(6) - 0.5) * (x(6) - 0.5);
    for (int j = 0; j < 6; ++j) value += x(j) == targets[j] ? 0.0 : 1.0;
    return value;
  });
  const GaussianProcess process(fitted.points, fitted.values, fitted.points, fitted.values,
                                space.categorical);
  const std::vector<ParameterSpec> parameters(7);
  const Absence absence{parameters, dimensions, false};
  const Eigen::VectorXd chosen = BestCandidate(process, space, absence, {}, 5, fitted.best);
  const double score = LogEi(process, chosen, fitted.best);
  for (Eigen::Index input = 0; input < 6; ++input) {
    for (int value = 0; value < 40; ++value) {
      Eigen::VectorXd changed = chosen;
      changed(input) = value;
      EXPECT_LE(LogEi(process, changed, fitted.best), score + 1e-9)
          << "input " << input << " at " << value << " from " << chosen.transpose();
    }
  }
}

}  // namespace
}  // namespace hpo
