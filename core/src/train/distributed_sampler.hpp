// How a trial group splits an epoch of training data: one permutation per epoch, global batches of
// batch_size consecutive entries of it, and each global batch cut into one contiguous slice per
// rank. Torch-free and independent of torch's global RNG (std::mt19937_64 + Fisher-Yates), so
// every rank derives the same permutation from (seed, epoch) without communicating. Plain value
// types and pure functions; thread-safe; no collectives.
#pragma once

#include <cstdint>
#include <vector>

namespace hpo {

// A half-open index range [begin, end).
struct IndexRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// A permutation of 0..n-1 drawn by Fisher-Yates from std::mt19937_64 seeded with a mix of `seed`
// and `stream`. The same arguments give the same permutation on every platform.
std::vector<int64_t> ShuffledIndices(uint64_t seed, uint64_t stream, int64_t n);

// Rank `rank` of `size`'s slice of `range`, split as evenly as possible: the first
// (range.size() % size) ranks get one element more. Possibly empty.
IndexRange ShardOf(IndexRange range, int rank, int size);

// The epochs of one trial on one rank: which training samples rank `rank` of a `size`-rank group
// uses at each step. Every rank of the group constructs it with the same num_samples,
// global_batch and seed, and they all see the same number of steps (a rank whose slice of a step
// is empty still takes part in that step's collectives).
class DistributedSampler {
 public:
  // Preconditions: num_samples >= 0, global_batch >= 1, 0 <= rank < size.
  DistributedSampler(int64_t num_samples, int64_t global_batch, uint64_t seed, int rank, int size);

  // Draws the permutation of `epoch` (1-based by convention) from (seed, epoch).
  void SetEpoch(int64_t epoch);

  // ceil(num_samples / global_batch): the last, partial, batch is kept.
  int64_t num_steps() const;
  // The positions in the permutation that global batch `step` covers.
  IndexRange GlobalBatch(int64_t step) const;
  // This rank's sample indices at `step` (a contiguous slice of the global batch). Requires
  // SetEpoch to have been called.
  std::vector<int64_t> LocalIndices(int64_t step) const;

  const std::vector<int64_t>& permutation() const { return permutation_; }

 private:
  int64_t num_samples_;
  int64_t global_batch_;
  uint64_t seed_;
  int rank_;
  int size_;
  std::vector<int64_t> permutation_;
};

}  // namespace hpo
