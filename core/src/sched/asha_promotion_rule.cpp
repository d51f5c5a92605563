// AshaPromotionRule, the promotion variant of asynchronous successive halving (see
// stopping_rules.hpp).
#include <algorithm>
#include <utility>

#include "common/count_text.hpp"
#include "stopping_rules.hpp"

namespace hpo::sched_internal {

AshaPromotionRule::AshaPromotionRule(std::vector<int64_t> rungs, int64_t eta, int64_t epochs,
                                     Goal goal, std::string metric)
    : rungs_(std::move(rungs)),
      eta_(eta),
      epochs_(epochs),
      goal_(goal),
      metric_(std::move(metric)),
      recorded_(rungs_.size(), RungRecord(goal)),
      promoted_(rungs_.size()),
      paused_ranks_(rungs_.size()) {}

bool AshaPromotionRule::InTop(size_t index, int64_t trial_id) const {
  const RungRecord& at_rung = recorded_[index];
  const int64_t better = at_rung.CountBetterThan(at_rung.values().at(trial_id));
  return better < static_cast<int64_t>(at_rung.size()) / eta_;
}

void AshaPromotionRule::SetPaused(int64_t trial_id, size_t index) {
  ErasePaused(trial_id);
  const RungRecord::Rank rank =
      recorded_[index].RankOf(trial_id, recorded_[index].values().at(trial_id));
  paused_.emplace(trial_id, PausedAt{index, rank});
  paused_ranks_[index].insert(rank);
}

void AshaPromotionRule::ErasePaused(int64_t trial_id) {
  const auto found = paused_.find(trial_id);
  if (found == paused_.end()) return;
  paused_ranks_[found->second.index].erase(found->second.rank);
  paused_.erase(found);
}

SchedulerDecision AshaPromotionRule::OnEpoch(int64_t trial_id, int64_t epoch, double objective) {
  if (epoch >= epochs_) ran_every_epoch_ = true;
  const auto rung = std::find(rungs_.begin(), rungs_.end(), epoch);
  if (rung == rungs_.end()) return {};
  const size_t index = static_cast<size_t>(rung - rungs_.begin());
  ErasePaused(trial_id);
  recorded_[index].Record(trial_id, objective);
  if (promoted_[index].count(trial_id) != 0) return {};  // promoted before (a resumed trial)
  if (InTop(index, trial_id)) {
    promoted_[index].insert(trial_id);
    return {};
  }
  SetPaused(trial_id, index);
  SchedulerDecision decision;
  decision.keep_going = false;
  decision.pause = true;
  decision.reason = "paused at rung " + std::to_string(index) + " (epoch " + std::to_string(epoch) +
                    "): " + metric_ + " " + FormatParamValue(ParamValue(objective)) +
                    " not in the top 1/" + std::to_string(eta_) + " of " +
                    CountOf(recorded_[index].size(), "trial") + " at this rung so far";
  return decision;
}

std::optional<int64_t> AshaPromotionRule::Promote(bool idle) {
  // The best paused trial at rung `index` (only when it is in its top floor(n / eta), where the
  // others, no better, would be too if they could); -1 when none.
  const auto best_paused = [this](size_t index, bool only_in_top) -> int64_t {
    if (paused_ranks_[index].empty()) return -1;
    const int64_t best = paused_ranks_[index].begin()->trial_id;
    return only_in_top && !InTop(index, best) ? -1 : best;
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
  promoted_[paused_.at(chosen).index].insert(chosen);
  ErasePaused(chosen);
  return chosen;
}

void AshaPromotionRule::Replay(int64_t trial_id, const std::map<int64_t, double>& reports,
                               TrialStatus status) {
  if (reports.empty()) return;
  const int64_t last = reports.rbegin()->first;
  if (last >= epochs_) ran_every_epoch_ = true;
  ErasePaused(trial_id);
  for (size_t index = 0; index < rungs_.size(); ++index) {
    const auto found = reports.find(rungs_[index]);
    if (found == reports.end()) continue;
    recorded_[index].Record(trial_id, found->second);
    if (rungs_[index] < last || status == TrialStatus::kRunning) {
      promoted_[index].insert(trial_id);
    } else if (status == TrialStatus::kPaused) {
      SetPaused(trial_id, index);
    }
  }
}

void AshaPromotionRule::Save(ByteWriter* writer) const {
  writer->Put<uint64_t>(recorded_.size());
  for (size_t index = 0; index < recorded_.size(); ++index) {
    writer->Put<uint64_t>(recorded_[index].size());
    for (const auto& [trial_id, value] : recorded_[index].values()) {
      writer->Put(trial_id);
      writer->Put(value);
    }
    writer->Put<uint64_t>(promoted_[index].size());
    for (const int64_t trial_id : promoted_[index]) writer->Put(trial_id);
  }
  writer->Put<uint64_t>(paused_.size());
  for (const auto& [trial_id, at] : paused_) {
    writer->Put(trial_id);
    writer->Put<uint64_t>(at.index);
  }
  writer->Put<uint8_t>(ran_every_epoch_ ? 1 : 0);
}

bool AshaPromotionRule::Restore(ByteReader* reader) {
  if (reader->Get<uint64_t>() != rungs_.size() || !reader->ok()) return false;
  for (size_t index = 0; index < rungs_.size(); ++index) {
    recorded_[index].Clear();
    promoted_[index].clear();
    paused_ranks_[index].clear();
    const uint64_t count = reader->Get<uint64_t>();
    for (uint64_t i = 0; i < count && reader->ok(); ++i) {
      const int64_t trial_id = reader->Get<int64_t>();
      const double value = reader->Get<double>();
      if (!recorded_[index].Record(trial_id, value)) return false;
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
    if (index >= rungs_.size() || recorded_[index].values().count(trial_id) == 0 ||
        paused_.count(trial_id) != 0) {
      return false;
    }
    SetPaused(trial_id, static_cast<size_t>(index));
  }
  ran_every_epoch_ = reader->Get<uint8_t>() != 0;
  return reader->ok();
}

}  // namespace hpo::sched_internal
