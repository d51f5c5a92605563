#include "train/distributed_sampler.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

namespace hpo {
namespace {

uint64_t SplitMix64(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// Uniform in [0, bound] by rejection, so the result does not depend on the standard library's
// distribution algorithms.
uint64_t UniformUpTo(std::mt19937_64& engine, uint64_t bound) {
  if (bound == 0) return 0;
  const uint64_t range = bound + 1;
  if (range == 0) return engine();
  const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % range);
  uint64_t draw;
  do {
    draw = engine();
  } while (draw >= limit);
  return draw % range;
}

}  // namespace

std::vector<int64_t> ShuffledIndices(uint64_t seed, uint64_t stream, int64_t n) {
  std::vector<int64_t> indices(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  std::mt19937_64 engine(SplitMix64(SplitMix64(seed) ^ stream));
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(UniformUpTo(engine, static_cast<uint64_t>(i)));
    std::swap(indices[i], indices[j]);
  }
  return indices;
}

IndexRange ShardOf(IndexRange range, int rank, int size) {
  const int64_t length = range.size();
  const int64_t base = length / size;
  const int64_t extra = length % size;
  const int64_t begin = range.begin + rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

DistributedSampler::DistributedSampler(int64_t num_samples, int64_t global_batch, uint64_t seed,
                                       int rank, int size)
    : num_samples_(num_samples),
      global_batch_(global_batch),
      seed_(seed),
      rank_(rank),
      size_(size) {}

void DistributedSampler::SetEpoch(int64_t epoch) {
  permutation_ = ShuffledIndices(seed_, static_cast<uint64_t>(epoch), num_samples_);
}

int64_t DistributedSampler::num_steps() const {
  return (num_samples_ + global_batch_ - 1) / global_batch_;
}

IndexRange DistributedSampler::GlobalBatch(int64_t step) const {
  const int64_t begin = step * global_batch_;
  return {begin, std::min(begin + global_batch_, num_samples_)};
}

std::vector<int64_t> DistributedSampler::LocalIndices(int64_t step) const {
  const IndexRange shard = ShardOf(GlobalBatch(step), rank_, size_);
  return std::vector<int64_t>(permutation_.begin() + shard.begin, permutation_.begin() + shard.end);
}

}  // namespace hpo
