#include "hpo/train/gradient_buckets.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "hpo/train/models.hpp"
#include "thread_collectives.hpp"

namespace hpo {
namespace {

// A group of `size` identical ranks seen from rank 0: a sum over the group is `size` times the
// local value. Counts the calls.
class CountingCollectives final : public GroupCollectives {
 public:
  explicit CountingCollectives(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  void AllreduceSum(float* data, size_t count) override {
    ++float_calls;
    for (size_t i = 0; i < count; ++i) data[i] *= static_cast<float>(size_);
  }
  void AllreduceSum(double* data, size_t count) override {
    ++double_calls;
    for (size_t i = 0; i < count; ++i) data[i] *= size_;
  }
  void Broadcast(void*, size_t, int) override { ++broadcasts; }

  int float_calls = 0;
  int double_calls = 0;
  int broadcasts = 0;

 private:
  int size_;
};

// Parameters of 200, 20, 600, 30, 30000 and 1000 elements.
std::vector<torch::Tensor> MakeParameters() {
  torch::manual_seed(3);
  torch::nn::Sequential model(torch::nn::Linear(10, 20), torch::nn::Linear(20, 30),
                              torch::nn::Linear(30, 1000));
  return model->parameters();
}

size_t TotalNumel(const std::vector<torch::Tensor>& parameters) {
  size_t total = 0;
  for (const torch::Tensor& p : parameters) total += static_cast<size_t>(p.numel());
  return total;
}

// Every parameter exactly once, in reverse order, at disjoint contiguous offsets; buckets within
// the cap unless a single oversized parameter.
void ExpectValidLayout(const GradientBuckets& buckets, const std::vector<torch::Tensor>& parameters,
                       size_t bucket_bytes) {
  std::vector<size_t> order;
  size_t total = 0;
  for (const BucketLayout& bucket : buckets.layout()) {
    size_t offset = 0;
    for (const BucketEntry& entry : bucket.entries) {
      EXPECT_EQ(entry.offset, offset);
      EXPECT_EQ(entry.length, static_cast<size_t>(parameters[entry.param_index].numel()));
      offset += entry.length;
      order.push_back(entry.param_index);
    }
    EXPECT_EQ(bucket.numel, offset);
    if (bucket.entries.size() > 1) {
      EXPECT_LE(bucket.numel * sizeof(float), bucket_bytes);
    }
    total += bucket.numel;
  }
  std::vector<size_t> reversed(parameters.size());
  for (size_t i = 0; i < reversed.size(); ++i) reversed[i] = reversed.size() - 1 - i;
  EXPECT_EQ(order, reversed);
  EXPECT_EQ(total, TotalNumel(parameters));
}

TEST(GradientBucketsTest, LayoutIsReverseOrderWithinCapOversizedAlone) {
  const std::vector<torch::Tensor> parameters = MakeParameters();
  const GradientBuckets buckets(parameters, 1000 * sizeof(float));
  ExpectValidLayout(buckets, parameters, 1000 * sizeof(float));
  // bias3 (1000) | weight3 (30000, oversized, alone) | bias2, weight2, bias1, weight1 (850)
  ASSERT_EQ(buckets.num_buckets(), 3u);
  ASSERT_EQ(buckets.layout()[0].entries.size(), 1u);
  EXPECT_EQ(buckets.layout()[0].entries[0].param_index, 5u);
  ASSERT_EQ(buckets.layout()[1].entries.size(), 1u);
  EXPECT_EQ(buckets.layout()[1].entries[0].param_index, 4u);
  EXPECT_EQ(buckets.layout()[2].entries.size(), 4u);
  EXPECT_EQ(buckets.layout()[2].numel, 850u);

  for (size_t bytes : {size_t{4}, size_t{100}, size_t{4096}, size_t{130000}, size_t{4} << 20}) {
    ExpectValidLayout(GradientBuckets(parameters, bytes), parameters, bytes);
  }
  EXPECT_EQ(GradientBuckets(parameters, size_t{4} << 20).num_buckets(), 1u);
  EXPECT_EQ(GradientBuckets(parameters, 4).num_buckets(), parameters.size());
}

TEST(GradientBucketsTest, OneAllreducePerBucketScaledSumWrittenBack) {
  const std::vector<torch::Tensor> parameters = MakeParameters();
  std::vector<torch::Tensor> expected;
  for (const torch::Tensor& p : parameters) {
    p.mutable_grad() = torch::randn_like(p);
    expected.push_back(p.grad().clone());
  }
  GradientBuckets buckets(parameters, 1000 * sizeof(float), 1);
  CountingCollectives group(4);
  float extra = 2.5f;
  // Four identical ranks, each with a quarter of the global batch: the average is the local grad.
  buckets.AllreduceGradients(group, 0.25f, &extra);
  EXPECT_EQ(group.float_calls, static_cast<int>(buckets.num_buckets()));
  EXPECT_EQ(group.double_calls + group.broadcasts, 0);
  EXPECT_FLOAT_EQ(extra, 10.0f);
  for (size_t i = 0; i < parameters.size(); ++i) {
    EXPECT_TRUE(torch::allclose(parameters[i].grad(), expected[i], 1e-6, 1e-7)) << i;
  }
  buckets.AllreduceGradients(group, 1.0f, &extra);
  EXPECT_EQ(group.float_calls, 2 * static_cast<int>(buckets.num_buckets()));
  EXPECT_TRUE(torch::allclose(parameters[0].grad(), expected[0] * 4, 1e-6, 1e-6));
}

TEST(GradientBucketsTest, UnusedParameterContributesZerosAndGetsTheGroupGradient) {
  const std::vector<torch::Tensor> parameters = MakeParameters();
  for (const torch::Tensor& p : parameters) p.mutable_grad() = torch::ones_like(p);
  parameters[2].mutable_grad() = torch::Tensor();  // rank 0 did not use weight2
  testing::RunOnThreads(2, [&](GroupCollectives& collectives) {
    if (collectives.rank() == 0) {
      GradientBuckets buckets(parameters, 256);
      buckets.AllreduceGradients(collectives, 0.5f, nullptr);
    } else {
      // Rank 1 used every parameter, with gradient 3, and has its own copy of the parameters.
      std::vector<torch::Tensor> mine;
      for (const torch::Tensor& p : parameters) {
        mine.push_back(p.detach().clone());
        mine.back().mutable_grad() = torch::full_like(p, 3.0);
      }
      GradientBuckets buckets(mine, 256);
      buckets.AllreduceGradients(collectives, 0.5f, nullptr);
      EXPECT_TRUE(torch::allclose(mine[2].grad(), torch::full_like(mine[2], 1.5)));
      EXPECT_TRUE(torch::allclose(mine[0].grad(), torch::full_like(mine[0], 2.0)));
    }
  });
  ASSERT_TRUE(parameters[2].grad().defined());
  EXPECT_TRUE(torch::allclose(parameters[2].grad(), torch::full_like(parameters[2], 1.5)));
  EXPECT_TRUE(torch::allclose(parameters[0].grad(), torch::full_like(parameters[0], 2.0)));
}

TEST(GradientBucketsTest, UnequalShardsWeightedToTheGlobalMean) {
  // Rank 0 averaged 3 samples (gradient a), rank 1 one sample (gradient b): the global mean is
  // (3a + b) / 4 on both ranks.
  const torch::Tensor a = torch::randn({50});
  const torch::Tensor b = torch::randn({50});
  std::vector<torch::Tensor> results(2);
  testing::RunOnThreads(2, [&](GroupCollectives& collectives) {
    torch::Tensor parameter = torch::zeros({50});
    parameter.mutable_grad() = (collectives.rank() == 0 ? a : b).clone();
    GradientBuckets buckets({parameter}, 64);
    buckets.AllreduceGradients(collectives, collectives.rank() == 0 ? 0.75f : 0.25f, nullptr);
    results[collectives.rank()] = parameter.grad().clone();
  });
  EXPECT_TRUE(torch::allclose(results[0], (3 * a + b) / 4, 1e-5, 1e-6));
  EXPECT_TRUE(torch::equal(results[0], results[1]));
}

TEST(ModelSyncTest, BroadcastAndBufferSyncMakeRanksIdentical) {
  ModelSpec spec;
  spec.task = TaskKind::kFashionMnist;
  spec.width = 4;
  std::vector<torch::nn::Sequential> models(2);
  std::mutex build;
  testing::RunOnThreads(2, [&](GroupCollectives& collectives) {
    const int rank = collectives.rank();
    {
      std::lock_guard<std::mutex> lock(build);
      torch::manual_seed(100 + rank);
      models[rank] = BuildModel(spec);
    }
    BroadcastModelState(*models[rank], collectives);
    // Different data per rank makes the BatchNorm running statistics differ.
    models[rank]->train();
    {
      torch::NoGradGuard no_grad;
      models[rank]->forward(torch::full({4, 1, 28, 28}, static_cast<float>(rank + 1)));
    }
    SyncBuffers(*models[rank], collectives);
  });
  const auto params0 = models[0]->parameters();
  const auto params1 = models[1]->parameters();
  ASSERT_EQ(params0.size(), params1.size());
  for (size_t i = 0; i < params0.size(); ++i) EXPECT_TRUE(torch::equal(params0[i], params1[i]));
  const auto buffers0 = models[0]->buffers();
  const auto buffers1 = models[1]->buffers();
  ASSERT_EQ(buffers0.size(), 6u);  // two BatchNorms: mean, var, num_batches_tracked
  for (size_t i = 0; i < buffers0.size(); ++i) EXPECT_TRUE(torch::equal(buffers0[i], buffers1[i]));
  // The first BatchNorm's running mean moved from 0 by momentum 0.1 towards the average input.
  const torch::Tensor mean = models[0]->named_buffers()["1.running_mean"];
  EXPECT_GT(mean.abs().sum().item<float>(), 0.0f);
}

TEST(ModelsTest, OutputShapes) {
  ModelSpec cnn;
  cnn.task = TaskKind::kFashionMnist;
  cnn.width = 3;
  cnn.dropout = 0.5;
  EXPECT_EQ(BuildModel(cnn)->forward(torch::zeros({5, 1, 28, 28})).sizes(),
            (std::vector<int64_t>{5, 10}));
  ModelSpec mlp;
  mlp.task = TaskKind::kSynthetic;
  mlp.width = 7;
  mlp.input_features = 11;
  mlp.num_classes = 4;
  torch::nn::Sequential model = BuildModel(mlp);
  EXPECT_EQ(model->forward(torch::zeros({2, 11})).sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(model->parameters().size(), 6u);
  EXPECT_TRUE(model->buffers().empty());
}

}  // namespace
}  // namespace hpo
