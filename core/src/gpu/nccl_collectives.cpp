#include "gpu/nccl_collectives.hpp"

#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <string>
#include <utility>

namespace hpo {
namespace {

// A failed NCCL or CUDA call of the data plane ends the job, as a failed MPI call does: the one
// policy of FailCollectiveCall (hpo/mpi/communicator.hpp), never an exception the trainer would
// take for the trial's own failure.
[[noreturn]] void FailNcclCall(ncclResult_t result, const char* call, const char* file, int line) {
  FailCollectiveCall("NCCL", call, file, line, ncclGetErrorString(result));
}

[[noreturn]] void FailCudaCall(cudaError_t result, const char* call, const char* file, int line) {
  FailCollectiveCall("CUDA", call, file, line, cudaGetErrorString(result));
}

#define HPO_NCCL_CHECK(call)                                 \
  do {                                                       \
    const ncclResult_t hpo_nccl_rc_ = (call);                \
    if (hpo_nccl_rc_ != ncclSuccess) {                       \
      FailNcclCall(hpo_nccl_rc_, #call, __FILE__, __LINE__); \
    }                                                        \
  } while (false)

#define HPO_CUDA_CHECK(call)                                 \
  do {                                                       \
    const cudaError_t hpo_cuda_rc_ = (call);                 \
    if (hpo_cuda_rc_ != cudaSuccess) {                       \
      FailCudaCall(hpo_cuda_rc_, #call, __FILE__, __LINE__); \
    }                                                        \
  } while (false)

}  // namespace

bool IsDevicePointer(const void* data) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();  // older runtimes fail for unregistered host memory; clear the error
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

NcclCommunicator NcclCommunicator::Create(const Communicator& group) {
  ncclUniqueId id{};
  if (group.rank() == 0) HPO_NCCL_CHECK(ncclGetUniqueId(&id));
  HPO_MPI_CHECK(MPI_Bcast(&id, static_cast<int>(sizeof(id)), MPI_BYTE, 0, group.get()));
  ncclComm_t comm = nullptr;
  HPO_NCCL_CHECK(ncclCommInitRank(&comm, group.size(), id, group.rank()));
  return NcclCommunicator(comm);
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

NcclCommunicator::NcclCommunicator(NcclCommunicator&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)) {}

NcclCommunicator& NcclCommunicator::operator=(NcclCommunicator&& other) noexcept {
  if (this != &other) {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    comm_ = std::exchange(other.comm_, nullptr);
  }
  return *this;
}

NcclGroupCollectives::NcclGroupCollectives(const Communicator& group)
    : host_(group),
      nccl_(NcclCommunicator::Create(group)),
      stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, c10::cuda::current_device())) {}

NcclGroupCollectives::~NcclGroupCollectives() {
  for (Pending& pending : pending_) Finish(pending);
}

void NcclGroupCollectives::EnqueueAllreduce(void* data, size_t count, ncclDataType_t type) {
  cudaEvent_t ready = nullptr;
  HPO_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  HPO_CUDA_CHECK(cudaEventRecord(ready, c10::cuda::getCurrentCUDAStream().stream()));
  HPO_CUDA_CHECK(cudaStreamWaitEvent(stream_.stream(), ready, 0));
  HPO_CUDA_CHECK(cudaEventDestroy(ready));
  HPO_NCCL_CHECK(ncclAllReduce(data, data, count, type, ncclSum, nccl_.get(), stream_.stream()));
}

void NcclGroupCollectives::AllreduceSum(float* data, size_t count) {
  if (!IsDevicePointer(data)) return host_.AllreduceSum(data, count);
  EnqueueAllreduce(data, count, ncclFloat32);
  HPO_CUDA_CHECK(cudaStreamSynchronize(stream_.stream()));
}

void NcclGroupCollectives::AllreduceSum(double* data, size_t count) {
  if (!IsDevicePointer(data)) return host_.AllreduceSum(data, count);
  EnqueueAllreduce(data, count, ncclFloat64);
  HPO_CUDA_CHECK(cudaStreamSynchronize(stream_.stream()));
}

void NcclGroupCollectives::Broadcast(void* data, size_t bytes, int root) {
  if (!IsDevicePointer(data)) return host_.Broadcast(data, bytes, root);
  HPO_NCCL_CHECK(ncclBroadcast(data, data, bytes, ncclUint8, root, nccl_.get(), stream_.stream()));
  HPO_CUDA_CHECK(cudaStreamSynchronize(stream_.stream()));
}

AllreduceHandle NcclGroupCollectives::StartDeviceAllreduce(void* data, size_t count,
                                                           ncclDataType_t type) {
  Pending pending;
  pending.id = next_id_++;
  EnqueueAllreduce(data, count, type);
  HPO_CUDA_CHECK(cudaEventCreateWithFlags(&pending.done, cudaEventDisableTiming));
  HPO_CUDA_CHECK(cudaEventRecord(pending.done, stream_.stream()));
  pending_.push_back(pending);
  return {pending.id};
}

AllreduceHandle NcclGroupCollectives::TrackHostAllreduce(AllreduceHandle host) {
  Pending pending;
  pending.id = next_id_++;
  pending.host = host;
  pending_.push_back(pending);
  return {pending.id};
}

AllreduceHandle NcclGroupCollectives::StartAllreduceSum(float* data, size_t count) {
  if (IsDevicePointer(data)) return StartDeviceAllreduce(data, count, ncclFloat32);
  return TrackHostAllreduce(host_.StartAllreduceSum(data, count));
}

AllreduceHandle NcclGroupCollectives::StartReducedFloatAllreduceSum(uint16_t* data, size_t count,
                                                                    ReducedFloat format) {
  if (IsDevicePointer(data)) {
    return StartDeviceAllreduce(data, count,
                                format == ReducedFloat::kBFloat16 ? ncclBfloat16 : ncclFloat16);
  }
  return TrackHostAllreduce(host_.StartReducedFloatAllreduceSum(data, count, format));
}

bool NcclGroupCollectives::Progress() {
  const bool host_idle = host_.Progress();
  bool device_idle = true;
  for (const Pending& pending : pending_) {
    if (pending.done != nullptr && cudaEventQuery(pending.done) == cudaErrorNotReady) {
      device_idle = false;
    }
  }
  return host_idle && device_idle;
}

void NcclGroupCollectives::Finish(Pending& pending) {
  if (pending.done != nullptr) {
    cudaEvent_t done = std::exchange(pending.done, nullptr);
    HPO_CUDA_CHECK(cudaEventSynchronize(done));
    HPO_CUDA_CHECK(cudaEventDestroy(done));
  } else {
    host_.Wait(pending.host);
  }
}

void NcclGroupCollectives::Wait(AllreduceHandle handle) {
  const auto found = std::find_if(pending_.begin(), pending_.end(),
                                  [&](const Pending& pending) { return pending.id == handle.id; });
  if (found == pending_.end()) return;
  Pending pending = *found;
  pending_.erase(found);
  Finish(pending);
}

}  // namespace hpo
