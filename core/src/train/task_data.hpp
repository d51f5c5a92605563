// The datasets of a task, loaded once per rank and reused by every trial the rank trains.
// Owns its tensors; read-only after loading, so trials may share it.
#pragma once

#include <torch/torch.h>

#include "hpo/config.hpp"
#include "hpo/status.hpp"

namespace hpo {

struct LabeledTensors {
  // float32, [N, ...]. Fashion-MNIST: [N, 1, 28, 28], scaled to [0, 1] then normalised with the
  // dataset's mean 0.2860 and std 0.3530. Synthetic: [N, features].
  torch::Tensor inputs;
  torch::Tensor labels;  // int64, [N]
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct TaskData {
  LabeledTensors train;
  LabeledTensors validation;  // carved from the training set (fashion_mnist) or generated
  LabeledTensors test;        // held out; only the best trial is evaluated on it
  int64_t num_classes = 0;
};

// Loads the task's data on this rank. Fashion-MNIST: reads the four IDX files (gzip or plain) from
// execution.data (default /usr/share/datasets/fashion-mnist), checks magic numbers, shapes and
// sizes, and splits validation_samples off a fixed (seed-independent) shuffle of the training set.
// Missing, truncated or malformed files are BadInput naming the file. Synthetic: generated from a
// fixed data seed (the sweep seed), identical on every rank.
Status LoadTaskData(const ExecutionSpec& execution, TaskData* data);

}  // namespace hpo
