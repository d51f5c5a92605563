#include "gp_inputs.hpp"

#include "conditions.hpp"

namespace hpo {

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

void Absence::Impute(const InputSpace& space, Eigen::MatrixXd* candidates) const {
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

}  // namespace hpo
