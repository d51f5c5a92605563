// Private to hpo_model_runtime: the device a model task's trials train on in this process, once
// the sweep has placed the rank (runtime/device_plan.hpp sets GroupLayout::gpu). The only file of
// the libtorch side that knows whether the build has CUDA.
#pragma once

#include <cstdint>
#include <memory>

#include "hpo/mpi/group_layout.hpp"
#include "hpo/status.hpp"
#include "train/collectives.hpp"

namespace hpo {

// Before any CUDA work: makes layout.gpu the current CUDA device and caps torch's caching
// allocator there to 1/trials_per_gpu of the GPU's memory. Does nothing when layout.gpu is -1.
// Local.
Status ActivateDevice(const GroupLayout& layout, int64_t trials_per_gpu);

// The data plane of this rank's trial group: NCCL on the GPUs when layout.gpu >= 0 (after
// ActivateDevice), MPI otherwise. Collective over layout.group_comm, which must outlive it.
std::unique_ptr<GroupCollectives> MakeGroupCollectives(const GroupLayout& layout);

}  // namespace hpo
