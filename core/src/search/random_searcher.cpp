#include "searchers.hpp"

#include <random>
#include <utility>

#include "common/seeding.hpp"
#include "conditions.hpp"
#include "search/sampling.hpp"

namespace hpo {

RandomSearcher::RandomSearcher(std::vector<ParameterSpec> parameters, uint64_t seed)
    : parameters_(std::move(parameters)), seed_(seed) {}

std::optional<Assignment> RandomSearcher::Suggest(int64_t trial_id) {
  if (trial_id < 0) return std::nullopt;
  std::mt19937_64 rng(DeriveSeed(seed_, kSamplingPurpose, static_cast<uint64_t>(trial_id)));
  Assignment assignment;
  assignment.reserve(parameters_.size());
  for (const ParameterSpec& parameter : parameters_) {
    assignment.push_back(NamedValue{parameter.name, SampleParameter(parameter, rng)});
  }
  return DropInactive(parameters_, std::move(assignment));
}

void RandomSearcher::Observe(int64_t, const Assignment&, TrialStatus, double) {}

std::string RandomSearcher::SaveState() const {
  return "random/v1/" + std::to_string(seed_) + ConditionsFingerprint(parameters_);
}

Status RandomSearcher::RestoreState(const std::string& state) {
  if (state != SaveState()) {
    return Status::BadInput("saved searcher state '" + state.substr(0, 40) +
                            "' is not this random search's (" + SaveState() + ")");
  }
  return Status::Ok();
}

}  // namespace hpo
