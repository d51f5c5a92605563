#include "gpu/cuda_device.hpp"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include "common/gpu_assignment.hpp"

namespace hpo {

Status SelectCudaDevice(int node_local_rank, int ranks_on_node, int64_t trials_per_gpu,
                        int* device) {
  const int visible = static_cast<int>(c10::cuda::device_count());
  int gpu = 0;
  HPO_RETURN_IF_ERROR(AssignGpu(node_local_rank, ranks_on_node, visible, trials_per_gpu, &gpu));
  const auto index = static_cast<c10::DeviceIndex>(gpu);
  c10::cuda::set_device(index);
  if (trials_per_gpu > 1) {
    c10::cuda::CUDACachingAllocator::setMemoryFraction(1.0 / static_cast<double>(trials_per_gpu),
                                                       index);
  }
  *device = gpu;
  return Status::Ok();
}

}  // namespace hpo
