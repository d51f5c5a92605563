// The GPU a process trains on, in the CUDA build (HPO_CUDA=ON) only. Which GPU is AssignGpu's rule
// (common/gpu_assignment.hpp), applied by the sweep (runtime/device_plan.hpp). Not thread-safe:
// call once per process, before any CUDA work.
#pragma once

#include <cstdint>

#include "hpo/status.hpp"

namespace hpo {

// Makes visible CUDA device `gpu` this process's current device (creating its context). With
// trials_per_gpu K > 1, caps torch's CUDA caching allocator on that device to 1/K of its memory
// less K contexts' worth (1 GiB each), so the K processes sharing the GPU fit in it together and
// none can starve the others: an allocation beyond the cap fails as out of memory, which ends only
// that trial. BadInput when `gpu` is not a visible device, trials_per_gpu < 1, or K contexts fill
// the GPU.
Status ActivateCudaDevice(int gpu, int64_t trials_per_gpu);

}  // namespace hpo
