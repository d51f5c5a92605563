#include "train/distributed_sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace hpo {
namespace {

TEST(ShardOfTest, SplitsAsEvenlyAsPossibleFirstRanksLarger) {
  EXPECT_EQ(ShardOf({10, 20}, 0, 3).begin, 10);
  EXPECT_EQ(ShardOf({10, 20}, 0, 3).end, 14);
  EXPECT_EQ(ShardOf({10, 20}, 1, 3).begin, 14);
  EXPECT_EQ(ShardOf({10, 20}, 1, 3).end, 17);
  EXPECT_EQ(ShardOf({10, 20}, 2, 3).begin, 17);
  EXPECT_EQ(ShardOf({10, 20}, 2, 3).end, 20);
  EXPECT_EQ(ShardOf({0, 1}, 1, 2).size(), 0);
  EXPECT_EQ(ShardOf({5, 5}, 0, 1).size(), 0);
}

TEST(ShuffledIndicesTest, IsAPermutationDeterminedBySeedAndStream) {
  const std::vector<int64_t> a = ShuffledIndices(42, 1, 1000);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(a, identity);
  EXPECT_EQ(ShuffledIndices(42, 1, 1000), a);
  EXPECT_NE(ShuffledIndices(42, 2, 1000), a);
  EXPECT_NE(ShuffledIndices(43, 1, 1000), a);
  EXPECT_TRUE(ShuffledIndices(42, 1, 0).empty());
}

TEST(DistributedSamplerTest, SameSeedAndEpochSamePermutationOtherEpochOther) {
  DistributedSampler a(500, 32, 7, 0, 1);
  DistributedSampler b(500, 32, 7, 1, 3);
  a.SetEpoch(1);
  b.SetEpoch(1);
  EXPECT_EQ(a.permutation(), b.permutation());
  const std::vector<int64_t> first = a.permutation();
  a.SetEpoch(2);
  EXPECT_NE(a.permutation(), first);
  a.SetEpoch(1);
  EXPECT_EQ(a.permutation(), first);
  DistributedSampler other_seed(500, 32, 8, 0, 1);
  other_seed.SetEpoch(1);
  EXPECT_NE(other_seed.permutation(), first);
}

// Every global batch is covered exactly once, in order, by the ranks' slices, whose sizes differ
// by at most one (larger first); the last partial batch is kept.
TEST(DistributedSamplerTest, RankSlicesTileEveryGlobalBatchInOrder) {
  struct Case {
    int64_t samples;
    int64_t batch;
  };
  for (const Case c : {Case{103, 10}, Case{64, 64}, Case{5, 64}, Case{7, 2}, Case{1, 1}}) {
    for (int size = 1; size <= 4; ++size) {
      std::vector<DistributedSampler> ranks;
      for (int rank = 0; rank < size; ++rank) {
        ranks.emplace_back(c.samples, c.batch, 99, rank, size);
        ranks.back().SetEpoch(3);
      }
      const std::vector<int64_t>& permutation = ranks[0].permutation();
      const int64_t steps = (c.samples + c.batch - 1) / c.batch;
      EXPECT_EQ(ranks[0].num_steps(), steps);
      std::vector<int64_t> seen;
      for (int64_t step = 0; step < steps; ++step) {
        const IndexRange global = ranks[0].GlobalBatch(step);
        EXPECT_EQ(global.begin, step * c.batch);
        EXPECT_EQ(global.size(), std::min(c.batch, c.samples - step * c.batch));
        std::vector<int64_t> joined;
        size_t previous = static_cast<size_t>(-1);
        for (int rank = 0; rank < size; ++rank) {
          const std::vector<int64_t> local = ranks[rank].LocalIndices(step);
          if (rank > 0) {
            EXPECT_LE(local.size(), previous);
            EXPECT_GE(local.size() + 1, previous);
          }
          previous = local.size();
          joined.insert(joined.end(), local.begin(), local.end());
        }
        EXPECT_EQ(joined, std::vector<int64_t>(permutation.begin() + global.begin,
                                               permutation.begin() + global.end))
            << "samples " << c.samples << " batch " << c.batch << " ranks " << size;
        seen.insert(seen.end(), joined.begin(), joined.end());
      }
      EXPECT_EQ(seen, permutation);
    }
  }
}

}  // namespace
}  // namespace hpo
