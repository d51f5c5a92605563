// The collectives that keep a model identical across a trial group. Models are owned by the
// caller; one per rank.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "hpo/model_task.hpp"
#include "train/collectives.hpp"

namespace hpo {

// Collective: copies the leader's parameters and buffers (flattened into one byte buffer, one
// Broadcast) into every rank's model. Every rank's model must have the same structure.
void BroadcastModelState(TrainableModel& model, GroupCollectives& collectives);

// Collective: makes every rank's buffers identical: float32 buffers (BatchNorm running statistics)
// are averaged over the group (one AllreduceSum), all other buffers (num_batches_tracked) are
// taken from the leader (one Broadcast). Does nothing in a group of one or without buffers.
void SyncBuffers(TrainableModel& model, GroupCollectives& collectives);

}  // namespace hpo
