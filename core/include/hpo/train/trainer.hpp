// Data-parallel training of one trial on one trial group (the torch side; nothing outside
// core/src/train includes torch). Every rank of the group calls RunTrial with the same TrialSpec;
// the call is collective over `collectives`.
#pragma once

#include <cstdint>
#include <string>

#include "hpo/collectives.hpp"
#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "hpo/train/task_data.hpp"
#include "hpo/trial.hpp"

namespace hpo {

// Decides after each epoch whether a trial goes on. Called on every rank of the group after the
// epoch's metrics are known (they are identical on all ranks); the implementation must return the
// same answer on all of them (the runtime asks rank 0 on the leader and broadcasts the answer).
class EpochGate {
 public:
  virtual ~EpochGate() = default;
  virtual bool ShouldContinue(int64_t trial_id, const EpochMetrics& metrics) = 0;
};

// Always continues.
class AlwaysContinue final : public EpochGate {
 public:
  bool ShouldContinue(int64_t, const EpochMetrics&) override { return true; }
};

struct TrialOutcome {
  TrialStatus status = TrialStatus::kCompleted;  // completed | stopped | failed
  std::vector<EpochMetrics> curve;               // metric order: TaskMetricNames(task)
  std::string message;                           // why it failed or stopped
  double duration_s = 0.0;
};

struct TrainOptions {
  int64_t epochs = 1;
  size_t bucket_bytes = 4u << 20;  // gradient allreduce bucket capacity
  // When non-empty, the leader saves the final weights here (torch::save of the model's
  // parameters and buffers); the runtime keeps only the best trial's file.
  std::string save_weights_path;
};

// Trains `trial` on `data`: identical initial weights on every rank (broadcast from the leader),
// each rank on its shard of every global batch (batch_size is global; the batch is split as evenly
// as possible and gradients weighted by shard size, so N ranks compute the same update as one rank
// with the same global batch), gradients averaged with bucketed allreduces, validation every epoch.
// A NaN/inf loss ends the trial as failed (on all ranks alike). Returns BadInput for
// hyperparameter values the task cannot take; the outcome holds the result otherwise.
Status RunTrial(const ExecutionSpec& execution, const TrialSpec& trial, const TaskData& data,
                GroupCollectives& collectives, EpochGate& gate, const TrainOptions& options,
                TrialOutcome* outcome);

// As above, and when `trained_model` is not null hands over this rank's model as it was when the
// trial ended (identical on every rank unless the trial failed), e.g. for tests that compare ranks'
// weights. Collective like RunTrial.
Status RunTrial(const ExecutionSpec& execution, const TrialSpec& trial, const TaskData& data,
                GroupCollectives& collectives, EpochGate& gate, const TrainOptions& options,
                TrialOutcome* outcome, torch::nn::Sequential* trained_model);

// Evaluates saved weights (from TrainOptions::save_weights_path) of a trial with `params` on
// `data.test` on this rank alone; returns the accuracy in [0, 1].
Status EvaluateSavedModel(const ExecutionSpec& execution, const Assignment& params,
                          const std::string& weights_path, const TaskData& data,
                          double* test_accuracy);

}  // namespace hpo
