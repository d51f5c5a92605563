// NcclGroupCollectives across the ranks of MPI_COMM_WORLD, one GPU per rank: under mpirun -np 2
// on a node with at least 2 GPUs, and -np 1 on one GPU (the tests that need a second rank skip
// then); every test skips, saying why, on a node with fewer GPUs than ranks.
#include <gtest/gtest.h>

#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#include "hpo/mpi/communicator.hpp"
#include "mpi/mpi_collectives.hpp"
#include "train/gradient_buckets.hpp"

namespace hpo {
namespace {

class NcclCollectivesTest : public testing::Test {
 protected:
  void SetUp() override {
    world_ = Communicator::World();
    node_ = world_.SplitShared();
    const int gpus = static_cast<int>(c10::cuda::device_count());
    if (gpus < node_.size()) {
      GTEST_SKIP() << "needs one GPU per rank: " << node_.size() << " ranks on this node, " << gpus
                   << " GPUs visible";
    }
    device_ = node_.rank();
    ASSERT_TRUE(ActivateCudaDevice(device_, 1).ok());
  }

  torch::TensorOptions OnDevice() const {
    return torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, device_);
  }

  void NeedTwoRanks() {
    if (world_.size() < 2) GTEST_SKIP() << "needs a group of 2 ranks (mpirun -np 2, 2 GPUs)";
  }

  Communicator world_;
  Communicator node_;
  int device_ = 0;
};

// Queues about `seconds` of matrix products on the current stream (sized for a data-centre GPU;
// a slower one only takes longer) and returns a tensor that depends on all of them.
torch::Tensor LongComputation(int device, int rounds = 150) {
  torch::Tensor identity =
      torch::eye(4096, torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, device));
  torch::Tensor product = identity;
  for (int i = 0; i < rounds; ++i) product = product.mm(identity);  // stays the identity exactly
  return product;
}

bool EventDone(cudaEvent_t event) { return cudaEventQuery(event) == cudaSuccess; }

TEST_F(NcclCollectivesTest, DeviceSumsEqualTheMpiPath) {
  NeedTwoRanks();
  NcclGroupCollectives nccl(world_);
  MpiGroupCollectives mpi(world_);
  std::mt19937 random(17 + static_cast<unsigned>(world_.rank()));
  const size_t count = (1 << 20) + 3;  // several NCCL chunks and a ragged end
  std::uniform_int_distribution<int> integers(-1000, 1000);
  std::uniform_real_distribution<float> reals(-1.0f, 1.0f);
  std::vector<float> whole(count);
  std::vector<float> real(count);
  std::vector<double> real64(count);
  for (size_t i = 0; i < count; ++i) {
    whole[i] = static_cast<float>(integers(random));
    real[i] = reals(random);
    real64[i] = static_cast<double>(reals(random));
  }
  auto on_device = [&](const auto& host, torch::ScalarType type) {
    return torch::from_blob(const_cast<void*>(static_cast<const void*>(host.data())),
                            {static_cast<int64_t>(host.size())}, type)
        .to(torch::Device(torch::kCUDA, device_));
  };
  torch::Tensor whole_gpu = on_device(whole, torch::kFloat32);
  torch::Tensor real_gpu = on_device(real, torch::kFloat32);
  torch::Tensor real64_gpu = on_device(real64, torch::kFloat64);
  nccl.AllreduceSum(whole_gpu.data_ptr<float>(), count);
  nccl.Wait(nccl.StartAllreduceSum(real_gpu.data_ptr<float>(), count));
  nccl.AllreduceSum(real64_gpu.data_ptr<double>(), count);
  mpi.AllreduceSum(whole.data(), count);
  mpi.AllreduceSum(real.data(), count);
  mpi.AllreduceSum(real64.data(), count);

  const torch::Tensor whole_back = whole_gpu.cpu();
  EXPECT_EQ(std::memcmp(whole_back.data_ptr<float>(), whole.data(), count * sizeof(float)), 0)
      << "integer-valued sums differ from MPI's";
  const torch::Tensor real_back = real_gpu.cpu();
  const torch::Tensor real64_back = real64_gpu.cpu();
  double worst = 0.0;
  double worst64 = 0.0;
  for (size_t i = 0; i < count; ++i) {
    worst =
        std::max(worst, std::abs(static_cast<double>(real_back.data_ptr<float>()[i] - real[i])));
    worst64 = std::max(worst64, std::abs(real64_back.data_ptr<double>()[i] - real64[i]));
  }
  EXPECT_LE(worst, 1e-6) << "float32 sums of " << world_.size() << " values in [-1, 1]";
  EXPECT_LE(worst64, 1e-12);
}

TEST_F(NcclCollectivesTest, StartReturnsAtOnceAndSumsAfterTheQueuedWork) {
  NcclGroupCollectives collectives(world_);
  const int n = collectives.size();
  // Whatever waits for the whole device comes before the slow work, or it would finish that work
  // before the sum starts: cudaMalloc, NCCL's connection at a communicator's first collective, and
  // the lazy loading of each kernel's module at its first launch. So every call below runs once
  // first. A spin of about a second (2e9 cycles at up to 2 GHz) stands in for a backward pass.
  torch::Tensor values = torch::ones(
      {4096}, torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, device_));
  collectives.Wait(
      collectives.StartAllreduceSum(values.data_ptr<float>(), static_cast<size_t>(values.numel())));
  values.fill_(1.0f);
  values.mul_(collectives.rank() + 1);
  values.fill_(1.0f);
  cudaEvent_t computed = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming), cudaSuccess);
  at::cuda::sleep(2'000'000'000);
  values.mul_(collectives.rank() + 1);
  ASSERT_EQ(cudaEventRecord(computed, c10::cuda::getCurrentCUDAStream().stream()), cudaSuccess);
  const AllreduceHandle handle =
      collectives.StartAllreduceSum(values.data_ptr<float>(), static_cast<size_t>(values.numel()));
  EXPECT_FALSE(EventDone(computed)) << "StartAllreduceSum waited for the compute stream";
  EXPECT_FALSE(collectives.Progress());
  collectives.Wait(handle);
  EXPECT_TRUE(EventDone(computed)) << "the sum finished before the work it depends on";
  EXPECT_TRUE(torch::all(values.cpu() == static_cast<float>(n * (n + 1) / 2)).item<bool>());
  cudaEventDestroy(computed);
}

TEST_F(NcclCollectivesTest, WaitSynchronizesItsStreamNotTheDevice) {
  NcclGroupCollectives collectives(world_);
  c10::cuda::CUDAStream other = c10::cuda::getStreamFromPool(false, device_);
  cudaEvent_t other_done = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&other_done, cudaEventDisableTiming), cudaSuccess);
  {
    c10::cuda::CUDAStreamGuard guard(other);
    torch::Tensor unrelated = LongComputation(device_, 400);
    ASSERT_EQ(cudaEventRecord(other_done, other.stream()), cudaSuccess);
  }
  torch::Tensor values = torch::ones({1 << 16}, OnDevice());
  collectives.Wait(collectives.StartAllreduceSum(values.data_ptr<float>(), 1 << 16));
  collectives.AllreduceSum(values.data_ptr<float>(), 1 << 16);
  EXPECT_FALSE(EventDone(other_done)) << "Wait or AllreduceSum synchronized the whole device";
  ASSERT_EQ(cudaEventSynchronize(other_done), cudaSuccess);
  const float n = static_cast<float>(collectives.size());
  EXPECT_TRUE(torch::all(values.cpu() == n * n).item<bool>());
  cudaEventDestroy(other_done);
}

// GroupCollectives that counts the allreduces started through it.
class CountingCollectives final : public GroupCollectives {
 public:
  explicit CountingCollectives(GroupCollectives& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void AllreduceSum(float* data, size_t count) override { inner_.AllreduceSum(data, count); }
  void AllreduceSum(double* data, size_t count) override { inner_.AllreduceSum(data, count); }
  void Broadcast(void* data, size_t bytes, int root) override {
    inner_.Broadcast(data, bytes, root);
  }
  AllreduceHandle StartAllreduceSum(float* data, size_t count) override {
    ++started;
    return inner_.StartAllreduceSum(data, count);
  }
  bool Progress() override { return inner_.Progress(); }
  void Wait(AllreduceHandle handle) override { inner_.Wait(handle); }

  int started = 0;

 private:
  GroupCollectives& inner_;
};

TEST_F(NcclCollectivesTest, GradientBucketsStartDuringBackwardOnTheDevice) {
  NcclGroupCollectives nccl(world_);
  CountingCollectives collectives(nccl);
  torch::manual_seed(3);
  torch::nn::Sequential model(torch::nn::Linear(256, 256), torch::nn::ReLU(),
                              torch::nn::Linear(256, 256), torch::nn::ReLU(),
                              torch::nn::Linear(256, 256), torch::nn::ReLU(),
                              torch::nn::Linear(256, 10));
  model->to(torch::Device(torch::kCUDA, device_));
  const torch::Tensor input = torch::randn({512, 256}, OnDevice());
  // The reference: this rank's own gradients (every rank has the same batch, so their mean is
  // these).
  model->forward(input).square().mean().backward();
  std::vector<torch::Tensor> expected;
  for (const torch::Tensor& parameter : model->parameters()) {
    expected.push_back(parameter.grad().clone());
    parameter.mutable_grad() = torch::Tensor();
  }

  GradientBuckets buckets(model->parameters(), /*bucket_bytes=*/256 * 256 * 4, /*extra_slots=*/1);
  ASSERT_GE(buckets.num_buckets(), 3u);
  float extras[1] = {1.0f};
  buckets.BeginStep(collectives, 1.0f / static_cast<float>(collectives.size()));
  model->forward(input).square().mean().backward();
  EXPECT_EQ(collectives.started, static_cast<int>(buckets.num_buckets()) - 1)
      << "every bucket but the last (it carries the extras) starts during backward";
  buckets.FinishStep(extras);
  EXPECT_EQ(extras[0], static_cast<float>(collectives.size()));
  size_t index = 0;
  for (const torch::Tensor& parameter : model->parameters()) {
    EXPECT_TRUE(torch::allclose(parameter.grad(), expected[index], 1e-5, 1e-6))
        << "parameter " << index;
    ++index;
  }
}

TEST_F(NcclCollectivesTest, DeviceAllreduceSumsEveryRank) {
  NcclGroupCollectives collectives(world_);
  const int n = collectives.size();
  torch::Tensor values =
      torch::full({1000}, static_cast<float>(collectives.rank() + 1), OnDevice());
  ASSERT_TRUE(IsDevicePointer(values.data_ptr()));
  collectives.AllreduceSum(values.data_ptr<float>(), static_cast<size_t>(values.numel()));
  EXPECT_TRUE(torch::all(values.cpu() == static_cast<float>(n * (n + 1) / 2)).item<bool>());
}

TEST_F(NcclCollectivesTest, AsynchronousAllreducesFinishInAnyWaitOrder) {
  NcclGroupCollectives collectives(world_);
  const int n = collectives.size();
  torch::Tensor a = torch::ones({1 << 20}, OnDevice());
  torch::Tensor b = torch::full({17}, 2.0f, OnDevice());
  const AllreduceHandle first = collectives.StartAllreduceSum(a.data_ptr<float>(), a.numel());
  const AllreduceHandle second = collectives.StartAllreduceSum(b.data_ptr<float>(), b.numel());
  collectives.Wait(second);
  collectives.Wait(first);
  EXPECT_TRUE(collectives.Progress());
  EXPECT_TRUE(torch::all(a.cpu() == static_cast<float>(n)).item<bool>());
  EXPECT_TRUE(torch::all(b.cpu() == static_cast<float>(2 * n)).item<bool>());
}

TEST_F(NcclCollectivesTest, HostBuffersGoThroughMpi) {
  NcclGroupCollectives collectives(world_);
  std::vector<double> sums = {1.0, static_cast<double>(collectives.rank())};
  ASSERT_FALSE(IsDevicePointer(sums.data()));
  collectives.AllreduceSum(sums.data(), sums.size());
  const int n = collectives.size();
  EXPECT_EQ(sums[0], n);
  EXPECT_EQ(sums[1], n * (n - 1) / 2);
  int value = collectives.rank() == 0 ? 42 : 0;
  collectives.Broadcast(&value, sizeof(value), 0);
  EXPECT_EQ(value, 42);
}

TEST_F(NcclCollectivesTest, DeviceBroadcastCopiesTheRootsBytes) {
  NcclGroupCollectives collectives(world_);
  torch::Tensor values = torch::full({64}, static_cast<float>(collectives.rank()), OnDevice());
  collectives.Broadcast(values.data_ptr(), static_cast<size_t>(values.nbytes()), 0);
  EXPECT_TRUE(torch::all(values.cpu() == 0.0f).item<bool>());
}

TEST_F(NcclCollectivesTest, CommunicatorIsMoveOnlyAndOwnsOneComm) {
  NcclCommunicator first = NcclCommunicator::Create(world_);
  ASSERT_NE(first.get(), nullptr);
  NcclCommunicator second = std::move(first);
  EXPECT_EQ(first.get(), nullptr);
  EXPECT_NE(second.get(), nullptr);
}

}  // namespace
}  // namespace hpo
