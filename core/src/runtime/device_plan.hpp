// Where each rank's own training runs: on the CPU, or on one GPU of its node. Decided once per
// sweep, before any task runner is made. The CPU build always trains on the CPU. The CUDA build
// counts each node's visible GPUs: when every node has one, each rank gets the GPU AssignGpu
// (common/gpu_assignment.hpp) gives it; when some node has none, every rank trains on the CPU with
// MPI collectives and rank 0 says so once, unless the config asks for GPUs (trials_per_gpu, or a
// command sweep's cuda_visible_devices: true), which is then BadInput. The only file of the
// runtime that knows whether the build has CUDA (it needs the CUDA runtime and NCCL, never
// torch); where a model task's trials then train is model_runtime/training_device.hpp.
#pragma once

#include <string>

#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/status.hpp"

namespace hpo {

// What this build trains on, for `hpo --version`: "CPU build", or "CUDA build: CUDA runtime X.Y,
// NCCL A.B.C". Local; creates no CUDA context.
std::string DescribeDeviceBuild();

// Sets layout->gpu on every rank as above. Collective over `world`; the status is the same on
// every rank (BadInput naming the node that lacks GPUs). Creates no CUDA context.
Status PlaceOnDevices(const Communicator& world, const SweepConfig& config, GroupLayout* layout);

}  // namespace hpo
