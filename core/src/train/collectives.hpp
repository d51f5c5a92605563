// GroupCollectives: the data plane of one trial group (the ranks that train one trial together),
// in the spirit of c10d's Backend: a small interface the trainer is written against, with an MPI
// implementation (mpi_collectives.hpp) and a single-rank one here, so DDP logic is unit-tested
// without mpirun. Every method is collective over the group: all its ranks call it in the same
// order with the same sizes, except Progress and Wait, which are local. A failed MPI or NCCL call
// ends the job (FailCollectiveCall in hpo/mpi/communicator.hpp), never just the trial. Not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hpo/reduced_float.hpp"

namespace hpo {

// One allreduce started by GroupCollectives::StartAllreduceSum: a plain value, meaningful only to
// the GroupCollectives that returned it. The default (id 0) names an allreduce already complete.
struct AllreduceHandle {
  uint64_t id = 0;
};

class GroupCollectives {
 public:
  virtual ~GroupCollectives() = default;

  virtual int rank() const = 0;  // 0 .. size()-1; rank 0 is the group leader
  virtual int size() const = 0;

  // Element-wise sum over the group, in place.
  virtual void AllreduceSum(float* data, size_t count) = 0;
  virtual void AllreduceSum(double* data, size_t count) = 0;

  // Starts an element-wise sum over the group, in place, and may return before it is done.
  // Collective: every rank starts the same allreduces in the same order with the same sizes.
  // `data` is the caller's: it must stay valid and untouched until Wait(handle) returns. This
  // default has no asynchronous transport: it runs AllreduceSum and returns a completed handle.
  virtual AllreduceHandle StartAllreduceSum(float* data, size_t count) {
    AllreduceSum(data, count);
    return {};
  }
  // As above for `count` 16-bit floats in `format` (compressed gradients): each partial sum is
  // rounded to the format, as NCCL's bf16/fp16 sums are. This default widens to float, runs
  // AllreduceSum and rounds once (so its sums are at least as accurate) and returns a completed
  // handle.
  virtual AllreduceHandle StartReducedFloatAllreduceSum(uint16_t* data, size_t count,
                                                        ReducedFloat format) {
    std::vector<float> wide(count);
    for (size_t i = 0; i < count; ++i) wide[i] = FromReducedFloat(data[i], format);
    AllreduceSum(wide.data(), count);
    for (size_t i = 0; i < count; ++i) data[i] = ToReducedFloat(wide[i], format);
    return {};
  }
  // Local: lets the outstanding allreduces advance (the MPI one tests its requests, since Open MPI
  // has no progress thread). Returns true when none is outstanding any more.
  virtual bool Progress() { return true; }
  // Local: returns once the allreduce of `handle` is complete and its sum is in its buffer. Waiting
  // for a completed handle returns at once.
  virtual void Wait(AllreduceHandle handle) { static_cast<void>(handle); }

  // Copies `bytes` bytes from `root`'s buffer into every other rank's buffer.
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;
};

// The group of one: every collective is the identity; StartAllreduceSum completes at once.
class SingleRankCollectives final : public GroupCollectives {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllreduceSum(float*, size_t) override {}
  void AllreduceSum(double*, size_t) override {}
  void Broadcast(void*, size_t, int) override {}
};

}  // namespace hpo
