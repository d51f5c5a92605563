// GroupCollectives over an MPI communicator: the CPU data plane of one trial group. Borrows the
// communicator (which must outlive it). Collective semantics as in GroupCollectives; asynchronous
// allreduces are MPI_Iallreduce requests owned by this object (the destructor waits for any still
// outstanding). Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "hpo/mpi/communicator.hpp"
#include "train/collectives.hpp"

namespace hpo {

class MpiGroupCollectives final : public GroupCollectives {
 public:
  // Local: creates the MPI reduction ops of the 16-bit formats (freed by the destructor).
  explicit MpiGroupCollectives(const Communicator& group);
  ~MpiGroupCollectives() override;
  MpiGroupCollectives(const MpiGroupCollectives&) = delete;
  MpiGroupCollectives& operator=(const MpiGroupCollectives&) = delete;

  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  void AllreduceSum(float* data, size_t count) override;
  void AllreduceSum(double* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  AllreduceHandle StartAllreduceSum(float* data, size_t count) override;
  // MPI_Iallreduce of MPI_UINT16_T with a user-defined sum (AccumulateReducedFloats).
  AllreduceHandle StartReducedFloatAllreduceSum(uint16_t* data, size_t count,
                                                ReducedFloat format) override;
  bool Progress() override;
  void Wait(AllreduceHandle handle) override;

 private:
  // One started allreduce: one request per piece of at most INT_MAX elements.
  struct Pending {
    uint64_t id = 0;
    std::vector<MPI_Request> requests;
  };

  // Starts MPI_Iallreduce in pieces of at most INT_MAX elements of `element_bytes` each.
  AllreduceHandle StartInPieces(void* data, size_t count, size_t element_bytes, MPI_Datatype type,
                                MPI_Op op);

  const Communicator& group_;
  MPI_Op bfloat16_sum_ = MPI_OP_NULL;
  MPI_Op float16_sum_ = MPI_OP_NULL;
  std::vector<Pending> pending_;  // started, not yet seen complete
  uint64_t next_id_ = 1;
};

}  // namespace hpo
