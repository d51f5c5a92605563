// The GPU data plane of one trial group, in the CUDA build (HPO_CUDA=ON) only; the header pulls
// in CUDA and NCCL and is reached from no file of the CPU build.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <vector>

#include "hpo/mpi/communicator.hpp"
#include "mpi/mpi_collectives.hpp"
#include "train/collectives.hpp"

namespace hpo {

// Owns one NCCL communicator (ncclCommDestroy on destruction). Move-only; an empty one (the
// default, or moved from) owns nothing.
class NcclCommunicator {
 public:
  NcclCommunicator() = default;
  // Collective over `group`: its rank 0 creates the unique id (ncclGetUniqueId) and broadcasts it
  // over `group`; every rank then joins with ncclCommInitRank on its current CUDA device. A failed
  // NCCL or CUDA call here or in NcclGroupCollectives ends the job (FailCollectiveCall).
  static NcclCommunicator Create(const Communicator& group);
  ~NcclCommunicator();
  NcclCommunicator(NcclCommunicator&& other) noexcept;
  NcclCommunicator& operator=(NcclCommunicator&& other) noexcept;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const { return comm_; }

 private:
  explicit NcclCommunicator(ncclComm_t comm) : comm_(comm) {}
  ncclComm_t comm_ = nullptr;
};

// GroupCollectives over NCCL for device buffers and over the group's MPI communicator for host
// buffers (the trainer's control values: error flags, metric sums, checkpoint bytes). Device
// allreduces run on a dedicated high-priority stream of the current device, which first waits for
// the work already queued on the current (compute) stream, so an allreduce started from a
// gradient hook overlaps the rest of the backward pass. Wait blocks the host until the sum is in
// the buffer. Borrows `group` (which must outlive it); the constructor is collective over it and
// must run after the CUDA device is selected. The destructor waits for what is still in flight.
// Not thread-safe.
class NcclGroupCollectives final : public GroupCollectives {
 public:
  explicit NcclGroupCollectives(const Communicator& group);
  ~NcclGroupCollectives() override;
  NcclGroupCollectives(const NcclGroupCollectives&) = delete;
  NcclGroupCollectives& operator=(const NcclGroupCollectives&) = delete;

  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  void AllreduceSum(float* data, size_t count) override;
  void AllreduceSum(double* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  AllreduceHandle StartAllreduceSum(float* data, size_t count) override;
  // Device buffers as ncclBfloat16 / ncclFloat16 sums; host buffers through MPI.
  AllreduceHandle StartReducedFloatAllreduceSum(uint16_t* data, size_t count,
                                                ReducedFloat format) override;
  bool Progress() override;
  void Wait(AllreduceHandle handle) override;

 private:
  // One started allreduce: on the device (its completion event) or on the host (MPI's handle).
  struct Pending {
    uint64_t id = 0;
    cudaEvent_t done = nullptr;
    AllreduceHandle host;
  };

  // Queues a sum of `count` elements of `type` at device pointer `data` on stream_, after the
  // work queued on the current stream so far.
  void EnqueueAllreduce(void* data, size_t count, ncclDataType_t type);
  // EnqueueAllreduce, and a pending entry completed by an event recorded after it on stream_.
  AllreduceHandle StartDeviceAllreduce(void* data, size_t count, ncclDataType_t type);
  // A pending entry for an allreduce of host memory started on host_.
  AllreduceHandle TrackHostAllreduce(AllreduceHandle host);
  void Finish(Pending& pending);

  MpiGroupCollectives host_;
  NcclCommunicator nccl_;
  c10::cuda::CUDAStream stream_;
  std::vector<Pending> pending_;
  uint64_t next_id_ = 1;
};

// Whether `data` points into device (or managed) memory, as cudaPointerGetAttributes says.
bool IsDevicePointer(const void* data);

}  // namespace hpo
