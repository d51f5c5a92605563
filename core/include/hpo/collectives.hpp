// GroupCollectives: the data plane of one trial group (the ranks that train one trial together),
// in the spirit of c10d's Backend: a small interface the trainer is written against, with an MPI
// implementation (mpi_collectives.hpp) and a single-rank one here, so DDP logic is unit-tested
// without mpirun. Every method is collective over the group: all its ranks call it in the same
// order with the same sizes. Failures are fatal (MPI's default error handler aborts the job).
// Not thread-safe.
#pragma once

#include <cstddef>

namespace hpo {

class GroupCollectives {
 public:
  virtual ~GroupCollectives() = default;

  virtual int rank() const = 0;  // 0 .. size()-1; rank 0 is the group leader
  virtual int size() const = 0;

  // Element-wise sum over the group, in place.
  virtual void AllreduceSum(float* data, size_t count) = 0;
  virtual void AllreduceSum(double* data, size_t count) = 0;

  // Copies `bytes` bytes from `root`'s buffer into every other rank's buffer.
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;
};

// The group of one: every collective is the identity.
class SingleRankCollectives final : public GroupCollectives {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllreduceSum(float*, size_t) override {}
  void AllreduceSum(double*, size_t) override {}
  void Broadcast(void*, size_t, int) override {}
};

}  // namespace hpo
