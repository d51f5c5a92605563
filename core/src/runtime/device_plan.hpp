// Where each rank's own training runs: on the CPU, or on one GPU of its node. Decided once per
// sweep, before any task runner is made. The CPU build always trains on the CPU. The CUDA build
// counts each node's visible GPUs: when every node has one, each rank gets the GPU AssignGpu
// (common/gpu_assignment.hpp) gives it; when some node has none, every rank trains on the CPU with
// MPI collectives and rank 0 says so once, unless the config asks for GPUs (trials_per_gpu, or a
// command sweep's cuda_visible_devices: true), which is then BadInput. The only file of the
// runtime that knows whether the build has CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/status.hpp"
#include "train/collectives.hpp"

namespace hpo {

// What this build trains on, for `hpo --version`: "CPU build", or "CUDA build: CUDA runtime X.Y,
// NCCL A.B.C". Local; creates no CUDA context.
std::string DescribeDeviceBuild();

// Sets layout->gpu on every rank as above. Collective over `world`; the status is the same on
// every rank (BadInput naming the node that lacks GPUs). Creates no CUDA context.
Status PlaceOnDevices(const Communicator& world, const SweepConfig& config, GroupLayout* layout);

// For runners that train in this process, before any CUDA work: makes layout.gpu the current CUDA
// device and caps torch's caching allocator there to 1/trials_per_gpu of the GPU's memory. Does
// nothing when layout.gpu is -1. Local.
Status ActivateDevice(const GroupLayout& layout, int64_t trials_per_gpu);

// The data plane of this rank's trial group: NCCL on the GPUs when layout.gpu >= 0 (after
// ActivateDevice), MPI otherwise. Collective over layout.group_comm, which must outlive it.
std::unique_ptr<GroupCollectives> MakeGroupCollectives(const GroupLayout& layout);

}  // namespace hpo
