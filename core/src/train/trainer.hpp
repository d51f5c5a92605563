// Data-parallel training of one trial of a ModelTask (hpo/model_task.hpp) on one trial group (the
// torch side; the coordinator, searchers and schedulers never include it). Every rank of the
// group calls RunTrial with the same TrialSpec; the call is collective over `collectives`.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/epoch_gate.hpp"
#include "hpo/model_task.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/trial.hpp"
#include "train/collectives.hpp"
#include "train/training_hooks.hpp"

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
  // Said first when a step runs out of memory (e.g. a shared GPU's share and what to lower).
  std::string out_of_memory_hint;
  // When non-empty, the leader saves the final model here (TrainableModel::Export); the runtime
  // keeps only the best trial's file.
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
  // Called before every training step (TrainingHooks); null: none. Borrowed.
  TrainingHooks* hooks = nullptr;
};

// What the trainer knows of a task for a whole sweep. Borrows `task`.
struct TrainingSetup {
  ModelTask* task = nullptr;
  // The task's hyperparameters: the defaults of those a trial does not sweep (the trainer reads
  // TrainerHyperparameters' names from them).
  std::vector<HyperparameterInfo> hyperparameters;
  // The metrics of an epoch in EpochMetrics order (ModelTaskMetricNames of the task's).
  std::vector<std::string> metric_names;
  int64_t threads_per_rank = 1;
};

// Trains `trial` on the task's data: identical initial weights on every rank (built from the trial
// seed, broadcast from the leader), each rank on its shard of every global batch (batch_size is
// global; the batch is split as evenly as possible and gradients weighted by shard size, so N
// ranks compute the same update as one rank with the same global batch), gradients averaged with
// bucketed allreduces, validation every epoch (each rank evaluates its shard; the task's sums are
// reduced in one allreduce). A NaN/inf loss, or an exception (out of memory included) on any rank
// while building the model, training or evaluating, ends the trial as failed on all ranks alike,
// with the first failing rank's reason; but a CUDA or NCCL error other than out of memory leaves
// the GPU unusable to the process, so the failing rank throws a std::runtime_error saying so and
// when (the runtime ends the job with it, and --resume runs the trial again). Returns BadInput for
// hyperparameter values the trainer or the task cannot take; the outcome holds the result
// otherwise. When `trained_model` is not null it receives this rank's model as it was when the
// trial ended (identical on every rank unless the trial failed), e.g. for tests that compare ranks'
// weights.
Status RunTrial(const TrainingSetup& setup, const TrialSpec& trial, GroupCollectives& collectives,
                EpochGate& gate, const TrainOptions& options, TrialOutcome* outcome,
                std::unique_ptr<TrainableModel>* trained_model = nullptr);

// Evaluates the model a trial with `params` saved (TrainOptions::save_weights_path) on the task's
// test split, on this rank alone: the task's metrics named test_* and its tables.
Status EvaluateSavedModel(const TrainingSetup& setup, const Assignment& params,
                          const std::string& weights_path, Evaluation* evaluation);

}  // namespace hpo
