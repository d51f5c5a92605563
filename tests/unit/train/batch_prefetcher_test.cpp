#include "train/batch_prefetcher.hpp"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include <vector>

namespace hpo {
namespace {

// 103 samples of shape [1, 4, 4] whose values identify their row, with labels 0..102.
TensorDataset MakeSplit() {
  return TensorDataset({torch::arange(103 * 16, torch::kFloat32).reshape({103, 1, 4, 4})},
                       torch::arange(103, torch::kInt64));
}

// What the trainer gathered before prefetching: index_select of the step's local indices.
torch::Tensor Plain(const torch::Tensor& tensor, const std::vector<int64_t>& indices) {
  return tensor.index_select(0, torch::tensor(indices, torch::kInt64));
}

void ExpectPlainSequence(const TensorDataset& split, const DistributedSampler& sampler,
                         int64_t first_step, int64_t depth) {
  BatchPrefetcher batches(split, sampler, first_step, depth);
  for (int64_t step = first_step; step < sampler.num_steps(); ++step) {
    const Batch batch = batches.Next();
    const std::vector<int64_t> indices = sampler.LocalIndices(step);
    if (indices.empty()) {
      EXPECT_EQ(batch.size(), 0) << "step " << step;
      continue;
    }
    ASSERT_EQ(batch.size(), static_cast<int64_t>(indices.size())) << "step " << step;
    EXPECT_TRUE(torch::equal(batch.inputs[0], Plain(split.inputs()[0], indices)))
        << "step " << step;
    EXPECT_TRUE(torch::equal(batch.targets, Plain(split.targets(), indices))) << "step " << step;
  }
  EXPECT_EQ(batches.assembled(), sampler.num_steps());
}

TEST(BatchPrefetcherTest, PrefetchedSequenceEqualsThePlainOne) {
  const TensorDataset split = MakeSplit();
  for (int size : {1, 3}) {
    for (int rank = 0; rank < size; ++rank) {
      DistributedSampler sampler(split.size(), 10, 7, rank, size);
      sampler.SetEpoch(2);
      for (int64_t depth : {0, 1, 2}) {
        ExpectPlainSequence(split, sampler, 0, depth);
        // A resumed epoch starts in the middle.
        ExpectPlainSequence(split, sampler, 4, depth);
      }
    }
  }
}

TEST(BatchPrefetcherTest, EmptySlicesGiveEmptyBatches) {
  const TensorDataset split = MakeSplit();
  // 103 % 4 = 3 samples in the last global batch: rank 3 of 4 gets none of them.
  DistributedSampler sampler(split.size(), 4, 1, 3, 4);
  sampler.SetEpoch(1);
  ExpectPlainSequence(split, sampler, 0, 1);
}

TEST(BatchPrefetcherTest, StoppingMidEpochJoinsTheWorker) {
  const TensorDataset split = MakeSplit();
  DistributedSampler sampler(split.size(), 2, 3, 0, 1);
  sampler.SetEpoch(1);
  BatchPrefetcher batches(split, sampler, 0, 2);
  EXPECT_TRUE(batches.worker_running());
  batches.Next();
  batches.Next();
  batches.Stop();
  EXPECT_FALSE(batches.worker_running());
  // The worker stays at most `depth` batches ahead of the consumer.
  EXPECT_LE(batches.assembled(), 2 + 2);
  batches.Stop();
  EXPECT_FALSE(batches.worker_running());
}

TEST(BatchPrefetcherTest, DestroyingBeforeAnyNextJoinsTheWorker) {
  const TensorDataset split = MakeSplit();
  DistributedSampler sampler(split.size(), 2, 3, 0, 1);
  sampler.SetEpoch(1);
  for (int repeat = 0; repeat < 50; ++repeat) {
    BatchPrefetcher batches(split, sampler, 0, 1);
  }
}

TEST(BatchPrefetcherTest, NoWorkerWithoutStepsOrDepth) {
  const TensorDataset split = MakeSplit();
  DistributedSampler sampler(split.size(), 10, 3, 0, 1);
  sampler.SetEpoch(1);
  EXPECT_FALSE(BatchPrefetcher(split, sampler, sampler.num_steps(), 1).worker_running());
  EXPECT_FALSE(BatchPrefetcher(split, sampler, 0, 0).worker_running());
}

}  // namespace
}  // namespace hpo
