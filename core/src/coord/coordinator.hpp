// Coordinator: rank 0's decisions in a sweep — which trial a free group runs next, whether a
// trial continues after an epoch (the scheduler, the metric target), what happens to a finished
// trial (study file, searcher and scheduler state, progress line, artifacts), and when the sweep
// ends (run_cap, search space, time budget, metric target, max_failed_trials), failed trials that
// run again (trial_retries), resume (Restore) and interruption (Interrupt). Finished trials are
// staged in the study as they arrive and published in groups (see PublishIfDue), each publish
// with the sweep's state, which is small and bounded: searcher_fingerprint and
// scheduler_fingerprint (the search and early stopping settings, so that a resume with others is
// refused), running_trials (the trials dispatched and not finished, with the epochs they
// reported), paused_retries (paused trials that had been retried: their seeds) and, with a warm
// start, warm_start (what the earlier studies held, whose trials the searcher and scheduler
// observe first, as trials -1, -2, ...: see CoordinatorDeps). The searcher's
// and scheduler's state is not saved: Restore rebuilds it by replaying the study's trials in file
// order (each trial's curve through ObserveEpoch and Scheduler::ReplayTrial, then Observe; a paused
// trial as pending) and then the running trials (ObservePending, their reports), which gives the
// state they had (both keep their records by trial id, so the order of arrival does not matter;
// ASHA's promotion variant records which trials were paused and promoted from where each trial's
// epochs end; a study written before this layout restores from its searcher_state and
// scheduler_state). So a study read back at any moment resumes consistently: the trials that were
// running, or had finished after the last publish, run again with the same ids, hyperparameters and
// seeds, from their checkpoints (a trial's checkpoint is deleted only once its result is
// published), and the searcher continues where it was. A trial dispatched after the last publish is
// suggested again (random, grid and Sobol suggest the same point, whose checkpoint is then used;
// TPE may suggest another, and a checkpoint of other hyperparameters is ignored). It knows neither
// MPI nor torch: the runtime feeds it the leaders' messages and sends its replies (Horovod's
// controller/execution split), so it is unit-tested with fakes.
//
// With ASHA's promotion variant, a trial the scheduler pauses at a rung is told to checkpoint and
// stop (as on an interruption); it becomes a study row with status "paused" (the sweep's later
// rows for the same trial supersede it: its next pause or its end, each with only the epochs
// after the previous row's) and waits, checkpoint kept, until the scheduler promotes it; then it
// is dispatched again, before new suggestions. A group that finds nothing to run while paused
// trials wait and other trials run waits for them (one of them may make a paused trial
// promotable). Paused trials count neither as finished nor against max_failed_trials.
//
// With population-based training (`pbt:`, sched/pbt.hpp) the searcher suggests only the initial
// members; a member that reaches a boundary pauses the same way (a "paused" row, checkpoint
// kept), and once the generation has gathered, the coordinator stages the replaced members' rows
// (stopped, the reason naming PBT and the new trial), copies each parent's checkpoint to its
// child's place (TrialArtifacts::CopyCheckpoint), queues the children (new ids, parent_trial and
// parent_epoch set) and the continuing members, and publishes at once, before anything of the
// generation is dispatched; the children's parents are kept in the attribute pbt_parents. Restore
// replays the study into the population (a child joins at its parent's epoch); a member that was
// running and had reported an undecided boundary pauses there again (its row then holds the sweep
// metric alone for the epochs since its last row), and a generation that had gathered but was not
// decided is decided then, the same way (the decision depends only on the values).
//
// A model-based suggestion (TPE, GP) can take a while, so it is computed on a worker thread of
// the coordinator's own (Searcher::StartSuggestion), from a snapshot of the searcher's data taken
// when the request is handled: meanwhile epoch reports, results and other requests are answered,
// and the suggestion is the same whatever the timing, for a given order of messages. A request
// that cannot be answered at once is answered later through TakeReplies. One suggestion is
// computed at a time; requests behind it wait in order, except that requeued trials go to them
// at once. Not thread-safe: one thread (rank 0's coordinator thread) calls it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coord/control_message.hpp"
#include "coord/warm_start.hpp"
#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "sched/pbt.hpp"
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
  // Population-based training: trial `to`'s checkpoint becomes a copy of trial `from`'s (a file,
  // or a command trial's folder), replacing any it had; nothing when `from` has none. Failure
  // when the copy cannot be made. By default nothing is copied.
  virtual Status CopyCheckpoint(int64_t from, int64_t to) {
    (void)from, (void)to;
    return Status::Ok();
  }
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
  // Called after each publish of the study, on the coordinator's thread (e.g. to refresh a live
  // report from the study just published); may be empty.
  std::function<void()> after_publish;
  // Earlier studies' trials (warm start): the searcher and, where their epochs match, the
  // scheduler observe them when the coordinator is made, as trials -1, -2, ..., before a resume's
  // replay. Their fingerprint is published with the sweep's state (attribute warm_start), and
  // Restore refuses a study whose recorded fingerprint differs.
  WarmStart warm_start;
};

// How many trials a sweep of `config` runs when none fails: run_cap, bounded by the size of the
// search space (`space`, when finite); with population-based training the initial population
// plus the members replaced at each boundary. The banner and `hpo status` say it.
int64_t PlannedTrialCount(const SweepConfig& config, std::optional<int64_t> space);

class Coordinator {
 public:
  Coordinator(const SweepConfig& config, int num_groups, CoordinatorDeps deps);

  // Resume: takes over a study an earlier run of the same sweep wrote (before any Handle call):
  // its finished trials count towards run_cap, max_failed_trials and the best trial, the searcher
  // and scheduler are rebuilt by replaying them (see above), and the trials that were running are
  // dispatched first. BadInput when the study was written with other search or early stopping
  // settings, holds other metrics than the config's (metric_names), or its state is damaged.
  // Replay costs what the sweep's own calls cost.
  Status Restore(const StudyContents& study);

  // The trials a study's last publish recorded as dispatched and not finished, with the epoch
  // reports they had sent (running_trials); none for a study without that attribute. BadInput
  // when it is damaged. For readers of a study being written (`hpo status`).
  static Status ReadRunningTrials(const StudyContents& study, std::map<int64_t, TrialSpec>* trials,
                                  std::map<int64_t, std::map<int64_t, double>>* reports);

  // The sweep is being interrupted (a preemption signal): no trial is dispatched any more, and
  // running trials are told at their next epoch report to checkpoint and stop. They stay in the
  // study's running_trials for the next run.
  void Interrupt(const std::string& reason);
  bool interrupted() const { return interrupted_; }
  // Trials dispatched and not finished (interrupted ones included).
  size_t trials_unfinished() const { return unfinished_.size(); }
  // Trials paused by the scheduler, waiting for promotion.
  size_t trials_paused() const { return paused_.size(); }
  // Why trials still paused when the sweep ends were never promoted (Scheduler::WhyLeftPaused).
  std::string why_left_paused() const;

  // Handles one message from the leader of `group` and sets `reply` to what must be sent back
  // (nullopt for kTrialResult, and for a kRequestTrial that waits on a suggestion being computed:
  // TakeReplies gives its answer later). Failure when the study file cannot be written or the
  // message makes no sense in the conversation (e.g. a result for a trial the group was not
  // running).
  Status Handle(int group, const ControlMessage& message, std::optional<ControlMessage>* reply);

  // Answers to earlier requests that have become ready (a suggestion was computed, or the sweep
  // ended while they waited), as (group, reply), in the order they were decided. The runtime calls
  // it between messages; it never blocks.
  std::vector<std::pair<int, ControlMessage>> TakeReplies();
  // Groups whose request has not been answered yet.
  size_t requests_waiting() const { return waiting_groups_.size() + (suggestion_ ? 1 : 0); }

  // True once every group has been told kNoMoreTrials (and so has sent all its results).
  bool Finished() const { return groups_done_ == num_groups_; }
  // After Restore: every planned trial has finished (run_cap or the search space used up) and none
  // is running, paused or waiting for a retry, so no group has anything to run.
  bool NothingLeftToRun() const {
    return requeued_.empty() && unfinished_.empty() && paused_.empty() &&
           next_trial_id_ >= planned_trials_;
  }

  // Group commit. A publish appends the staged rows and rewrites the small sweep state (tens of
  // microseconds, flat in the study's size; now and then a rewrite of the file that doubles its
  // capacity). Still, publishing once per result could take a noticeable share of a coordinator
  // that handles thousands of results a second, so a publish that took t seconds is followed by
  // the next one no sooner than kPublishSpacing * t later, which keeps publishing under 1% of the
  // coordinator's time however fast results arrive, while a study that publishes in microseconds
  // still publishes each result at once. The spacing is at most kLongestPublishSpacingSeconds: a
  // publish slowed by a loaded machine (a slow fsync, a descheduled rank 0) must not leave the
  // results that follow unsaved for minutes, where a crash of rank 0 would lose them. The runtime
  // calls PublishIfDue between messages: it publishes the staged results when the spacing allows;
  // with `idle` false (a message was just handled and more may be waiting) it waits on until the
  // oldest staged result is kLongestDeferralSeconds old, so that a burst of messages is answered
  // first. Failure when the study cannot be written. With no result staged, it publishes the
  // running trials' state (which trials run, the epochs each has reported: what `hpo status` and
  // the live report show, and what resume keeps) once it has been kRunningStateSeconds unpublished,
  // when idle and the spacing allows, so that a sweep of long trials is not seen standing still
  // until one finishes.
  static constexpr double kPublishSpacing = 99.0;
  static constexpr double kLongestPublishSpacingSeconds = 5.0;
  static constexpr double kLongestDeferralSeconds = 1.0;
  static constexpr double kRunningStateSeconds = 5.0;
  Status PublishIfDue(bool idle);
  // Publishes the staged results now, whatever the spacing (the end of the sweep); nothing to do
  // when none is staged.
  Status Publish();
  // Finished trials staged in the study and not yet published.
  size_t results_unpublished() const { return unpublished_.size(); }

  // The best finished trial by the sweep's goal, if any trial produced an objective. With several
  // objectives, the best of the primary one (the report lists the Pareto front).
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
  // "trial N: why" for the last trial recorded as failed; empty when none failed.
  const std::string& last_failure() const { return last_failure_; }

 private:
  Status HandleRequest(int group, bool interrupt, std::optional<ControlMessage>* reply);
  // Answers the waiting groups in order as far as possible: a requeued trial (resumed or retried)
  // first, then a new suggestion (cheap ones at once, others started on the worker thread, whose
  // group is answered once it is done), else kNoMoreTrials. Answers go to replies_.
  void AnswerWaitingGroups();
  // Finishes the suggestion being computed when it is done (its group is answered, or goes back
  // to the front of the queue when the sweep ended meanwhile).
  void CollectSuggestion();
  // The paused trial the scheduler promotes now (see Scheduler::Promote), if any.
  std::optional<TrialSpec> PromotedTrial(bool idle);
  // A trial runs in some group, or a suggestion for one is being computed.
  bool AnyTrialRunning() const;
  // Sets row->start_time_s to when the trial's current run was dispatched, which is then
  // forgotten (a paused trial's next run is dispatched anew); unchanged when not dispatched here.
  void TakeStartTime(TrialResult* row);
  // Trial `spec` paused at a rung: `row` (status paused) goes to the study, the trial waits in
  // paused_ with its checkpoint kept.
  Status Pause(const TrialSpec& spec, TrialResult row);
  // Stages a study row; a trial that paused before gets only its epochs after the last staged one
  // (its earlier epochs are in /curves already).
  Status StageRow(TrialResult row);
  // Sends trial `trial` to `group` (through replies_) and marks it running there.
  void Assign(int group, TrialSpec trial);
  TrialSpec NewTrial(int64_t trial_id, Assignment params) const;
  Status HandleEpochReport(int group, const ControlMessage& report,
                           std::optional<ControlMessage>* reply);
  Status HandleResult(int group, const TrialResult& result);
  // HandleResult's cases: a trial stopped at a rung it waits at (pausing_), a failed trial run
  // again (trial_retries), and the row of a trial that ended (its objective, start time, parents
  // and message; it leaves unfinished_ and pausing_).
  Status PauseAtRung(int group, const TrialResult& received, const TrialSpec& spec);
  Status Retry(TrialSpec* spec, const TrialResult& received);
  TrialResult FinishedRow(int group, const TrialResult& received);
  // The sweep's state as study attributes: searcher and scheduler fingerprints, unfinished trials
  // with their epoch reports.
  std::map<std::string, StudyAttribute> SweepStateAttributes() const;
  // Keeps an answered epoch report of a running trial for running_trials (a repeated epoch
  // replaces it and every later one).
  void RecordReport(const ControlMessage& report);
  // Restore's steps, in order. A study from before fingerprints: the searcher's and scheduler's
  // saved states. Any other: BadInput unless its searcher and scheduler fingerprints are this
  // sweep's (a study with no trial and no fingerprint passes).
  Status RestoreSavedStates(const StudyContents& study);
  Status CheckFingerprints(const StudyContents& study) const;
  // BadInput when the warm_start studies' fingerprint differs from the one the study recorded.
  Status CheckWarmStartUnchanged(const StudyContents& study) const;
  // The running trials with their reports (unfinished_, reports_), their PBT parents, and the
  // retries of paused trials (*paused_retries).
  Status ReadUnfinishedTrials(const StudyContents& study,
                              std::map<int64_t, TrialSpec>* paused_retries);
  // The study's rows in file order: paused trials into paused_ (unless running again), finished
  // ones counted (Count) and dropped from the unfinished.
  void RestoreFinishedAndPaused(const StudyContents& study,
                                const std::map<int64_t, TrialSpec>& paused_retries);
  // Restore's replay of the study and the running trials into the searcher and scheduler.
  void Replay(const StudyContents& study);
  // Restore's replay into the population (pbt_), after Replay.
  Status ReplayPopulation(const StudyContents& study);
  // Population-based training: decides the generation when it has gathered (`force`: nothing
  // else can join it), stages and queues its outcome and publishes; nothing to do otherwise.
  Status RunGeneration(bool force);
  // Stages member `exploit.replaced` of the generation at `epoch` as stopped (its pause at that
  // epoch is its last run) and counts it; it is never the best trial.
  Status StopReplacedMember(const PbtExploit& exploit, int64_t epoch);
  // Publishes the study with the sweep's state, then deletes the published trials' checkpoints
  // and the final weights of every published trial but the best (kept until then, so that the
  // published best trial's weights survive a crash).
  Status PublishState();
  // A trial that ends without a finite score (NaN: diverged or never reported; +-inf) is failed,
  // with the reason as its message: it must never become the best trial.
  void FailWithoutFiniteObjective(TrialResult* result) const;
  // Sets result->further_objectives to the further objectives' values of its last epoch (NaN
  // where absent, all NaN for a failed trial); empty with one objective.
  void TakeFurtherObjectives(TrialResult* result) const;
  // A trial's objectives, primary first, as Searcher::ObserveObjectives takes them.
  std::vector<double> AllObjectives(const TrialResult& result) const;
  // What the once-per-sweep warning about a program that started over says it costs;
  // `scheduler_weighs_it`: the scheduler now counts a resume at that cost (ResumesStartOver).
  std::string RestartConsequence(bool scheduler_weighs_it) const;
  // Records a finished trial in the counters and the best trial (also for restored trials).
  void Count(const TrialResult& result);
  bool IsBetter(double objective, double than) const;
  bool ReachesTarget(double objective) const;
  void EndSweep(const std::string& reason);
  void PrintProgress(const TrialResult& result) const;
  // Marks the running trials' state changed since the last publish (a trial started, an epoch).
  void NoteRunningChange();
  // Whether `name` is a `value:` parameter of the sweep (the progress line leaves those out).
  bool IsConstantParameter(const std::string& name) const;

  const SweepConfig& config_;
  const int num_groups_;
  CoordinatorDeps deps_;
  const double start_time_;
  int64_t ran_before_this_run_ = 0;  // trials finished or paused when Restore returned
  size_t objective_index_ = 0;
  std::vector<size_t> further_indices_;  // the further objectives' places in a report's metrics
  int64_t planned_trials_ = 0;
  int64_t next_trial_id_ = 0;
  int64_t trials_finished_ = 0;
  bool warned_restart_ = false;  // a trial whose program started over, said once
  int64_t trials_failed_ = 0;
  int groups_done_ = 0;
  bool search_exhausted_ = false;
  bool too_many_failures_ = false;
  std::string last_failure_;
  std::string end_reason_;
  std::vector<int64_t> running_;             // per group: its trial id, or -1
  std::vector<Assignment> running_params_;   // per group: its trial's hyperparameters
  std::map<int64_t, TrialSpec> unfinished_;  // dispatched, no final result yet
  std::map<int64_t, double> dispatched_at_;  // unfinished trials' start_time_s (Unix seconds)
  std::deque<TrialSpec> requeued_;           // to dispatch before new suggestions
  std::deque<int> waiting_groups_;           // requests not answered yet, oldest first
  struct SuggestionInFlight {
    int group;
    int64_t trial_id;
    std::future<std::optional<Assignment>> computed;
  };
  std::optional<SuggestionInFlight> suggestion_;         // on the worker thread
  std::vector<std::pair<int, ControlMessage>> replies_;  // decided, not yet taken
  bool interrupted_ = false;
  std::map<int64_t, std::string> stop_reasons_;  // running trials told to stop, and why
  std::map<int64_t, std::string> pausing_;       // running trials told to pause, and why
  std::map<int64_t, TrialSpec> paused_;          // paused at a rung, waiting for promotion
  std::map<int64_t, RunSpan> paused_runs_;       // paused trials' last runs (their paused rows)
  std::map<int64_t, int64_t> staged_epochs_;     // paused (or promoted) trial -> epochs in study
  int64_t target_trial_ = -1;                    // the first trial that reached the metric target
  std::optional<TrialResult> best_;
  std::vector<int64_t> unpublished_;         // trials staged in the study, not yet published
  std::vector<int64_t> weights_to_discard_;  // no longer the best; deleted at the next publish
  double first_unpublished_at_ = 0.0;        // clock() when the oldest of them was staged
  double running_changed_at_ = -1.0;  // clock() of the oldest unpublished running change; -1: none
  double next_publish_at_ = -std::numeric_limits<double>::infinity();  // none sooner (spacing)
  // Epoch reports (epoch -> objective) of trials dispatched and not published as finished.
  std::map<int64_t, std::map<int64_t, double>> reports_;
  std::unique_ptr<PbtPopulation> pbt_;  // with `pbt:` only
};

}  // namespace hpo
