// Private to hpo_core: the two early-stopping rules the Scheduler of MakeScheduler combines (see
// scheduler.hpp). Each rule is a plain value type that records what trials reported and answers
// at once; neither knows of the other, of MPI or of torch. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "sched/scheduler.hpp"

namespace hpo::sched_internal {

// True when objective `a` is strictly better than `b` for `goal`. NaN is worse than any number,
// and two NaNs tie (neither is better).
bool IsBetter(Goal goal, double a, double b);

// The values recorded at one rung, by trial id and in rank order, so that a trial's standing is
// found in O(log n) whatever the rung's size (a scan per arrival made a sweep of n trials O(n^2)
// at its first rung, and Promote, which tests paused trials, worse).
class RungRecord {
 public:
  // A value's place in rank order: best first (by IsBetter), NaN last, ties by trial id.
  struct Rank {
    bool nan = false;
    double loss = 0.0;  // the value, negated when maximising
    int64_t trial_id = 0;
    bool operator<(const Rank& other) const;
  };

  explicit RungRecord(Goal goal);
  RungRecord(const RungRecord& other);
  RungRecord& operator=(const RungRecord& other);
  RungRecord(RungRecord&&) noexcept;
  RungRecord& operator=(RungRecord&&) noexcept;
  ~RungRecord();

  // Records (or replaces) `trial_id`'s value; false when it replaced one.
  bool Record(int64_t trial_id, double value);
  void Clear();
  size_t size() const { return values_.size(); }
  // How many recorded values are strictly better than `value` (IsBetter).
  int64_t CountBetterThan(double value) const;
  Rank RankOf(int64_t trial_id, double value) const;
  // Trial id -> value, in id order.
  const std::map<int64_t, double>& values() const { return values_; }

 private:
  struct OrderedTree;
  Goal goal_;
  std::map<int64_t, double> values_;
  std::unique_ptr<OrderedTree> ordered_;  // every value's Rank, with subtree sizes
};

// Asynchronous successive halving, stopping variant (Ray Tune's AsyncHyperBand, W&B's hyperband
// early termination). When a trial reports an epoch that is a rung, its objective is recorded at
// that rung (a repeated report of the same trial and rung, as after a resume, replaces its value)
// and the trial goes on only if its condition value is in the top 1/eta of every value recorded at
// the rung so far, its own included. The condition value is the objective of that epoch (`strict`,
// W&B's default) or the trial's best objective so far (not strict: W&B's conservative condition,
// which a dip on the rung's own epoch does not stop); what is recorded is always the objective of
// that epoch:
//   n      = number of trials recorded at the rung (this one included),
//   better = number of other recorded values strictly better than the condition value (ties count
//            for it; NaN is worst),
//   keep going iff better < max(1, floor(n / eta)).
// So the first trial at a rung always goes on, and of n trials at most floor(n / eta) (at least
// one) are ahead of any trial that goes on. Recorded values are kept for the whole sweep, whatever
// becomes of their trials.
//
// Between rungs the standing is checked again (as W&B's hyperband does for every running run at
// every step, with its default non-strict condition): at an epoch e that is not a rung, with
// rungs[0] < e < epochs, a trial recorded at the highest rung r below e goes on only while its
// best objective so far (over every epoch it reported) would still pass r's test against what is
// recorded at r now:
//   better = number of other values recorded at r strictly better than the best so far,
//   keep going iff better < max(1, floor(n_r / eta)).
// Without it, a trial that reached a rung first (it goes on whatever its value) or among the first
// few trained on to the next rung even once the rung had filled up with better trials. The
// last epoch (e == epochs) always goes on: the trial is done. Best-so-far values are kept per
// trial until OnTrialEnd.
class AshaRule {
 public:
  // `rungs`: ascending, distinct epochs >= 1 (HyperbandRungs), all below `epochs`; `eta` >= 2;
  // `metric` names the objective in stop reasons.
  AshaRule(std::vector<int64_t> rungs, int64_t eta, int64_t epochs, Goal goal, std::string metric,
           bool strict = true);

  // Stop reasons: at a rung, "stopped at rung R (epoch E): METRIC V not in the top 1/ETA of N
  // trials at this rung" (not strict: "...: best METRIC V so far not in the top ..."), R counting
  // rungs from 0; between rungs, "stopped at epoch E: best METRIC V so far no longer in the top
  // 1/ETA of N trials at rung R (epoch X)".
  SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective);

  // Forgets the trial's best-so-far value (its rung records stay).
  void OnTrialEnd(int64_t trial_id);

  const std::vector<int64_t>& rungs() const { return rungs_; }
  int64_t eta() const { return eta_; }
  bool strict() const { return strict_; }

  // The recorded values and the running trials' best values (not the settings, which the caller
  // fingerprints). Restore replaces them; false for bytes Save did not write for as many rungs,
  // and the rule is then left in an unspecified state (restore into a copy). `with_best` false
  // reads the older layout without best values (hpo.scheduler.v1).
  void Save(ByteWriter* writer) const;
  bool Restore(ByteReader* reader, bool with_best = true);

 private:
  // How many values recorded at rung `index`, other than `trial_id`'s, are strictly better than
  // `objective`, and whether that many leave it outside the top 1/eta of the rung.
  bool OutsideTop(size_t index, int64_t trial_id, double objective, int64_t* count) const;

  std::vector<int64_t> rungs_;
  int64_t eta_;
  int64_t epochs_;
  Goal goal_;
  std::string metric_;
  bool strict_;
  std::vector<RungRecord> recorded_;  // per rung
  std::map<int64_t, double> best_;    // running trial id -> best objective so far
};

// Asynchronous successive halving, promotion variant (Li et al., MLSys 2020, Algorithm 2; Ray
// Tune's HyperBand pauses trials likewise). When a trial reports an epoch that is a rung, its
// objective is recorded there (a repeated report replaces it) and it goes on at once only if it
// is promotable: not yet promoted from that rung and in the top floor(n / eta) of the n values
// recorded at the rung (better = other values strictly better than its value; promotable iff
// better < floor(n / eta)). Otherwise it pauses: "paused at rung R (epoch E): METRIC V not in the
// top 1/ETA of N trials at this rung so far". Unlike the stopping variant nobody passes a rung
// alone: until eta trials have reached it, every arrival pauses. Between rungs trials go on.
// Promote returns a paused trial that has become promotable, from the highest rung down (the best
// value first, then the lowest id), and marks it promoted from its rung. So that a sweep whose
// budget ends before any trial is promotable still trains its best trial to the end, an idle
// Promote (nothing runs, nothing new starts) also promotes the best paused trial of the highest
// rung with paused trials, as long as no trial has reported the last epoch.
class AshaPromotionRule {
 public:
  // As AshaRule's.
  AshaPromotionRule(std::vector<int64_t> rungs, int64_t eta, int64_t epochs, Goal goal,
                    std::string metric);

  SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective);
  std::optional<int64_t> Promote(bool idle);
  size_t paused_trials() const { return paused_.size(); }
  // Resume (Scheduler::ReplayTrial): records the trial's values at its rungs; it was promoted from
  // every rung below its last epoch, and from the rung at its last epoch when it runs again; it is
  // paused there when `status` is kPaused.
  void Replay(int64_t trial_id, const std::map<int64_t, double>& reports, TrialStatus status);

  const std::vector<int64_t>& rungs() const { return rungs_; }
  int64_t eta() const { return eta_; }

  // Recorded values, promotions, paused trials and whether a trial ran every epoch. Restore as
  // AshaRule's.
  void Save(ByteWriter* writer) const;
  bool Restore(ByteReader* reader);

 private:
  // Whether `trial_id`'s value at rung `index` is in the top floor(n / eta) there.
  bool InTop(size_t index, int64_t trial_id) const;

  std::vector<int64_t> rungs_;
  int64_t eta_;
  int64_t epochs_;
  Goal goal_;
  std::string metric_;
  // Marks `trial_id` paused at rung `index` (its value recorded there), or not paused.
  void SetPaused(int64_t trial_id, size_t index);
  void ErasePaused(int64_t trial_id);

  std::vector<RungRecord> recorded_;         // per rung
  std::vector<std::set<int64_t>> promoted_;  // per rung: trials that went on from it
  struct PausedAt {
    size_t index;           // its rung
    RungRecord::Rank rank;  // its place in paused_ranks_[index]
  };
  std::map<int64_t, PausedAt> paused_;                    // paused trial id -> where
  std::vector<std::set<RungRecord::Rank>> paused_ranks_;  // per rung: paused trials, best first
  bool ran_every_epoch_ = false;                          // some trial reported the last epoch
};

// The median stopping rule (Katib's medianstop, Google Vizier's automated early stopping). At
// epoch e with start_step <= e < epochs (a trial at its last epoch is never stopped: it is done),
// the other trials that reported epoch e and have at least one finite objective in epochs 1..e
// each give their running average (mean of their finite objectives over epochs 1..e). Once at
// least `min_trials` do, the trial stops when its best objective so far (NaN when it has no finite
// one) is strictly worse than the median of those averages (the mean of the two middle ones for
// an even count). Histories are kept for the whole sweep, whatever becomes of their trials; a
// repeated report of an epoch (as after a resume) replaces it and every later one. Reports of
// epochs outside 1..epochs are ignored (they go on).
class MedianRule {
 public:
  // min_trials >= 1, start_step >= 1, epochs >= 1.
  MedianRule(int64_t min_trials, int64_t start_step, int64_t epochs, Goal goal, std::string metric);

  // Stop reason: "stopped at epoch E by the median rule: best METRIC V worse than the median
  // running average M of N trials".
  SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective);

  int64_t min_trials() const { return min_trials_; }
  int64_t start_step() const { return start_step_; }

  // The histories (not the settings). Restore replaces them; false for bytes Save did not write,
  // and the rule is then left in an unspecified state (restore into a copy).
  void Save(ByteWriter* writer) const;
  bool Restore(ByteReader* reader);

 private:
  // One reported epoch with the finite objectives of epochs 1..e summed and counted.
  struct Point {
    double objective;
    double finite_sum;
    int64_t finite_count;
  };
  // Reported epoch -> its point; epochs not reported have no entry (a program that numbers its
  // reports by batch reports a few of millions), and their running average is the last
  // reported one's.
  using History = std::map<int64_t, Point>;

  // Sets epoch `epoch` of `history` to `objective`, dropping later epochs.
  static void Record(History* history, int64_t epoch, double objective);
  // The running average of `history` at `epoch` (from its last report at or before it), or
  // nullopt when the trial has not trained that far or reported no finite value by then.
  static std::optional<double> RunningAverage(const History& history, int64_t epoch);
  double BestSoFar(const History& history) const;

  int64_t min_trials_;
  int64_t start_step_;
  int64_t epochs_;
  Goal goal_;
  std::string metric_;
  std::map<int64_t, History> histories_;  // trial id -> its reported epochs
};

}  // namespace hpo::sched_internal
