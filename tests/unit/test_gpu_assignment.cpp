#include "common/gpu_assignment.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace hpo {
namespace {

std::vector<int> AssignAll(int ranks_on_node, int gpus_on_node, int64_t trials_per_gpu) {
  std::vector<int> gpus;
  for (int rank = 0; rank < ranks_on_node; ++rank) {
    int gpu = -1;
    const Status status = AssignGpu(rank, ranks_on_node, gpus_on_node, trials_per_gpu, &gpu);
    EXPECT_TRUE(status.ok()) << status.message();
    gpus.push_back(gpu);
  }
  return gpus;
}

TEST(GpuAssignmentTest, OneGpuPerRankWhenTrialsPerGpuIsOne) {
  EXPECT_EQ(AssignAll(4, 4, 1), (std::vector<int>{0, 1, 2, 3}));
  // Spare GPUs stay unused.
  EXPECT_EQ(AssignAll(2, 8, 1), (std::vector<int>{0, 1}));
}

TEST(GpuAssignmentTest, ConsecutiveOneRankGroupsShareAGpu) {
  EXPECT_EQ(AssignAll(8, 4, 2), (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(AssignAll(4, 1, 4), (std::vector<int>{0, 0, 0, 0}));
  // A last GPU that is only partly filled.
  EXPECT_EQ(AssignAll(5, 2, 3), (std::vector<int>{0, 0, 0, 1, 1}));
}

TEST(GpuAssignmentTest, TooFewGpusIsBadInputSayingHowMany) {
  int gpu = 7;
  Status status = AssignGpu(0, 8, 4, 1, &gpu);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("needs 8 GPUs, but it has 4"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("start at most 4 ranks per node"), std::string::npos)
      << status.message();
  EXPECT_EQ(gpu, 7);
  status = AssignGpu(0, 4, 0, 2, &gpu);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("needs 2 GPUs, but it has 0"), std::string::npos)
      << status.message();
}

TEST(GpuAssignmentTest, InvalidArgumentsAreBadInput) {
  int gpu = 0;
  EXPECT_EQ(AssignGpu(0, 1, 1, 0, &gpu).code(), Status::Code::kBadInput);
  EXPECT_EQ(AssignGpu(2, 2, 2, 1, &gpu).code(), Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
