#include "train/gradient_buckets.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "tasks/fashion_mnist/model_runtime/task.hpp"
#include "thread_collectives.hpp"
#include "train/model_sync.hpp"

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

// A group of `size` identical ranks with a truly asynchronous allreduce: StartAllreduceSum only
// records the buffer, and the sum lands in it at Wait, so a result read before Wait is stale.
// Records how many allreduces were started and waited for.
class DeferredCollectives final : public GroupCollectives {
 public:
  explicit DeferredCollectives(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  void AllreduceSum(float* data, size_t count) override { Scale(data, count); }
  void AllreduceSum(double*, size_t) override { ADD_FAILURE() << "unexpected double allreduce"; }
  void Broadcast(void*, size_t, int) override { ADD_FAILURE() << "unexpected broadcast"; }
  AllreduceHandle StartAllreduceSum(float* data, size_t count) override {
    started.push_back({data, count});
    return {started.size()};
  }
  bool Progress() override {
    ++progress_calls;
    return waited == started.size();
  }
  void Wait(AllreduceHandle handle) override {
    if (handle.id == 0) return;  // a completed handle (the 16-bit default's)
    ASSERT_LE(handle.id, started.size());
    Scale(started[handle.id - 1].first, started[handle.id - 1].second);
    ++waited;
  }

  std::vector<std::pair<float*, size_t>> started;
  size_t waited = 0;
  int progress_calls = 0;

 private:
  void Scale(float* data, size_t count) const {
    for (size_t i = 0; i < count; ++i) data[i] *= static_cast<float>(size_);
  }
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

TEST(GradientBucketsTest, SmallFirstBucketThenFullBucketsCoverEveryParameterOnce) {
  const std::vector<torch::Tensor> parameters = MakeParameters();
  // bias3 (1000) alone in the first bucket of 1000 floats; then buckets of 40000 floats.
  const GradientBuckets buckets(parameters, 40000 * sizeof(float), 0, 1000 * sizeof(float));
  ExpectValidLayout(buckets, parameters, 40000 * sizeof(float));
  ASSERT_EQ(buckets.num_buckets(), 2u);
  EXPECT_EQ(buckets.layout()[0].numel, 1000u);
  EXPECT_EQ(buckets.layout()[1].numel, 30850u);
  for (size_t first : {size_t{4}, size_t{4000}, size_t{8000}, size_t{1} << 20}) {
    const GradientBuckets sized(parameters, 4096, 0, first);
    ExpectValidLayout(sized, parameters, std::max<size_t>(first, 4096));
    if (sized.layout()[0].entries.size() > 1) {
      EXPECT_LE(sized.layout()[0].numel * sizeof(float), first);
    }
  }
}

// A model whose parameters have uneven sizes, with a layer the forward pass does not use.
struct UnevenModel {
  explicit UnevenModel(int64_t seed) {
    torch::manual_seed(seed);
    used = torch::nn::Sequential(torch::nn::Linear(6, 40), torch::nn::ReLU(),
                                 torch::nn::Linear(40, 300), torch::nn::ReLU(),
                                 torch::nn::Linear(300, 3));
    unused = torch::nn::Linear(7, 5);
    for (const torch::Tensor& p : used->parameters()) parameters.push_back(p);
    // Between used ones: W1 b1 W2 b2 Wu bu W3 b3, so that buckets of 500 floats after a first
    // bucket of 150 are {b3} {W3} {bu Wu b2} {W2} {b1 W1}.
    parameters.insert(parameters.begin() + 4, unused->weight);
    parameters.insert(parameters.begin() + 5, unused->bias);
  }
  torch::Tensor Loss(const torch::Tensor& x, const torch::Tensor& y) {
    return torch::nn::functional::cross_entropy(used->forward(x), y);
  }
  torch::nn::Sequential used{nullptr};
  torch::nn::Linear unused{nullptr};
  std::vector<torch::Tensor> parameters;
};

// Trains two identical models for a few Adam steps, one reducing after backward and one
// overlapped, on `collectives`; their weights must stay bitwise equal.
void ExpectOverlapMatchesAfterBackward(GroupCollectives& after, GroupCollectives& overlapped,
                                       std::optional<ReducedFloat> compression = std::nullopt) {
  UnevenModel a(9);
  UnevenModel b(9);
  GradientBuckets buckets_a(a.parameters, 2000, 2, 600, compression);
  GradientBuckets buckets_b(b.parameters, 2000, 2, 600, compression);
  ASSERT_GE(buckets_b.num_buckets(), 3u);
  torch::optim::Adam optimizer_a(a.parameters, torch::optim::AdamOptions(0.01));
  torch::optim::Adam optimizer_b(b.parameters, torch::optim::AdamOptions(0.01));
  torch::manual_seed(1);
  for (int step = 0; step < 5; ++step) {
    const torch::Tensor x = torch::randn({16, 6});
    const torch::Tensor y = torch::randint(0, 3, {16});
    float extras_a[2] = {1.5f, static_cast<float>(step)};
    float extras_b[2] = {1.5f, static_cast<float>(step)};
    optimizer_a.zero_grad();
    a.Loss(x, y).backward();
    buckets_a.AllreduceGradients(after, 0.5f, extras_a);
    optimizer_a.step();

    optimizer_b.zero_grad();
    buckets_b.BeginStep(overlapped, 0.5f);
    b.Loss(x, y).backward();
    buckets_b.FinishStep(extras_b);
    optimizer_b.step();
    EXPECT_EQ(extras_a[0], extras_b[0]);
    EXPECT_EQ(extras_a[1], extras_b[1]);
  }
  for (size_t i = 0; i < a.parameters.size(); ++i) {
    EXPECT_TRUE(torch::equal(a.parameters[i], b.parameters[i])) << "param " << i;
    ASSERT_TRUE(b.parameters[i].grad().defined()) << "param " << i;
    EXPECT_TRUE(torch::equal(a.parameters[i].grad(), b.parameters[i].grad())) << "param " << i;
  }
  EXPECT_EQ(b.unused->weight.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(buckets_b.overlap_stats().steps, 5);
}

TEST(GradientBucketsOverlapTest, SameWeightsAsReducingAfterBackwardBitwise) {
  SingleRankCollectives single_a;
  SingleRankCollectives single_b;
  ExpectOverlapMatchesAfterBackward(single_a, single_b);
  CountingCollectives counting(3);
  DeferredCollectives deferred(3);
  ExpectOverlapMatchesAfterBackward(counting, deferred);
  EXPECT_EQ(deferred.waited, deferred.started.size());
}

TEST(GradientBucketsOverlapTest, FullBucketsStartDuringBackwardInBucketOrder) {
  UnevenModel model(4);
  GradientBuckets buckets(model.parameters, 2000, 3, 600);
  const size_t n = buckets.num_buckets();
  ASSERT_GE(n, 3u);
  DeferredCollectives group(2);
  buckets.BeginStep(group, 1.0f);
  model.Loss(torch::randn({8, 6}), torch::randint(0, 3, {8})).backward();
  // The buckets before the one holding the unused layer are complete and started by the hooks;
  // the later ones wait for it (buckets start in order); none is waited for yet.
  ASSERT_EQ(n, 5u);
  const size_t stalled = 2;
  ASSERT_EQ(buckets.layout()[stalled].entries.size(), 3u);
  EXPECT_EQ(group.started.size(), stalled);
  EXPECT_EQ(group.waited, 0u);
  for (size_t b = 0; b < group.started.size(); ++b) {
    EXPECT_EQ(group.started[b].second, buckets.layout()[b].numel);
  }
  float extras[3] = {1.0f, 2.0f, 3.0f};
  buckets.FinishStep(extras);
  ASSERT_EQ(group.started.size(), n);
  EXPECT_EQ(group.waited, n);
  EXPECT_EQ(group.started.back().second, buckets.layout().back().numel + 3);  // extras ride last
  EXPECT_EQ(extras[2], 6.0f);
  EXPECT_EQ(model.unused->bias.grad().abs().sum().item<float>(), 0.0f);
  // A backward pass outside BeginStep/FinishStep starts nothing.
  model.Loss(torch::randn({8, 6}), torch::randint(0, 3, {8})).backward();
  EXPECT_EQ(group.started.size(), n);
}

TEST(GradientBucketsOverlapTest, BackwardSkippedOrUnusedOnOneRankStillMatchesTheOtherRank) {
  // Rank 0 has an empty slice (no backward at all); rank 1 trains on both halves' data.
  std::vector<std::vector<torch::Tensor>> grads(2);
  testing::RunOnThreads(2, [&](GroupCollectives& collectives) {
    UnevenModel model(5);
    GradientBuckets buckets(model.parameters, 2000, 1, 600);
    float extra = 1.0f;
    buckets.BeginStep(collectives, 1.0f);
    if (collectives.rank() == 1) {
      torch::manual_seed(8);
      model.Loss(torch::randn({8, 6}), torch::randint(0, 3, {8})).backward();
    }
    buckets.FinishStep(&extra);
    EXPECT_EQ(extra, 2.0f);
    for (const torch::Tensor& p : model.parameters) grads[collectives.rank()].push_back(p.grad());
  });
  for (size_t i = 0; i < grads[0].size(); ++i) {
    ASSERT_TRUE(grads[0][i].defined()) << i;
    EXPECT_TRUE(torch::equal(grads[0][i], grads[1][i])) << i;
  }
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

TEST(GradientBucketsCompressionTest, ConversionsMatchTorchsBFloat16AndHalf) {
  torch::manual_seed(5);
  // Ordinary gradients, tiny ones (fp16 subnormals and underflow), huge ones (fp16 overflow).
  const torch::Tensor values =
      torch::cat({torch::randn({4000}), torch::randn({3000}) * 1e-6, torch::randn({3000}) * 1e5});
  const float* floats = values.data_ptr<float>();
  for (auto [format, dtype] : {std::pair{ReducedFloat::kBFloat16, torch::kBFloat16},
                               std::pair{ReducedFloat::kFloat16, torch::kHalf}}) {
    const torch::Tensor reference = values.to(dtype);
    const torch::Tensor widened = reference.to(torch::kFloat32);
    const auto* bits = static_cast<const uint16_t*>(reference.data_ptr());
    for (int64_t i = 0; i < values.numel(); ++i) {
      ASSERT_EQ(ToReducedFloat(floats[i], format), bits[i])
          << ReducedFloatName(format) << " of " << floats[i];
      ASSERT_EQ(FromReducedFloat(bits[i], format), widened.data_ptr<float>()[i])
          << ReducedFloatName(format) << " bits " << bits[i];
    }
  }
}

TEST(GradientBucketsCompressionTest, GradientsTravelAs16BitFloatsExtrasAsFloat32) {
  const std::vector<torch::Tensor> parameters = MakeParameters();
  for (auto [format, dtype] : {std::pair{ReducedFloat::kBFloat16, torch::kBFloat16},
                               std::pair{ReducedFloat::kFloat16, torch::kHalf}}) {
    std::vector<torch::Tensor> expected;
    for (const torch::Tensor& p : parameters) {
      p.mutable_grad() = torch::rand_like(p) + 0.5;  // normal numbers in both formats
      expected.push_back(p.grad().to(dtype).to(torch::kFloat32));
    }
    GradientBuckets buckets(parameters, 1000 * sizeof(float), 1, 0, format);
    CountingCollectives group(4);
    float extra = 2.5f + 0x1p-10f;  // not representable in 16 bits
    // Four identical ranks with a quarter of the batch each: scaling by powers of two is exact,
    // so the result is the local gradient rounded once to the format.
    buckets.AllreduceGradients(group, 0.25f, &extra);
    // The base class's 16-bit allreduce widens to one float allreduce per bucket; the extras
    // have one of their own.
    EXPECT_EQ(group.float_calls, static_cast<int>(buckets.num_buckets()) + 1);
    EXPECT_EQ(extra, 4 * (2.5f + 0x1p-10f));
    for (size_t i = 0; i < parameters.size(); ++i) {
      EXPECT_TRUE(torch::equal(parameters[i].grad(), expected[i])) << ReducedFloatName(format) << i;
    }
  }
}

TEST(GradientBucketsCompressionTest, OverlapRoundsLikeReducingAfterBackward) {
  for (ReducedFloat format : {ReducedFloat::kBFloat16, ReducedFloat::kFloat16}) {
    CountingCollectives counting(3);
    DeferredCollectives deferred(3);
    ExpectOverlapMatchesAfterBackward(counting, deferred, format);
  }
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
  std::vector<torch::nn::Sequential> models(2);
  std::mutex build;
  testing::RunOnThreads(2, [&](GroupCollectives& collectives) {
    const int rank = collectives.rank();
    {
      std::lock_guard<std::mutex> lock(build);
      torch::manual_seed(100 + rank);
      models[rank] = BuildFashionCnn(/*width=*/4, /*dropout=*/0.0, /*classes=*/10);
    }
    ModuleModel model(models[rank].ptr(), nullptr);
    BroadcastModelState(model, collectives);
    // Different data per rank makes the BatchNorm running statistics differ.
    models[rank]->train();
    {
      torch::NoGradGuard no_grad;
      models[rank]->forward(torch::full({4, 1, 28, 28}, static_cast<float>(rank + 1)));
    }
    SyncBuffers(model, collectives);
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

}  // namespace
}  // namespace hpo
