#include "searchers.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace hpo {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// How many values a grid takes from the parameter; 0 when it is not enumerable.
int64_t GridValueCount(const ParameterSpec& parameter) {
  switch (parameter.distribution) {
    case Distribution::kConstant:
      return 1;
    case Distribution::kCategorical:
      return static_cast<int64_t>(parameter.values.size());
    case Distribution::kIntUniform: {
      const double count = parameter.max - parameter.min + 1.0;
      return count >= static_cast<double>(kInt64Max) ? kInt64Max : std::llround(count);
    }
    default:
      return 0;
  }
}

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a != 0 && b > kInt64Max / a) return kInt64Max;
  return a * b;
}

}  // namespace

Status GridSearcher::Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  for (const ParameterSpec& parameter : config.sweep.parameters) {
    if (GridValueCount(parameter) <= 0) {
      return Status::BadInput(config.path + ":" + std::to_string(parameter.line) +
                              ": sweep.parameters." + parameter.name +
                              ": grid search needs `values`, got distribution " +
                              DistributionName(parameter.distribution));
    }
  }
  searcher->reset(new GridSearcher(config.sweep.parameters));
  return Status::Ok();
}

GridSearcher::GridSearcher(std::vector<ParameterSpec> parameters)
    : parameters_(std::move(parameters)) {
  for (const ParameterSpec& parameter : parameters_) {
    value_counts_.push_back(GridValueCount(parameter));
    space_size_ = SaturatingMultiply(space_size_, value_counts_.back());
  }
}

std::optional<Assignment> GridSearcher::Suggest(int64_t trial_id) {
  if (trial_id < 0 || trial_id >= space_size_) return std::nullopt;
  Assignment assignment(parameters_.size());
  int64_t remainder = trial_id;
  for (size_t i = parameters_.size(); i-- > 0;) {
    const ParameterSpec& parameter = parameters_[i];
    const int64_t index = remainder % value_counts_[i];
    remainder /= value_counts_[i];
    assignment[i].name = parameter.name;
    if (parameter.distribution == Distribution::kIntUniform) {
      assignment[i].value = std::llround(parameter.min) + index;
    } else {
      assignment[i].value = parameter.values[static_cast<size_t>(index)];
    }
  }
  return assignment;
}

void GridSearcher::Observe(int64_t, const Assignment&, TrialStatus, double) {}

std::string GridSearcher::SaveState() const { return "grid/v1/" + std::to_string(space_size_); }

Status GridSearcher::RestoreState(const std::string& state) {
  if (state != SaveState()) {
    return Status::BadInput("saved searcher state '" + state.substr(0, 40) +
                            "' is not this grid search's (" + SaveState() + ")");
  }
  return Status::Ok();
}

}  // namespace hpo
