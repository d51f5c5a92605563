// Data-parallel training of one trial on one trial group (the torch side; nothing outside
// core/src/train includes torch). Every rank of the group calls RunTrial with the same TrialSpec;
// the call is collective over `collectives`.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "hpo/collectives.hpp"
#include "hpo/config.hpp"
#include "hpo/epoch_gate.hpp"
#include "hpo/status.hpp"
#include "hpo/train/task_data.hpp"
#include "hpo/trial.hpp"

namespace hpo {

struct TrainOptions {
  int64_t epochs = 1;
  // Gradient allreduce buckets (GradientBuckets): the first bucket reduced (the last layers'
  // gradients) holds at most first_bucket_bytes, the others bucket_bytes; with `overlap`, buckets
  // are reduced asynchronously during backward, otherwise one after another after it.
  size_t bucket_bytes = 25u << 20;
  size_t first_bucket_bytes = 1u << 20;
  bool overlap = true;
  // The 16-bit format gradients travel in; none: float32.
  std::optional<ReducedFloat> compression;
  // Where the model trains: batches are copied to it, gradients are reduced there (NCCL for a CUDA
  // device in the CUDA build). Checkpoints are read back onto it whatever device wrote them.
  torch::Device device = torch::kCPU;
  // When non-empty, the leader saves the final weights here (torch::save of the model's
  // parameters and buffers); the runtime keeps only the best trial's file.
  std::string save_weights_path;
  // The trial's checkpoint file (model, optimizer, position in the data order, curve so far),
  // written by the leader (to a temporary name, then renamed) and read by the leader, which
  // broadcasts it to the group. Empty: no checkpoints.
  std::string checkpoint_path;
  // Checkpoint after every `checkpoint_interval` epochs and after the last one (0: only when
  // interrupted), so that a finished trial's result survives until rank 0 has recorded it.
  int64_t checkpoint_interval = 1;
  // Continue from checkpoint_path when it holds a checkpoint of this trial (same id and
  // hyperparameters); otherwise start from the beginning.
  bool resume = false;
  // Training batches assembled ahead by a background thread (0: on the training thread, when
  // needed). Changes no result; see BatchPrefetcher.
  int64_t prefetch_batches = 1;
  FaultInjection fault;
};

// Trains `trial` on `data`: identical initial weights on every rank (broadcast from the leader),
// each rank on its shard of every global batch (batch_size is global; the batch is split as evenly
// as possible and gradients weighted by shard size, so N ranks compute the same update as one rank
// with the same global batch), gradients averaged with bucketed allreduces, validation every epoch.
// A NaN/inf loss, or an exception (out of memory included) on any rank while building the model,
// training or evaluating, ends the trial as failed on all ranks alike, with the first failing
// rank's reason. Returns BadInput for hyperparameter values the task cannot take; the outcome
// holds the result otherwise.
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
