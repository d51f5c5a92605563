// AshaRule, the stopping variant of asynchronous successive halving, and IsBetter, the goal-aware
// comparison both rules share (see stopping_rules.hpp).
#include <algorithm>
#include <cmath>
#include <utility>

#include "stopping_rules.hpp"

namespace hpo::sched_internal {

bool IsBetter(Goal goal, double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMaximize ? a > b : a < b;
}

AshaRule::AshaRule(std::vector<int64_t> rungs, int64_t eta, Goal goal, std::string metric)
    : rungs_(std::move(rungs)),
      eta_(eta),
      goal_(goal),
      metric_(std::move(metric)),
      recorded_(rungs_.size()) {}

SchedulerDecision AshaRule::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  const auto rung = std::lower_bound(rungs_.begin(), rungs_.end(), epoch);
  if (rung == rungs_.end() || *rung != epoch) return {};
  const size_t index = static_cast<size_t>(rung - rungs_.begin());
  std::map<int64_t, double>& at_rung = recorded_[index];
  at_rung[trial_id] = objective;

  const int64_t count = static_cast<int64_t>(at_rung.size());
  int64_t better = 0;
  for (const auto& [other_id, value] : at_rung) {
    if (other_id != trial_id && IsBetter(goal_, value, objective)) ++better;
  }
  if (better < std::max<int64_t>(1, count / eta_)) return {};
  SchedulerDecision decision;
  decision.keep_going = false;
  decision.reason = "stopped at rung " + std::to_string(index) + " (epoch " +
                    std::to_string(epoch) + "): " + metric_ + " " +
                    FormatParamValue(ParamValue(objective)) + " not in the top 1/" +
                    std::to_string(eta_) + " of " + std::to_string(count) + " trials at this rung";
  return decision;
}

void AshaRule::Save(ByteWriter* writer) const {
  writer->Put<uint64_t>(recorded_.size());
  for (const std::map<int64_t, double>& at_rung : recorded_) {
    writer->Put<uint64_t>(at_rung.size());
    for (const auto& [trial_id, value] : at_rung) {
      writer->Put(trial_id);
      writer->Put(value);
    }
  }
}

bool AshaRule::Restore(ByteReader* reader) {
  if (reader->Get<uint64_t>() != rungs_.size() || !reader->ok()) return false;
  for (std::map<int64_t, double>& at_rung : recorded_) {
    at_rung.clear();
    const uint64_t count = reader->Get<uint64_t>();
    for (uint64_t i = 0; i < count && reader->ok(); ++i) {
      const int64_t trial_id = reader->Get<int64_t>();
      const double value = reader->Get<double>();
      if (!at_rung.emplace(trial_id, value).second) return false;
    }
    if (!reader->ok()) return false;
  }
  return true;
}

}  // namespace hpo::sched_internal
