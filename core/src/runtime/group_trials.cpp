#include "group_trials.hpp"

#include <exception>
#include <filesystem>

#include "hpo/control_message.hpp"
#include "hpo/mpi/control_plane.hpp"
#include "hpo/mpi/mpi_collectives.hpp"
#include "hpo/train/trainer.hpp"
#include "preemption.hpp"
#if HPO_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>

#include "hpo/gpu/nccl_collectives.hpp"
#endif

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
    if (decision.interrupt) return EpochVerdict::kInterrupt;
    return decision.keep_going ? EpochVerdict::kContinue : EpochVerdict::kStop;
  }

  bool InterruptRequested() override { return PreemptionWatch::Requested(); }

 private:
  const GroupLayout& layout_;
  LeaderChannel* channel_;
};

}  // namespace

void RunGroupTrials(const SweepConfig& config, const GroupLayout& layout, const TaskData& data,
                    const Communicator& control, const FaultInjection& fault) {
#if HPO_WITH_CUDA
  NcclGroupCollectives collectives(layout.group_comm);
#else
  MpiGroupCollectives collectives(layout.group_comm);
#endif
  LeaderChannel channel(control);
  ControlPlaneGate gate(layout, &channel);
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
    TrainOptions options;
    options.epochs = config.execution.epochs;
    options.save_weights_path = WeightsPath(config.execution.output, trial.trial_id);
    options.checkpoint_path = CheckpointPath(config.execution.output, trial.trial_id);
    options.checkpoint_interval = config.checkpoint.interval;
    options.bucket_bytes = static_cast<size_t>(config.ddp.bucket_mb * (1 << 20));
    options.first_bucket_bytes = static_cast<size_t>(config.ddp.first_bucket_mb * (1 << 20));
    options.overlap = config.ddp.overlap;
    options.compression = config.ddp.compression;
#if HPO_WITH_CUDA
    options.device =
        torch::Device(torch::kCUDA, c10::cuda::current_device());  // SelectCudaDevice's
#endif
    options.resume = true;
    options.fault = fault;
    TrialOutcome outcome;
    Status status;
    try {
      status = RunTrial(config.execution, trial, data, collectives, gate, options, &outcome);
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

std::string WeightsPath(const std::string& output, int64_t trial_id) {
  namespace fs = std::filesystem;
  return (fs::path(output) / "models" / ("trial_" + std::to_string(trial_id) + ".pt")).string();
}

std::string CheckpointPath(const std::string& output, int64_t trial_id) {
  namespace fs = std::filesystem;
  return (fs::path(output) / "checkpoints" / ("trial_" + std::to_string(trial_id) + ".pt"))
      .string();
}

}  // namespace hpo
