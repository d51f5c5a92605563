// NcclGroupCollectives across the ranks of MPI_COMM_WORLD, one GPU per rank (run with mpirun -np 2
// on a node with at least 2 GPUs; skipped otherwise).
#include <gtest/gtest.h>

#include <c10/cuda/CUDAFunctions.h>
#include <torch/torch.h>

#include <utility>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#include "hpo/mpi/communicator.hpp"

namespace hpo {
namespace {

class NcclCollectivesTest : public testing::Test {
 protected:
  void SetUp() override {
    world_ = Communicator::World();
    node_ = world_.SplitShared();
    if (static_cast<int>(c10::cuda::device_count()) < node_.size()) {
      GTEST_SKIP() << "needs one GPU per rank on the node";
    }
    ASSERT_TRUE(SelectCudaDevice(node_.rank(), node_.size(), 1, &device_).ok());
  }

  torch::TensorOptions OnDevice() const {
    return torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, device_);
  }

  Communicator world_;
  Communicator node_;
  int device_ = 0;
};

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
