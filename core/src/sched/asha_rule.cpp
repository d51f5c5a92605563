// AshaRule, the stopping variant of asynchronous successive halving, and IsBetter, the goal-aware
// comparison both rules share (see stopping_rules.hpp).
#include <algorithm>
#include <cmath>
#include <utility>

#include "common/count_text.hpp"
#include "stopping_rules.hpp"

namespace hpo::sched_internal {

bool IsBetter(Goal goal, double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMaximize ? a > b : a < b;
}

AshaRule::AshaRule(std::vector<int64_t> rungs, int64_t eta, int64_t epochs, Goal goal,
                   std::string metric, bool strict)
    : rungs_(std::move(rungs)),
      eta_(eta),
      epochs_(epochs),
      goal_(goal),
      metric_(std::move(metric)),
      strict_(strict),
      recorded_(rungs_.size(), RungRecord(goal)) {}

bool AshaRule::OutsideTop(size_t index, int64_t trial_id, double objective, int64_t* count) const {
  const RungRecord& at_rung = recorded_[index];
  *count = static_cast<int64_t>(at_rung.size());
  int64_t better = at_rung.CountBetterThan(objective);
  const auto own = at_rung.values().find(trial_id);
  if (own != at_rung.values().end() && IsBetter(goal_, own->second, objective)) --better;
  return better >= std::max<int64_t>(1, *count / eta_);
}

SchedulerDecision AshaRule::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  const auto best = best_.find(trial_id);
  if (best == best_.end()) {
    best_.emplace(trial_id, objective);
  } else if (IsBetter(goal_, objective, best->second)) {
    best->second = objective;
  }
  const auto rung = std::lower_bound(rungs_.begin(), rungs_.end(), epoch);
  SchedulerDecision decision;
  if (rung != rungs_.end() && *rung == epoch) {
    const size_t index = static_cast<size_t>(rung - rungs_.begin());
    recorded_[index].Record(trial_id, objective);
    const double condition = strict_ ? objective : best_.at(trial_id);
    int64_t count = 0;
    if (!OutsideTop(index, trial_id, condition, &count)) return {};
    decision.keep_going = false;
    decision.reason = "stopped at rung " + std::to_string(index) + " (epoch " +
                      std::to_string(epoch) + "): " + (strict_ ? "" : "best ") + metric_ + " " +
                      FormatParamValue(ParamValue(condition)) + (strict_ ? "" : " so far") +
                      " not in the top 1/" + std::to_string(eta_) + " of " +
                      CountOf(count, "trial") + " at this rung";
    return decision;
  }
  // Between rungs: is the best so far still in the top 1/eta of the last rung passed?
  if (rung == rungs_.begin() || epoch >= epochs_) return {};
  const size_t index = static_cast<size_t>(rung - rungs_.begin()) - 1;
  if (recorded_[index].values().count(trial_id) == 0) return {};
  const double best_so_far = best_.at(trial_id);
  int64_t count = 0;
  if (!OutsideTop(index, trial_id, best_so_far, &count)) return {};
  decision.keep_going = false;
  decision.reason = "stopped at epoch " + std::to_string(epoch) + ": best " + metric_ + " " +
                    FormatParamValue(ParamValue(best_so_far)) + " so far no longer in the top 1/" +
                    std::to_string(eta_) + " of " + CountOf(count, "trial") + " at rung " +
                    std::to_string(index) + " (epoch " + std::to_string(rungs_[index]) + ")";
  return decision;
}

void AshaRule::OnTrialEnd(int64_t trial_id) { best_.erase(trial_id); }

void AshaRule::Save(ByteWriter* writer) const {
  writer->Put<uint64_t>(recorded_.size());
  for (const RungRecord& at_rung : recorded_) {
    writer->Put<uint64_t>(at_rung.size());
    for (const auto& [trial_id, value] : at_rung.values()) {
      writer->Put(trial_id);
      writer->Put(value);
    }
  }
  writer->Put<uint64_t>(best_.size());
  for (const auto& [trial_id, value] : best_) {
    writer->Put(trial_id);
    writer->Put(value);
  }
}

bool AshaRule::Restore(ByteReader* reader, bool with_best) {
  if (reader->Get<uint64_t>() != rungs_.size() || !reader->ok()) return false;
  for (RungRecord& at_rung : recorded_) {
    at_rung.Clear();
    const uint64_t count = reader->Get<uint64_t>();
    for (uint64_t i = 0; i < count && reader->ok(); ++i) {
      const int64_t trial_id = reader->Get<int64_t>();
      const double value = reader->Get<double>();
      if (!at_rung.Record(trial_id, value)) return false;
    }
    if (!reader->ok()) return false;
  }
  best_.clear();
  if (!with_best) return true;
  const uint64_t count = reader->Get<uint64_t>();
  for (uint64_t i = 0; i < count && reader->ok(); ++i) {
    const int64_t trial_id = reader->Get<int64_t>();
    const double value = reader->Get<double>();
    if (!best_.emplace(trial_id, value).second) return false;
  }
  return reader->ok();
}

}  // namespace hpo::sched_internal
