#include "searchers.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "conditions.hpp"

namespace hpo {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// The most points a grid over conditional parameters lists (it holds them all in memory).
constexpr size_t kMaxConditionalGridPoints = size_t{1} << 20;

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

// Value `index` of the parameter's grid.
ParamValue GridValue(const ParameterSpec& parameter, int64_t index) {
  if (parameter.distribution == Distribution::kIntUniform) {
    return std::llround(parameter.min) + index;
  }
  return parameter.values[static_cast<size_t>(index)];
}

// The grid's points over the active branches only, parents first (ParentsFirstOrder) and the
// first of that order varying slowest; false when there are more than kMaxConditionalGridPoints.
bool ListConditionalGrid(const std::vector<ParameterSpec>& parameters,
                         std::vector<Assignment>* points) {
  const std::vector<size_t> order = ParentsFirstOrder(parameters);
  Assignment chosen;  // in `order`, the active parameters so far
  const std::function<bool(size_t)> extend = [&](size_t position) -> bool {
    if (position == order.size()) {
      if (points->size() == kMaxConditionalGridPoints) return false;
      Assignment point;
      for (const ParameterSpec& parameter : parameters) {
        if (const ParamValue* value = FindParam(chosen, parameter.name)) {
          point.push_back(NamedValue{parameter.name, *value});
        }
      }
      points->push_back(std::move(point));
      return true;
    }
    const size_t p = order[position];
    if (!ActiveParameters(parameters, chosen)[p]) return extend(position + 1);
    for (int64_t index = 0; index < GridValueCount(parameters[p]); ++index) {
      chosen.push_back(NamedValue{parameters[p].name, GridValue(parameters[p], index)});
      const bool listed = extend(position + 1);
      chosen.pop_back();
      if (!listed) return false;
    }
    return true;
  };
  return extend(0);
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
  std::vector<Assignment> points;
  if (HasConditions(config.sweep.parameters) &&
      !ListConditionalGrid(config.sweep.parameters, &points)) {
    return Status::BadInput(config.path +
                            ": grid search over conditional parameters lists at most " +
                            std::to_string(kMaxConditionalGridPoints) +
                            " points, this sweep has more; use random or bayes search");
  }
  searcher->reset(new GridSearcher(config.sweep.parameters, std::move(points)));
  return Status::Ok();
}

GridSearcher::GridSearcher(std::vector<ParameterSpec> parameters,
                           std::vector<Assignment> conditional_points)
    : parameters_(std::move(parameters)), conditional_points_(std::move(conditional_points)) {
  for (const ParameterSpec& parameter : parameters_) {
    value_counts_.push_back(GridValueCount(parameter));
    space_size_ = SaturatingMultiply(space_size_, value_counts_.back());
  }
  if (HasConditions(parameters_)) space_size_ = static_cast<int64_t>(conditional_points_.size());
}

std::optional<Assignment> GridSearcher::Suggest(int64_t trial_id) {
  if (trial_id < 0 || trial_id >= space_size_) return std::nullopt;
  if (HasConditions(parameters_)) return conditional_points_[static_cast<size_t>(trial_id)];
  Assignment assignment(parameters_.size());
  int64_t remainder = trial_id;
  for (size_t i = parameters_.size(); i-- > 0;) {
    const ParameterSpec& parameter = parameters_[i];
    const int64_t index = remainder % value_counts_[i];
    remainder /= value_counts_[i];
    assignment[i].name = parameter.name;
    assignment[i].value = GridValue(parameter, index);
  }
  return assignment;
}

void GridSearcher::Observe(int64_t, const Assignment&, TrialStatus, double) {}

std::string GridSearcher::SaveState() const {
  return "grid/v1/" + std::to_string(space_size_) + ConditionsFingerprint(parameters_);
}

Status GridSearcher::RestoreState(const std::string& state) {
  if (state != SaveState()) {
    return Status::BadInput("saved searcher state '" + state.substr(0, 40) +
                            "' is not this grid search's (" + SaveState() + ")");
  }
  return Status::Ok();
}

}  // namespace hpo
