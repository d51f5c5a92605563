// The in-memory splits of a classification task (fashion_mnist and synthetic load or generate
// them in their folders under core/src/tasks), loaded once per rank and reused by every trial the
// rank trains. Owns its tensors; read-only after loading, so trials may share it.
#pragma once

#include <torch/torch.h>

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
  LabeledTensors validation;
  LabeledTensors test;  // held out; only the best trial is evaluated on it
  int64_t num_classes = 0;
};

}  // namespace hpo
