// Coordinator: rank 0's decisions in a sweep — which trial a free group runs next, whether a
// trial continues after an epoch (the scheduler, the metric target), what happens to a finished
// trial (study file, searcher and scheduler state, progress line, artifacts), and when the sweep
// ends (run_cap, search space, time budget, metric target, max_failed_trials), failed trials that
// run again (trial_retries), resume (Restore) and interruption (Interrupt). Finished trials are
// staged in the study as they arrive and published in groups (see PublishIfDue), each publish
// with the sweep's state (searcher_state, scheduler_state and running_trials: the trials
// dispatched and not finished), so that a study read back at any moment resumes
// consistently: the trials that were running, or had finished after the last publish, run again
// with the same ids, hyperparameters and seeds, from their checkpoints (a trial's checkpoint is
// deleted only once its result is published), and the searcher continues where it was. A trial
// dispatched after the last publish is suggested again (random, grid and Sobol suggest the same
// point, whose checkpoint is then used; TPE may suggest another, and a checkpoint of other
// hyperparameters is ignored). It knows neither MPI nor torch: the runtime feeds it the leaders'
// messages and sends its replies (Horovod's controller/execution split), so it is unit-tested
// with fakes. Not thread-safe: one thread (rank 0's coordinator thread) calls it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coord/control_message.hpp"
#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "sched/scheduler.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace hpo {

// Per-trial files the coordinator keeps or drops: the final weights (only the best trial's stay)
// and the checkpoint (dropped once the trial's result is in the study).
class TrialArtifacts {
 public:
  virtual ~TrialArtifacts() = default;
  // Removes trial `trial_id`'s final weights; missing files are not an error.
  virtual void Discard(int64_t trial_id) = 0;
  // Removes trial `trial_id`'s checkpoint; missing files are not an error.
  virtual void DiscardCheckpoint(int64_t trial_id) = 0;
};

// The collaborators a coordinator owns (searcher, scheduler) or borrows (the rest, which must
// outlive it). `scheduler`, `artifacts` and `progress` may be null; `clock` returns seconds since
// an arbitrary origin.
struct CoordinatorDeps {
  std::unique_ptr<Searcher> searcher;
  std::unique_ptr<Scheduler> scheduler;
  StudyWriter* study = nullptr;
  TrialArtifacts* artifacts = nullptr;
  std::ostream* progress = nullptr;
  std::function<double()> clock;
};

class Coordinator {
 public:
  Coordinator(const SweepConfig& config, int num_groups, CoordinatorDeps deps);

  // Resume: takes over a study an earlier run of the same sweep wrote (before any Handle call):
  // its finished trials count towards run_cap, max_failed_trials and the best trial, the searcher
  // and scheduler continue from the saved state, and the trials that were running are dispatched
  // first. BadInput when the study's state cannot be restored.
  Status Restore(const StudyContents& study);

  // The sweep is being interrupted (a preemption signal): no trial is dispatched any more, and
  // running trials are told at their next epoch report to checkpoint and stop. They stay in the
  // study's running_trials for the next run.
  void Interrupt(const std::string& reason);
  bool interrupted() const { return interrupted_; }
  // Trials dispatched and not finished (interrupted ones included).
  size_t trials_unfinished() const { return unfinished_.size(); }

  // Handles one message from the leader of `group` and sets `reply` to what must be sent back
  // (nullopt for kTrialResult). Failure when the study file cannot be written or the message makes
  // no sense in the conversation (e.g. a result for a trial the group was not running).
  Status Handle(int group, const ControlMessage& message, std::optional<ControlMessage>* reply);

  // True once every group has been told kNoMoreTrials (and so has sent all its results).
  bool Finished() const { return groups_done_ == num_groups_; }

  // Group commit. Publishing writes the whole study, so its cost grows with the study (a copy of
  // the file image); publishing once per result would make a long sweep's coordinator slower with
  // every trial. Instead a publish that took t seconds is followed by the next one no sooner than
  // kPublishSpacing * t later, which keeps publishing under 1% of the coordinator's time however
  // fast results arrive, while a study that publishes in microseconds still publishes each result
  // at once. The runtime calls PublishIfDue between messages: it publishes the staged results when
  // the spacing allows; with `idle` false (a message was just handled and more may be waiting) it
  // waits on until the oldest staged result is kLongestDeferralSeconds old, so that a burst of
  // messages is answered first. Failure when the study cannot be written.
  static constexpr double kPublishSpacing = 99.0;
  static constexpr double kLongestDeferralSeconds = 1.0;
  Status PublishIfDue(bool idle);
  // Publishes the staged results now, whatever the spacing (the end of the sweep); nothing to do
  // when none is staged.
  Status Publish();
  // Finished trials staged in the study and not yet published.
  size_t results_unpublished() const { return unpublished_.size(); }

  // The best finished trial by the sweep's goal, if any trial produced an objective.
  const std::optional<TrialResult>& best_trial() const { return best_; }
  int64_t trials_finished() const { return trials_finished_; }
  // The trial `group` is running, or -1 when it runs none.
  int64_t RunningTrial(int group) const { return running_[static_cast<size_t>(group)]; }
  // How many trials the sweep will run at most: min(run_cap, size of the search space).
  int64_t planned_trials() const { return planned_trials_; }
  // Why the sweep stopped dispatching before run_cap and the search space ran out (time budget,
  // target reached, too many failures); empty otherwise.
  const std::string& end_reason() const { return end_reason_; }
  // True when more trials failed than max_failed_trials allows: the sweep ends as a failure.
  bool too_many_failures() const { return too_many_failures_; }

 private:
  Status HandleRequest(int group, bool interrupt, std::optional<ControlMessage>* reply);
  // The next trial to run: a requeued one (resumed or retried) first, then a new suggestion.
  std::optional<TrialSpec> NextTrial();
  Status HandleEpochReport(int group, const ControlMessage& report,
                           std::optional<ControlMessage>* reply);
  Status HandleResult(int group, const TrialResult& result);
  // The sweep's state as study attributes: searcher, scheduler, unfinished trials.
  std::map<std::string, StudyAttribute> SweepStateAttributes() const;
  // Publishes the study with the sweep's state, then deletes the published trials' checkpoints
  // and the final weights of every published trial but the best (kept until then, so that the
  // published best trial's weights survive a crash).
  Status PublishState();
  // Records a finished trial in the counters and the best trial (also for restored trials).
  void Count(const TrialResult& result);
  bool IsBetter(double objective, double than) const;
  bool ReachesTarget(double objective) const;
  void EndSweep(const std::string& reason);
  void PrintProgress(const TrialResult& result) const;

  const SweepConfig& config_;
  const int num_groups_;
  CoordinatorDeps deps_;
  const double start_time_;
  size_t objective_index_ = 0;
  int64_t planned_trials_ = 0;
  int64_t next_trial_id_ = 0;
  int64_t trials_finished_ = 0;
  int64_t trials_failed_ = 0;
  int groups_done_ = 0;
  bool search_exhausted_ = false;
  bool too_many_failures_ = false;
  std::string end_reason_;
  std::vector<int64_t> running_;             // per group: its trial id, or -1
  std::vector<Assignment> running_params_;   // per group: its trial's hyperparameters
  std::map<int64_t, TrialSpec> unfinished_;  // dispatched, no final result yet
  std::map<int64_t, double> dispatched_at_;  // unfinished trials' start_time_s (Unix seconds)
  std::deque<TrialSpec> requeued_;           // to dispatch before new suggestions
  bool interrupted_ = false;
  std::map<int64_t, std::string> stop_reasons_;  // running trials told to stop, and why
  int64_t target_trial_ = -1;                    // the first trial that reached the metric target
  std::optional<TrialResult> best_;
  std::vector<int64_t> unpublished_;         // trials staged in the study, not yet published
  std::vector<int64_t> weights_to_discard_;  // no longer the best; deleted at the next publish
  double first_unpublished_at_ = 0.0;        // clock() when the oldest of them was staged
  double next_publish_at_ = -std::numeric_limits<double>::infinity();  // none sooner (spacing)
};

}  // namespace hpo
