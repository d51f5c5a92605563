#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tasks/synthetic/model_runtime/task.hpp"

namespace hpo {
namespace {

SyntheticOptions SmallOptions() {
  SyntheticOptions options;
  options.train_samples = 300;
  options.val_samples = 100;
  options.test_samples = 50;
  options.features = 6;
  options.classes = 3;
  return options;
}

TEST(SyntheticDataTest, ShapesAndDeterminismFromTheSweepSeed) {
  TaskData a;
  ASSERT_TRUE(GenerateSyntheticData(SmallOptions(), 5, &a).ok());
  EXPECT_EQ(a.num_classes, 3);
  EXPECT_EQ(a.train.inputs.sizes(), (std::vector<int64_t>{300, 6}));
  EXPECT_EQ(a.validation.size(), 100);
  EXPECT_EQ(a.test.size(), 50);
  EXPECT_EQ(a.train.inputs.scalar_type(), torch::kFloat32);
  EXPECT_EQ(a.train.labels.scalar_type(), torch::kInt64);
  const torch::Tensor counts = a.train.labels.bincount();
  EXPECT_EQ(counts.numel(), 3);
  EXPECT_GT(counts.min().item<int64_t>(), 0);

  torch::manual_seed(12345);  // torch's global generator plays no part
  TaskData same;
  ASSERT_TRUE(GenerateSyntheticData(SmallOptions(), 5, &same).ok());
  EXPECT_TRUE(torch::equal(a.train.inputs, same.train.inputs));
  EXPECT_TRUE(torch::equal(a.train.labels, same.train.labels));
  EXPECT_TRUE(torch::equal(a.test.labels, same.test.labels));
  EXPECT_FALSE(torch::equal(a.train.inputs.narrow(0, 0, 100), a.validation.inputs));

  TaskData other;
  ASSERT_TRUE(GenerateSyntheticData(SmallOptions(), 6, &other).ok());
  EXPECT_FALSE(torch::equal(a.train.inputs, other.train.inputs));
}

TEST(SyntheticDataTest, LabelsFollowTheTeacherWhenNoiseIsLow) {
  SyntheticOptions options = SmallOptions();
  options.noise = 0.0;
  options.train_samples = 2000;
  TaskData data;
  ASSERT_TRUE(GenerateSyntheticData(options, 1, &data).ok());
  // A linear teacher without noise: a least-squares fit of one-hot labels separates most points.
  const torch::Tensor x =
      torch::cat({data.train.inputs, torch::ones({data.train.size(), 1})}, 1).to(torch::kFloat64);
  const torch::Tensor y = torch::one_hot(data.train.labels, 3).to(torch::kFloat64);
  const torch::Tensor w = std::get<0>(torch::linalg_lstsq(x, y));
  const double accuracy =
      x.matmul(w).argmax(1).eq(data.train.labels).to(torch::kFloat64).mean().item<double>();
  EXPECT_GT(accuracy, 0.8);
}

TEST(SyntheticDataTest, RejectsBadSizes) {
  SyntheticOptions options = SmallOptions();
  options.classes = 1;
  TaskData data;
  EXPECT_EQ(GenerateSyntheticData(options, 1, &data).code(), Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
