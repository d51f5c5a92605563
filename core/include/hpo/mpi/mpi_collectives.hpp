// GroupCollectives over an MPI communicator: the CPU data plane of one trial group. Borrows the
// communicator (which must outlive it). Collective semantics as in GroupCollectives; not
// thread-safe.
#pragma once

#include "hpo/collectives.hpp"
#include "hpo/mpi/communicator.hpp"

namespace hpo {

class MpiGroupCollectives final : public GroupCollectives {
 public:
  explicit MpiGroupCollectives(const Communicator& group) : group_(group) {}

  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  void AllreduceSum(float* data, size_t count) override;
  void AllreduceSum(double* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;

 private:
  const Communicator& group_;
};

}  // namespace hpo
