// The GP searcher's acquisition search (core/src/search/acquisition_search.cpp): the candidate it
// returns is a local maximum of the log expected improvement along every continuous input (the
// gradient ascent) and over every value of each discrete input (the coordinate search).

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
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

// A process fitted on `count` random points of `f` over `dimensions` (seed 11) and the candidate
// BestCandidate chose under it (seed 5, no conditions, no incumbents).
class Searched {
 public:
  template <typename Function>
  Searched(const std::vector<ModelDimension>& dimensions, int count, Function f)
      : space_(dimensions), points_(count, space_.size()), values_(count) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (Eigen::Index i = 0; i < count; ++i) {
      for (Eigen::Index input = 0; input < space_.size(); ++input)
        points_(i, input) = space_.Snap(input, uniform(rng));
      values_(i) = f(points_.row(i).transpose());
    }
    best_ = values_.minCoeff();
    process_.emplace(points_, values_, points_, values_, space_.categorical);
    const std::vector<ParameterSpec> parameters(dimensions.size());
    const Absence absence{parameters, dimensions, false};
    chosen_ = BestCandidate(*process_, space_, absence, {}, 5, best_);
    score_ = Score(chosen_);
  }

  const Eigen::VectorXd& chosen() const { return chosen_; }
  double score() const { return score_; }
  // The log expected improvement of `inputs` below the best value seen.
  double Score(const Eigen::VectorXd& inputs) const {
    Eigen::VectorXd mean, variance;
    process_->Predict(inputs.transpose(), &mean, &variance);
    return LogExpectedImprovement(mean(0), variance(0), best_);
  }

 private:
  InputSpace space_;
  Eigen::MatrixXd points_;
  Eigen::VectorXd values_;
  double best_ = 0.0;
  std::optional<GaussianProcess> process_;
  Eigen::VectorXd chosen_;
  double score_ = 0.0;
};

TEST(AcquisitionSearchTest, TheCandidateIsALocalMaximumAlongEveryContinuousInput) {
  const Eigen::VectorXd centre =
      (Eigen::VectorXd(6) << 0.31, 0.72, 0.45, 0.58, 0.27, 0.66).finished();
  const Searched searched(std::vector<ModelDimension>(6, Continuous()), 30,
                          [&](const Eigen::VectorXd& x) { return (x - centre).squaredNorm(); });
  for (Eigen::Index input = 0; input < 6; ++input) {
    for (const double step : {-1e-3, 1e-3}) {
      Eigen::VectorXd moved = searched.chosen();
      moved(input) = std::clamp(moved(input) + step, 0.0, 1.0);
      EXPECT_LE(searched.Score(moved), searched.score() + 1e-9)
          << "input " << input << " moved by " << step << " from " << searched.chosen().transpose();
    }
  }
}

TEST(AcquisitionSearchTest, NoOtherValueOfADiscreteInputScoresHigher) {
  // Six categoricals of 40 values (one value of each is best) and one continuous input.
  std::vector<ModelDimension> dimensions(6, Categorical(40));
  dimensions.push_back(Continuous());
  const double targets[6] = {7, 22, 10, 35, 3, 18};
  const Searched searched(dimensions, 60, [&](const Eigen::VectorXd& x) {
    double value = (x(6) - 0.5) * (x(6) - 0.5);
    for (int j = 0; j < 6; ++j) value += x(j) == targets[j] ? 0.0 : 1.0;
    return value;
  });
  for (Eigen::Index input = 0; input < 6; ++input) {
    for (int value = 0; value < 40; ++value) {
      Eigen::VectorXd changed = searched.chosen();
      changed(input) = value;
      EXPECT_LE(searched.Score(changed), searched.score() + 1e-9)
          << "input " << input << " at " << value << " from " << searched.chosen().transpose();
    }
  }
}

}  // namespace
}  // namespace hpo
