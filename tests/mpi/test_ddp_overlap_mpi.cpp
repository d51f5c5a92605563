// Overlapped DDP across real MPI ranks: asynchronous allreduces sum correctly in any completion
// order, and overlapping the bucket allreduces with backward gives the weights of reducing after
// backward, on a model with uneven parameter sizes, a parameter no rank uses and one only some
// ranks use.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <vector>

#include "hpo/mpi/communicator.hpp"
#include "mpi/mpi_collectives.hpp"
#include "train/gradient_buckets.hpp"

namespace hpo {
namespace {

TEST(MpiAsyncAllreduce, OutstandingAllreducesCompleteWithTheirSums) {
  const Communicator world = Communicator::World();
  MpiGroupCollectives collectives(world);
  const int n = world.size();
  const std::vector<size_t> sizes = {1, 1000, 3, 1 << 18, 17};
  std::vector<std::vector<float>> buffers;
  std::vector<AllreduceHandle> handles;
  for (size_t k = 0; k < sizes.size(); ++k) {
    buffers.emplace_back(sizes[k],
                         static_cast<float>(world.rank() + 1) * static_cast<float>(k + 1));
    handles.push_back(collectives.StartAllreduceSum(buffers.back().data(), sizes[k]));
  }
  for (int i = 0; i < 100 && !collectives.Progress(); ++i) {
  }
  // Out of start order; waiting twice is harmless.
  for (size_t k = sizes.size(); k-- > 0;) collectives.Wait(handles[k]);
  collectives.Wait(handles[0]);
  EXPECT_TRUE(collectives.Progress());
  for (size_t k = 0; k < sizes.size(); ++k) {
    const float expected = static_cast<float>(n * (n + 1) / 2) * static_cast<float>(k + 1);
    for (float value : buffers[k]) ASSERT_EQ(value, expected) << "allreduce " << k;
  }
}

// 16-bit sums over MPI with the user-defined reduction: exact where every partial sum is
// representable, rounded otherwise, and the same bits on every rank.
TEST(MpiAsyncAllreduce, ReducedFloatSumsAreExactWhenRepresentableAndAgreeOnEveryRank) {
  const Communicator world = Communicator::World();
  MpiGroupCollectives collectives(world);
  const int n = world.size();
  for (ReducedFloat format : {ReducedFloat::kBFloat16, ReducedFloat::kFloat16}) {
    // Small multiples of 1/4: every partial sum is representable in both formats.
    std::vector<uint16_t> exact(5000);
    for (size_t i = 0; i < exact.size(); ++i) {
      exact[i] = ToReducedFloat(0.25f * static_cast<float>((world.rank() + 1) * (i % 7)), format);
    }
    // 1 + rank / 1000: the exact sum needs more bits than the format has.
    std::vector<uint16_t> rounded(300, ToReducedFloat(1.0f + world.rank() / 1000.0f, format));
    const AllreduceHandle first =
        collectives.StartReducedFloatAllreduceSum(exact.data(), exact.size(), format);
    const AllreduceHandle second =
        collectives.StartReducedFloatAllreduceSum(rounded.data(), rounded.size(), format);
    collectives.Wait(second);
    collectives.Wait(first);
    for (size_t i = 0; i < exact.size(); ++i) {
      ASSERT_EQ(FromReducedFloat(exact[i], format),
                0.25f * static_cast<float>(n * (n + 1) / 2 * static_cast<int>(i % 7)))
          << ReducedFloatName(format) << " element " << i;
    }
    const float sum = FromReducedFloat(rounded[0], format);
    const float exact_sum = static_cast<float>(n) + static_cast<float>(n * (n - 1) / 2) / 1000.0f;
    EXPECT_NEAR(sum, exact_sum, exact_sum * (format == ReducedFloat::kBFloat16 ? 0x1p-6f : 0x1p-9f))
        << ReducedFloatName(format);
    std::vector<uint16_t> leaders = rounded;
    collectives.Broadcast(leaders.data(), leaders.size() * sizeof(uint16_t), 0);
    EXPECT_EQ(leaders, rounded) << ReducedFloatName(format);
  }
}

// Uneven parameter sizes (3 .. 12000 floats), a layer no rank uses and a head only even ranks use.
struct UnevenModel {
  UnevenModel() {
    torch::manual_seed(21);
    trunk = torch::nn::Sequential(torch::nn::Linear(6, 40), torch::nn::Tanh(),
                                  torch::nn::Linear(40, 300), torch::nn::Tanh());
    head = torch::nn::Linear(300, 3);
    side_head = torch::nn::Linear(300, 2);
    unused = torch::nn::Linear(7, 5);
    for (const torch::Tensor& p : trunk->parameters()) parameters.push_back(p);
    for (const torch::Tensor& p : unused->parameters()) parameters.push_back(p);
    for (const torch::Tensor& p : side_head->parameters()) parameters.push_back(p);
    for (const torch::Tensor& p : head->parameters()) parameters.push_back(p);
  }
  torch::Tensor Loss(const torch::Tensor& x, const torch::Tensor& y, bool use_side_head) {
    const torch::Tensor features = trunk->forward(x);
    torch::Tensor loss = torch::nn::functional::cross_entropy(head->forward(features), y);
    if (use_side_head) loss = loss + side_head->forward(features).pow(2).mean();
    return loss;
  }
  torch::nn::Sequential trunk{nullptr};
  torch::nn::Linear head{nullptr}, side_head{nullptr}, unused{nullptr};
  std::vector<torch::Tensor> parameters;
};

// Trains on this rank's data for `steps` Adam steps; returns the flattened weights.
torch::Tensor Train(GroupCollectives& collectives, bool overlap, int steps, float* loss_sum,
                    std::optional<ReducedFloat> compression = std::nullopt) {
  UnevenModel model;
  GradientBuckets buckets(model.parameters, 2000, 1, 600, compression);
  EXPECT_GE(buckets.num_buckets(), 5u);
  torch::optim::Adam optimizer(model.parameters, torch::optim::AdamOptions(0.01));
  torch::manual_seed(100 + collectives.rank());
  const bool use_side_head = collectives.rank() % 2 == 0;
  const float scale = 1.0f / static_cast<float>(collectives.size());
  *loss_sum = 0.0f;
  for (int step = 0; step < steps; ++step) {
    const torch::Tensor x = torch::randn({12, 6});
    const torch::Tensor y = torch::randint(0, 3, {12});
    optimizer.zero_grad();
    if (overlap) buckets.BeginStep(collectives, scale);
    const torch::Tensor loss = model.Loss(x, y, use_side_head);
    loss.backward();
    float extra = loss.item<float>() * scale;
    if (overlap) {
      buckets.FinishStep(&extra);
    } else {
      buckets.AllreduceGradients(collectives, scale, &extra);
    }
    *loss_sum += extra;
    optimizer.step();
  }
  EXPECT_EQ(model.unused->weight.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(buckets.overlap_stats().steps, overlap ? steps : 0);
  std::vector<torch::Tensor> flat;
  for (const torch::Tensor& p : model.parameters) flat.push_back(p.detach().reshape(-1));
  return torch::cat(flat);
}

TEST(DdpOverlapMpi, OverlappedGivesTheWeightsOfAllreduceAfterBackwardOnEveryRank) {
  const Communicator world = Communicator::World();
  MpiGroupCollectives collectives(world);
  float loss_after = 0.0f;
  float loss_overlapped = 0.0f;
  const torch::Tensor after = Train(collectives, false, 6, &loss_after);
  const torch::Tensor overlapped = Train(collectives, true, 6, &loss_overlapped);
  EXPECT_NEAR(loss_overlapped, loss_after, 1e-5f * std::abs(loss_after));
  EXPECT_TRUE(torch::allclose(overlapped, after, 1e-5, 1e-6))
      << "max difference " << (overlapped - after).abs().max().item<float>();
  // Every rank ends with the leader's weights.
  torch::Tensor leaders = overlapped.clone();
  collectives.Broadcast(leaders.data_ptr<float>(), leaders.numel() * sizeof(float), 0);
  EXPECT_TRUE(torch::equal(overlapped, leaders));
}

// Gradients as 16-bit floats: overlapped and after-backward reductions round alike (the same
// bits), every rank ends with the same weights, and training stays close to float32's.
TEST(DdpOverlapMpi, CompressedGradientsKeepRanksIdenticalAndCloseToFloat32) {
  const Communicator world = Communicator::World();
  MpiGroupCollectives collectives(world);
  float loss = 0.0f;
  const torch::Tensor full = Train(collectives, false, 6, &loss);
  for (ReducedFloat format : {ReducedFloat::kBFloat16, ReducedFloat::kFloat16}) {
    float loss_after = 0.0f;
    float loss_overlapped = 0.0f;
    const torch::Tensor after = Train(collectives, false, 6, &loss_after, format);
    const torch::Tensor overlapped = Train(collectives, true, 6, &loss_overlapped, format);
    EXPECT_TRUE(torch::equal(overlapped, after)) << ReducedFloatName(format);
    EXPECT_EQ(loss_overlapped, loss_after) << ReducedFloatName(format);
    EXPECT_NEAR(loss_after, loss, 0.02f * std::abs(loss)) << ReducedFloatName(format);
    EXPECT_FALSE(torch::equal(after, full)) << ReducedFloatName(format) << ": not compressed?";
    EXPECT_TRUE(torch::allclose(after, full, 0.0, 0.02))
        << ReducedFloatName(format) << ": max difference "
        << (after - full).abs().max().item<float>();
    torch::Tensor leaders = after.clone();
    collectives.Broadcast(leaders.data_ptr<float>(), leaders.numel() * sizeof(float), 0);
    EXPECT_TRUE(torch::equal(after, leaders)) << ReducedFloatName(format);
  }
}

}  // namespace
}  // namespace hpo
