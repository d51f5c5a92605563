// The built-in tasks' models and the collectives that keep a model identical across a trial group.
// Models are owned by the caller (a torch::nn::Sequential is a shared handle); one per rank.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include <string>

#include "hpo/config.hpp"
#include "hpo/model_task.hpp"
#include "train/collectives.hpp"

namespace hpo {

// What a model is built from: the task, the `width` and `dropout` hyperparameters and the data's
// shape.
struct ModelSpec {
  std::string task = "synthetic";  // fashion_mnist or synthetic
  int64_t width = 16;
  double dropout = 0.0;
  int64_t input_features = 0;  // synthetic: features per sample; unused by fashion_mnist
  int64_t num_classes = 10;
};

// fashion_mnist, on [N, 1, 28, 28]: conv(1, w, 3, pad 1)-BN-ReLU-maxpool 2, conv(w, 2w, 3, pad 1)-
// BN-ReLU-maxpool 2, flatten, dropout, linear(2w*7*7, 128)-ReLU-dropout-linear(128, classes).
// synthetic, on [N, features]: linear(features, w)-ReLU-dropout-linear(w, w)-ReLU-dropout-
// linear(w, classes). Both return logits. Initial weights come from torch's global generator,
// which the caller seeds. Preconditions: width >= 1, 0 <= dropout < 1.
torch::nn::Sequential BuildModel(const ModelSpec& spec);

// Collective: copies the leader's parameters and buffers (flattened into one byte buffer, one
// Broadcast) into every rank's model. Every rank's model must have the same structure.
void BroadcastModelState(TrainableModel& model, GroupCollectives& collectives);

// Collective: makes every rank's buffers identical: float32 buffers (BatchNorm running statistics)
// are averaged over the group (one AllreduceSum), all other buffers (num_batches_tracked) are
// taken from the leader (one Broadcast). Does nothing in a group of one or without buffers.
void SyncBuffers(TrainableModel& model, GroupCollectives& collectives);

}  // namespace hpo
