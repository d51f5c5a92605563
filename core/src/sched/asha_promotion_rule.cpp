// AshaPromotionRule, the promotion variant of asynchronous successive halving (see
// stopping_rules.hpp).
#include <algorithm>
#include <utility>

#include "stopping_rules.hpp"

namespace hpo::sched_internal {

AshaPromotionRule::AshaPromotionRule(std::vector<int64_t> rungs, int64_t eta, int64_t epochs,
                                     Goal goal, std::string metric)
    : rungs_(std::move(rungs)),
      eta_(eta),
      epochs_(epochs),
      goal_(goal),
      metric_(std::move(metric)),
      recorded_(rungs_.size()),
      promoted_(rungs_.size()) {}

bool AshaPromotionRule::InTop(size_t index, int64_t trial_id) const {
  const std::map<int64_t, double>& at_rung = recorded_[index];
  const double value = at_rung.at(trial_id);
  int64_t better = 0;
  for (const auto& [other_id, other] : at_rung) {
    if (other_id != trial_id && IsBetter(goal_, other, value)) ++better;
  }
  return better < static_cast<int64_t>(at_rung.size()) / eta_;
}

SchedulerDecision AshaPromotionRule::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  if (epoch >= epochs_) ran_every_epoch_ = true;
  const auto rung = std::find(rungs_.begin(), rungs_.end(), epoch);
  if (rung == rungs_.end()) return {};
  const size_t index = static_cast<size_t>(rung - rungs_.begin());
  recorded_[index][trial_id] = objective;
  paused_.erase(trial_id);
  if (promoted_[index].count(trial_id) != 0) return {};  // promoted before (a resumed trial)
  if (InTop(index, trial_id)) {
    promoted_[index].insert(trial_id);
    return {};
  }
  paused_[trial_id] = index;
  SchedulerDecision decision;
  decision.keep_going = false;
  decision.pause = true;
  decision.reason = "paused at rung " + std::to_string(index) + " (epoch " + std::to_string(epoch) +
                    "): " + metric_ + " " + FormatParamValue(ParamValue(objective)) +
                    " not in the top 1/" + std::to_string(eta_) + " of " +
                    std::to_string(recorded_[index].size()) + " trials at this rung so far";
  return decision;
}

std::optional<int64_t> AshaPromotionRule::Promote(bool idle) {
  // The best paused trial at rung `index` (only among those in its top floor(n / eta) when
  // `only_in_top`); -1 when none.
  const auto best_paused = [this](size_t index, bool only_in_top) {
    int64_t best = -1;
    for (const auto& [trial_id, at] : paused_) {
      if (at != index || (only_in_top && !InTop(index, trial_id))) continue;
      if (best < 0 || IsBetter(goal_, recorded_[index].at(trial_id), recorded_[index].at(best))) {
        best = trial_id;
      }
    }
    return best;
  };
  int64_t chosen = -1;
  for (size_t index = rungs_.size(); index-- > 0 && chosen < 0;) {
    chosen = best_paused(index, /*only_in_top=*/true);
  }
  if (chosen < 0 && idle && !ran_every_epoch_) {
    for (size_t index = rungs_.size(); index-- > 0 && chosen < 0;) {
      chosen = best_paused(index, /*only_in_top=*/false);
    }
  }
  if (chosen < 0) return std::nullopt;
  promoted_[paused_.at(chosen)].insert(chosen);
  paused_.erase(chosen);
  return chosen;
}

void AshaPromotionRule::Replay(int64_t trial_id, const std::map<int64_t, double>& reports,
                               TrialStatus status) {
  if (reports.empty()) return;
  const int64_t last = reports.rbegin()->first;
  if (last >= epochs_) ran_every_epoch_ = true;
  for (size_t index = 0; index < rungs_.size(); ++index) {
    const auto found = reports.find(rungs_[index]);
    if (found == reports.end()) continue;
    recorded_[index][trial_id] = found->second;
    if (rungs_[index] < last || status == TrialStatus::kRunning) {
      promoted_[index].insert(trial_id);
    } else if (status == TrialStatus::kPaused) {
      paused_[trial_id] = index;
    }
  }
}

void AshaPromotionRule::Save(ByteWriter* writer) const {
  writer->Put<uint64_t>(recorded_.size());
  for (size_t index = 0; index < recorded_.size(); ++index) {
    writer->Put<uint64_t>(recorded_[index].size());
    for (const auto& [trial_id, value] : recorded_[index]) {
      writer->Put(trial_id);
      writer->Put(value);
    }
    writer->Put<uint64_t>(promoted_[index].size());
    for (const int64_t trial_id : promoted_[index]) writer->Put(trial_id);
  }
  writer->Put<uint64_t>(paused_.size());
  for (const auto& [trial_id, index] : paused_) {
    writer->Put(trial_id);
    writer->Put<uint64_t>(index);
  }
  writer->Put<uint8_t>(ran_every_epoch_ ? 1 : 0);
}

bool AshaPromotionRule::Restore(ByteReader* reader) {
  if (reader->Get<uint64_t>() != rungs_.size() || !reader->ok()) return false;
  for (size_t index = 0; index < rungs_.size(); ++index) {
    recorded_[index].clear();
    promoted_[index].clear();
    const uint64_t count = reader->Get<uint64_t>();
    for (uint64_t i = 0; i < count && reader->ok(); ++i) {
      const int64_t trial_id = reader->Get<int64_t>();
      const double value = reader->Get<double>();
      if (!recorded_[index].emplace(trial_id, value).second) return false;
    }
    const uint64_t promoted = reader->Get<uint64_t>();
    for (uint64_t i = 0; i < promoted && reader->ok(); ++i) {
      if (!promoted_[index].insert(reader->Get<int64_t>()).second) return false;
    }
    if (!reader->ok()) return false;
  }
  paused_.clear();
  const uint64_t paused = reader->Get<uint64_t>();
  for (uint64_t i = 0; i < paused && reader->ok(); ++i) {
    const int64_t trial_id = reader->Get<int64_t>();
    const uint64_t index = reader->Get<uint64_t>();
    if (index >= rungs_.size() || recorded_[index].count(trial_id) == 0 ||
        !paused_.emplace(trial_id, static_cast<size_t>(index)).second) {
      return false;
    }
  }
  ran_every_epoch_ = reader->Get<uint8_t>() != 0;
  return reader->ok();
}

}  // namespace hpo::sched_internal
