// task: synthetic, the runner side: an in-memory classification data set drawn from a random
// linear teacher with Gaussian noise on its logits, and a small MLP, trained as a
// TensorClassifier by the DDP trainer. Finishes in seconds: tests and benchmarks use it.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "hpo/status.hpp"
#include "tasks/model_runtime/tensor_classifier.hpp"
#include "tasks/synthetic/options.hpp"
#include "train/task_data.hpp"

namespace hpo {

// Generates the splits from a fixed data seed (`seed`, the sweep's), identical on every rank:
// float32 [N, features] inputs, int64 labels. BadInput for sizes ReadSyntheticOptions refuses.
Status GenerateSyntheticData(const SyntheticOptions& options, uint64_t seed, TaskData* data);

// On [N, features]: linear(features, w)-ReLU-dropout-linear(w, w)-ReLU-dropout-linear(w, classes);
// logits.
torch::nn::Sequential BuildSyntheticMlp(int64_t features, int64_t width, double dropout,
                                        int64_t classes);

// The task over generated data (classes named 0, 1, ...).
std::unique_ptr<TensorClassifier> MakeSyntheticClassifier(const TaskData& data);

}  // namespace hpo
