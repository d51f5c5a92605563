// Assembles a rank's training batches ahead of use: while step k trains, one background thread
// gathers the rows of step k+1 (and up to `depth` steps ahead) with the split's Dataset::Gather.
// The batches are those of `split.Gather(LocalIndices(step))`, in step order, so prefetching
// changes no result (TensorDataset copies rows with memcpy: no torch kernels, no RNG, no intra-op
// threads beside the training thread's). A step whose slice is empty on this rank gives an empty
// Batch. Ownership: borrows `split` and `sampler`, which must outlive the prefetcher and stay
// unchanged while it lives (the sampler's epoch already set). Thread-safety: one consumer thread
// calls Next() and Stop(); the destructor stops and joins the worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <torch/torch.h>

#include "hpo/model_task.hpp"
#include "train/distributed_sampler.hpp"

namespace hpo {

class BatchPrefetcher {
 public:
  // Yields steps first_step .. sampler.num_steps()-1. depth >= 1: a worker thread keeps up to
  // `depth` batches ready; depth 0: no thread, Next() gathers on the caller's thread.
  // Precondition: 0 <= first_step <= sampler.num_steps().
  BatchPrefetcher(const Dataset& split, const DistributedSampler& sampler, int64_t first_step,
                  int64_t depth);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The next step's batch, blocking until it is assembled. Rethrows an exception the worker hit
  // while gathering (e.g. std::bad_alloc). Precondition: fewer calls than the steps it yields.
  Batch Next();

  // Ends and joins the worker (a batch being gathered is finished first); idempotent. Next() must
  // not be called afterwards.
  void Stop();

  // Whether the worker thread is still to be joined.
  bool worker_running() const { return worker_.joinable(); }
  // Batches assembled so far (by the worker or by Next()).
  int64_t assembled() const;

 private:
  void Work();

  const Dataset& split_;
  const DistributedSampler& sampler_;
  const int64_t depth_;
  int64_t next_to_take_;
  int64_t next_to_assemble_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> ready_;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace hpo
