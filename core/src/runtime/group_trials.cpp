#include "group_trials.hpp"

#include <exception>

#include "coord/control_message.hpp"
#include "mpi/control_plane.hpp"
#include "preemption.hpp"

namespace hpo {

namespace {

// Asks rank 0 after every epoch whether the trial goes on; the leader asks, the group hears.
class ControlPlaneGate final : public EpochGate {
 public:
  ControlPlaneGate(const GroupLayout& layout, LeaderChannel* channel)
      : layout_(layout), channel_(channel) {}

  EpochVerdict AfterEpoch(int64_t trial_id, const EpochMetrics& metrics) override {
    ControlMessage decision;
    if (layout_.rank_in_group == 0) {
      ControlMessage report;
      report.kind = MessageKind::kEpochReport;
      report.trial_id = trial_id;
      report.metrics = metrics;
      decision = channel_->Exchange(report);
    }
    BroadcastMessage(layout_.group_comm, 0, &decision);
    return Verdict(decision);
  }

  EpochVerdict ReportFromLeader(int64_t trial_id, const EpochMetrics& metrics) override {
    ControlMessage report;
    report.kind = MessageKind::kEpochReport;
    report.trial_id = trial_id;
    report.metrics = metrics;
    return Verdict(channel_->Exchange(report));
  }

  bool InterruptRequested() override { return PreemptionWatch::Requested(); }

 private:
  static EpochVerdict Verdict(const ControlMessage& decision) {
    if (decision.interrupt) return EpochVerdict::kInterrupt;
    return decision.keep_going ? EpochVerdict::kContinue : EpochVerdict::kStop;
  }

  const GroupLayout& layout_;
  LeaderChannel* channel_;
};

}  // namespace

void RunGroupTrials(const SweepConfig& config, const GroupLayout& layout, TaskRunner& runner,
                    const Communicator& control) {
  LeaderChannel channel(control);
  ControlPlaneGate gate(layout, &channel);
  const TrialContext context{layout, gate, config.execution.output};
  const bool leader = layout.rank_in_group == 0;
  ControlMessage request;
  request.kind = MessageKind::kRequestTrial;
  for (;;) {
    ControlMessage assignment;
    request.interrupt = PreemptionWatch::Requested();
    if (leader) assignment = channel.Exchange(request);
    BroadcastMessage(layout.group_comm, 0, &assignment);
    if (assignment.kind == MessageKind::kNoMoreTrials) return;
    if (assignment.kind != MessageKind::kTrial) {
      AbortJob(ExitCode::kFailure, "control plane: expected a trial from rank 0");
    }
    const TrialSpec& trial = assignment.trial;
    TrialOutcome outcome;
    Status status;
    try {
      status = runner.RunTrial(trial, context, &outcome);
    } catch (const std::exception& error) {
      AbortJob(ExitCode::kFailure,
               "trial " + std::to_string(trial.trial_id) + " failed: " + error.what());
    }
    if (!status.ok()) {
      outcome.status = TrialStatus::kFailed;
      outcome.message = status.message();
    }
    if (leader) {
      ControlMessage done;
      done.kind = MessageKind::kTrialResult;
      done.result.trial_id = trial.trial_id;
      done.result.status = outcome.status;
      done.result.params = trial.params;
      done.result.duration_s = outcome.duration_s;
      done.result.group = layout.group;
      done.result.curve = std::move(outcome.curve);
      done.result.message = std::move(outcome.message);
      channel.Send(done);
    }
  }
}

}  // namespace hpo
