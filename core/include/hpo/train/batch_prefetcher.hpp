// Assembles a rank's training batches ahead of use: while step k trains, one background thread
// gathers the rows of step k+1 (and up to `depth` steps ahead) from the rank's training tensors.
// The batches are bitwise those of `tensor.index_select(0, LocalIndices(step))`, in step order, so
// prefetching changes no result. The worker only allocates and copies rows (memcpy, no torch
// kernels, no RNG), so it uses no intra-op threads beside the training thread's.
// Ownership: borrows `data` and `sampler`, which must outlive the prefetcher and stay unchanged
// while it lives (the sampler's epoch already set). Thread-safety: one consumer thread calls
// Next() and Stop(); the destructor stops and joins the worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <torch/torch.h>

#include "hpo/train/distributed_sampler.hpp"
#include "hpo/train/task_data.hpp"

namespace hpo {

// One step's rows on one rank. Both tensors are undefined when the rank's slice of the step is
// empty.
struct TrainingBatch {
  torch::Tensor inputs;
  torch::Tensor labels;
};

// The rows `indices` of `split`, gathered on the calling thread (memcpy of rows for contiguous
// tensors, index_select otherwise).
TrainingBatch GatherRows(const LabeledTensors& split, const std::vector<int64_t>& indices);

class BatchPrefetcher {
 public:
  // Yields steps first_step .. sampler.num_steps()-1. depth >= 1: a worker thread keeps up to
  // `depth` batches ready; depth 0: no thread, Next() gathers on the caller's thread.
  // Preconditions: split.inputs and split.labels are contiguous; 0 <= first_step <=
  // sampler.num_steps().
  BatchPrefetcher(const LabeledTensors& split, const DistributedSampler& sampler,
                  int64_t first_step, int64_t depth);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The next step's batch, blocking until it is assembled. Rethrows an exception the worker hit
  // while gathering (e.g. std::bad_alloc). Precondition: fewer calls than the steps it yields.
  TrainingBatch Next();

  // Ends and joins the worker (a batch being gathered is finished first); idempotent. Next() must
  // not be called afterwards.
  void Stop();

  // Whether the worker thread is still to be joined.
  bool worker_running() const { return worker_.joinable(); }
  // Batches assembled so far (by the worker or by Next()).
  int64_t assembled() const;

 private:
  void Work();

  const LabeledTensors& split_;
  const DistributedSampler& sampler_;
  const int64_t depth_;
  int64_t next_to_take_;
  int64_t next_to_assemble_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<TrainingBatch> ready_;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace hpo
