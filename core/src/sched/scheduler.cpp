// HyperbandRungs, MakeScheduler and the Scheduler it builds: ASHA and/or the median rule
// (stopping_rules.hpp) behind one interface, with their state saved as one byte string.
#include "sched/scheduler.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.hpp"
#include "sched/curve_scheduler.hpp"
#include "stopping_rules.hpp"

namespace hpo {

namespace {

using sched_internal::AshaPromotionRule;
using sched_internal::AshaRule;
using sched_internal::MedianRule;

constexpr char kStateTag[] = "hpo.scheduler.v2";
// The layout before ASHA kept best-so-far values (read on resume, with none of them).
constexpr char kStateTagV1[] = "hpo.scheduler.v1";

// ASHA (stopping or promotion variant) and/or the median rule; a trial stops when either says
// stop, ASHA asked first (its reason wins when both say stop, and its pause too). Both rules see
// every report, so each keeps its full record. The saved state is the tag, a fingerprint of the
// settings (which rules, goal, rungs, eta, strict, promotion, min_trials, start_step), then each
// enabled rule's records; RestoreState takes only bytes whose fingerprint matches this
// scheduler's, and leaves the scheduler unchanged when it fails.
class EarlyStoppingScheduler final : public Scheduler {
 public:
  EarlyStoppingScheduler(Goal goal, std::optional<AshaRule> asha,
                         std::optional<AshaPromotionRule> promotion,
                         std::optional<MedianRule> median)
      : goal_(goal),
        asha_(std::move(asha)),
        promotion_(std::move(promotion)),
        median_(std::move(median)) {}

  SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective) override {
    SchedulerDecision decision;
    if (asha_) decision = asha_->OnEpoch(trial_id, epoch, objective);
    if (promotion_) decision = promotion_->OnEpoch(trial_id, epoch, objective);
    if (median_) {
      SchedulerDecision median_decision = median_->OnEpoch(trial_id, epoch, objective);
      if (decision.keep_going) decision = std::move(median_decision);
    }
    return decision;
  }

  void OnTrialEnd(int64_t trial_id, TrialStatus /*status*/) override {
    if (asha_) asha_->OnTrialEnd(trial_id);
  }

  void ReplayTrial(int64_t trial_id, const std::map<int64_t, double>& reports,
                   TrialStatus status) override {
    for (const auto& [epoch, objective] : reports) {
      if (asha_) asha_->OnEpoch(trial_id, epoch, objective);
      if (median_) median_->OnEpoch(trial_id, epoch, objective);
    }
    if (promotion_) promotion_->Replay(trial_id, reports, status);
    if (asha_ && status != TrialStatus::kRunning && status != TrialStatus::kPaused) {
      asha_->OnTrialEnd(trial_id);
    }
  }

  std::optional<int64_t> Promote(bool idle) override {
    return promotion_ ? promotion_->Promote(idle) : std::nullopt;
  }
  size_t paused_trials() const override { return promotion_ ? promotion_->paused_trials() : 0; }
  std::string WhyLeftPaused() const override { return "at a rung, never in its top 1/eta"; }

  std::string ConfigFingerprint() const override {
    return std::string(kStateTag) + " " + Fingerprint();
  }

  std::string SaveState() const override {
    std::vector<uint8_t> bytes;
    ByteWriter writer(&bytes);
    writer.PutString(kStateTag);
    writer.PutString(Fingerprint());
    if (asha_) asha_->Save(&writer);
    if (promotion_) promotion_->Save(&writer);
    if (median_) median_->Save(&writer);
    return std::string(bytes.begin(), bytes.end());
  }

  Status RestoreState(const std::string& state) override {
    const std::vector<uint8_t> bytes(state.begin(), state.end());
    ByteReader reader(bytes);
    const std::string tag = reader.GetString();
    if ((tag != kStateTag && tag != kStateTagV1) || !reader.ok()) {
      return Status::BadInput(std::string("saved scheduler state does not start with '") +
                              kStateTag + "'");
    }
    if (reader.GetString() != Fingerprint() || !reader.ok()) {
      return Status::BadInput(
          "saved scheduler state is from another config: its early stopping settings (ASHA "
          "rungs, eta and strict, median rule min_trials and start_step, goal) differ from this "
          "sweep's");
    }
    std::optional<AshaRule> asha = asha_;
    std::optional<AshaPromotionRule> promotion = promotion_;
    std::optional<MedianRule> median = median_;
    const bool ok = (!asha || asha->Restore(&reader, /*with_best=*/tag == kStateTag)) &&
                    (!promotion || promotion->Restore(&reader)) &&
                    (!median || median->Restore(&reader)) && reader.ok() && reader.at_end();
    if (!ok) return Status::BadInput("saved scheduler state is truncated or corrupt");
    asha_ = std::move(asha);
    promotion_ = std::move(promotion);
    median_ = std::move(median);
    return Status::Ok();
  }

 private:
  std::string Fingerprint() const {
    std::vector<uint8_t> bytes;
    ByteWriter writer(&bytes);
    writer.Put<uint8_t>((asha_ ? 1 : 0) | (median_ ? 2 : 0) | (promotion_ ? 4 : 0));
    writer.Put<uint8_t>(goal_ == Goal::kMaximize ? 1 : 0);
    const std::vector<int64_t> no_rungs;
    const std::vector<int64_t>& rungs =
        asha_ ? asha_->rungs() : (promotion_ ? promotion_->rungs() : no_rungs);
    writer.Put<uint64_t>(rungs.size());
    for (int64_t rung : rungs) writer.Put(rung);
    writer.Put<int64_t>(asha_ ? asha_->eta() : (promotion_ ? promotion_->eta() : 0));
    writer.Put<uint8_t>(asha_ && !asha_->strict() ? 1 : 0);
    writer.Put<int64_t>(median_ ? median_->min_trials() : 0);
    writer.Put<int64_t>(median_ ? median_->start_step() : 0);
    return std::string(bytes.begin(), bytes.end());
  }

  Goal goal_;
  std::optional<AshaRule> asha_;
  std::optional<AshaPromotionRule> promotion_;
  std::optional<MedianRule> median_;
};

}  // namespace

std::vector<int64_t> HyperbandRungs(const HyperbandSpec& spec, int64_t epochs) {
  std::vector<int64_t> rungs;
  if (spec.eta < 2) return rungs;
  if (spec.max_iter && spec.s) {
    // W&B's definition (its max_iter wins over min_iter): floor(max_iter / eta^k), k = s .. 1.
    int64_t rung = *spec.max_iter;
    for (int64_t k = 1; k <= *spec.s; ++k) {
      rung /= spec.eta;
      if (rung < 1) break;
      if (rung < epochs) rungs.push_back(rung);
    }
    std::sort(rungs.begin(), rungs.end());
    rungs.erase(std::unique(rungs.begin(), rungs.end()), rungs.end());
  } else if (spec.min_iter) {
    for (int64_t rung = *spec.min_iter; rung >= 1 && rung < epochs; rung *= spec.eta) {
      rungs.push_back(rung);
      if (rung > (epochs - 1) / spec.eta) break;  // the next one is past the epochs (or overflows)
    }
  }
  return rungs;
}

Status MakeScheduler(const SweepConfig& config, std::unique_ptr<Scheduler>* scheduler) {
  scheduler->reset();
  const HyperbandSpec& hyperband = config.sweep.early_terminate;
  const MedianStoppingSpec& median_stopping = config.median_stopping;
  const int64_t epochs = config.execution.epochs;
  const Goal goal = config.sweep.metric.goal;
  const std::string& metric = config.sweep.metric.name;

  std::optional<AshaRule> asha;
  std::optional<AshaPromotionRule> promotion;
  const bool curves = PredictsCurves(config.search.model);
  if (hyperband.enabled && curves && median_stopping.enabled) {
    return Status::BadInput(config.path +
                            ": median_stopping: search.model curves decides which trials go on "
                            "from its predictions; remove median_stopping or choose another model");
  }
  if (hyperband.enabled) {
    if (hyperband.eta < 2) {
      return Status::BadInput(config.path + ": sweep.early_terminate.eta: must be >= 2, got " +
                              std::to_string(hyperband.eta));
    }
    std::vector<int64_t> rungs = HyperbandRungs(hyperband, epochs);
    if (rungs.empty()) {
      return Status::BadInput(config.path + ": sweep.early_terminate: no rung below epochs (" +
                              std::to_string(epochs) + "), so it could never stop a trial");
    }
    if (curves) {
      *scheduler = std::make_unique<sched_internal::CurveScheduler>(
          std::move(rungs), epochs, goal, metric, config.search.startup_trials,
          config.sweep.run_cap);
      return Status::Ok();
    }
    if (hyperband.promotion) {
      promotion.emplace(std::move(rungs), hyperband.eta, epochs, goal, metric);
    } else {
      asha.emplace(std::move(rungs), hyperband.eta, epochs, goal, metric, hyperband.strict);
    }
  }
  std::optional<MedianRule> median;
  if (median_stopping.enabled) {
    if (median_stopping.min_trials < 1 || median_stopping.start_step < 1 ||
        median_stopping.start_step >= epochs) {
      return Status::BadInput(config.path +
                              ": median_stopping: needs min_trials >= 1 and 1 <= start_step < "
                              "epochs (min_trials " +
                              std::to_string(median_stopping.min_trials) + ", start_step " +
                              std::to_string(median_stopping.start_step) + ", epochs " +
                              std::to_string(epochs) + ")");
    }
    median.emplace(median_stopping.min_trials, median_stopping.start_step, epochs, goal, metric);
  }
  if (!asha && !promotion && !median) return Status::Ok();
  *scheduler = std::make_unique<EarlyStoppingScheduler>(goal, std::move(asha), std::move(promotion),
                                                        std::move(median));
  return Status::Ok();
}

}  // namespace hpo
