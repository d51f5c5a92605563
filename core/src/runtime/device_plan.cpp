#include "device_plan.hpp"

#if HPO_WITH_CUDA
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#include <string>

#include "common/gpu_assignment.hpp"
#include "mpi/status_collectives.hpp"
#endif

namespace hpo {

#if HPO_WITH_CUDA
namespace {

std::string ProcessorName() {
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int length = 0;
  HPO_MPI_CHECK(MPI_Get_processor_name(name, &length));
  return std::string(name, static_cast<size_t>(length));
}

// The keys by which `config` asks for GPUs, as the config writes them, or "" when it does not.
std::string GpuRequest(const SweepConfig& config) {
  std::string keys;
  if (config.execution.gpus_requested) keys = "trials_per_gpu";
  if (config.command.cuda_visible_devices) {
    keys += std::string(keys.empty() ? "" : " and ") + "cuda_visible_devices: true";
  }
  return keys;
}

// The CUDA devices this process sees; 0 with the runtime's reason in *why when it sees none.
// Creates no context.
int VisibleGpus(std::string* why) {
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  if (result != cudaSuccess) {
    *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(result);
    cudaGetLastError();  // clear the error a failed runtime start leaves
    return 0;
  }
  if (count == 0) *why = "no CUDA device is visible";
  return count;
}

}  // namespace

std::string DescribeDeviceBuild() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  int nccl = 0;
  ncclGetVersion(&nccl);
  return "CUDA build: CUDA runtime " + std::to_string(runtime / 1000) + "." +
         std::to_string(runtime % 1000 / 10) + ", NCCL " + std::to_string(nccl / 10000) + "." +
         std::to_string(nccl / 100 % 100) + "." + std::to_string(nccl % 100);
}

Status PlaceOnDevices(const Communicator& world, const SweepConfig& config, GroupLayout* layout) {
  layout->gpu = -1;
  std::string why;
  const int gpus = VisibleGpus(&why);
  const Status lacking = AgreeOnStatus(
      world,
      gpus > 0 ? Status::Ok() : Status::BadInput(ProcessorName() + " has no GPU (" + why + ")"));
  if (lacking.ok()) {
    int gpu = -1;
    HPO_RETURN_IF_ERROR(
        AgreeOnStatus(world, AssignGpu(layout->node_local_rank, layout->ranks_on_node, gpus,
                                       config.execution.trials_per_gpu, &gpu)
                                 .WithContext(ProcessorName())));
    layout->gpu = gpu;
    if (world.rank() == 0) {
      const int64_t sharing = config.execution.trials_per_gpu;
      const int64_t used = (layout->ranks_on_node + sharing - 1) / sharing;
      std::fprintf(stderr, "hpo: %s: %d ranks on %lld GPU%s (trials_per_gpu %lld)\n",
                   ProcessorName().c_str(), layout->ranks_on_node, static_cast<long long>(used),
                   used == 1 ? "" : "s", static_cast<long long>(sharing));
    }
    return Status::Ok();
  }
  const std::string request = GpuRequest(config);
  if (!request.empty()) {
    return Status::BadInput("the config asks for GPUs (" + request + "), but " + lacking.message() +
                            ": run it on GPU nodes, or remove " + request + " to train on the CPU");
  }
  if (world.rank() == 0) {
    std::fprintf(stderr, "hpo: note: built with CUDA, but %s: trials train on the CPU\n",
                 lacking.message().c_str());
  }
  return Status::Ok();
}

#else  // the CPU build

std::string DescribeDeviceBuild() { return "CPU build"; }

Status PlaceOnDevices(const Communicator&, const SweepConfig&, GroupLayout* layout) {
  layout->gpu = -1;
  return Status::Ok();
}

#endif

}  // namespace hpo
