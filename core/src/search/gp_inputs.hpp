// Private to hpo_core: the GP searcher's model inputs (gp_searcher.cpp, acquisition_search.cpp):
// which parameters are inputs, how a model coordinate becomes an input in [0, 1] (a category index
// for categoricals) and back, and what an absent parameter's input is.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "hpo/config.hpp"
#include "model_space.hpp"

namespace hpo {

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
                        const Eigen::VectorXd& chosen);

// With conditions, what a candidate's inputs become before it is scored: the inputs of the
// parameters that are absent for its values kAbsentInput, the others snapped onto their grids (an
// input that was absent in the candidate it was perturbed from becomes present at the cube's
// edge), so that candidates look like the data the process was fitted on.
struct Absence {
  const std::vector<ParameterSpec>& parameters;
  const std::vector<ModelDimension>& dimensions;
  bool conditional = false;

  void Impute(const InputSpace& space, Eigen::MatrixXd* candidates) const;
};

}  // namespace hpo
