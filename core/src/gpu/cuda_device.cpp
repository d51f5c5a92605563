#include "gpu/cuda_device.hpp"

#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <string>

namespace hpo {

namespace {

// What one process's CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers take on a GPU beside
// the tensors its caching allocator holds (about 0.5-0.9 GiB on current cards), kept out of the
// trials' shares so that trials_per_gpu processes together stay within the device's memory.
constexpr double kContextBytes = 1024.0 * 1024.0 * 1024.0;

}  // namespace

Status ActivateCudaDevice(int gpu, int64_t trials_per_gpu) {
  const int visible = static_cast<int>(c10::cuda::device_count());
  if (gpu < 0 || gpu >= visible) {
    return Status::BadInput("GPU " + std::to_string(gpu) + " is not one of the " +
                            std::to_string(visible) + " visible CUDA devices");
  }
  if (trials_per_gpu < 1) {
    return Status::BadInput("trials_per_gpu must be >= 1, got " + std::to_string(trials_per_gpu));
  }
  const auto index = static_cast<c10::DeviceIndex>(gpu);
  c10::cuda::set_device(index);
  if (trials_per_gpu == 1) return Status::Ok();
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  const cudaError_t result = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (result != cudaSuccess) {
    return Status::Failure(std::string("cudaMemGetInfo on GPU ") + std::to_string(gpu) + ": " +
                           cudaGetErrorString(result));
  }
  const double sharing = static_cast<double>(trials_per_gpu);
  const double total = static_cast<double>(total_bytes);
  const double share = (total - sharing * kContextBytes) / sharing;
  if (share <= 0.0) {
    return Status::BadInput(
        "trials_per_gpu " + std::to_string(trials_per_gpu) + " leaves no memory per trial on GPU " +
        std::to_string(gpu) + " (" + std::to_string(total_bytes >> 20) +
        " MiB, about 1 GiB per process for its CUDA context): lower trials_per_gpu");
  }
  try {
    // The caching allocator sizes its per-device state in CUDA's lazy initialisation, which a
    // libtorch program reaches only at its first CUDA tensor: before that, setMemoryFraction
    // throws "Allocator not initialized for device".
    at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
    c10::cuda::CUDACachingAllocator::setMemoryFraction(share / total, index);
  } catch (const c10::Error& error) {
    return Status::Failure("limiting GPU " + std::to_string(gpu) + " to its share of " +
                           std::to_string(trials_per_gpu) +
                           " trials: " + error.what_without_backtrace());
  }
  return Status::Ok();
}

}  // namespace hpo
