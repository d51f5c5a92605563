#include "train/task_data.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "idx_test_files.hpp"

namespace hpo {
namespace {

constexpr char kDebianFolder[] = "/usr/share/datasets/fashion-mnist";
constexpr double kMean = 0.2860;
constexpr double kStd = 0.3530;

ExecutionSpec SyntheticSpec(uint64_t seed) {
  ExecutionSpec execution;
  execution.task = "synthetic";
  execution.seed = seed;
  execution.synthetic.train_samples = 300;
  execution.synthetic.val_samples = 100;
  execution.synthetic.test_samples = 50;
  execution.synthetic.features = 6;
  execution.synthetic.classes = 3;
  return execution;
}

TEST(SyntheticDataTest, ShapesAndDeterminismFromTheSweepSeed) {
  TaskData a;
  ASSERT_TRUE(LoadTaskData(SyntheticSpec(5), &a).ok());
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
  ASSERT_TRUE(LoadTaskData(SyntheticSpec(5), &same).ok());
  EXPECT_TRUE(torch::equal(a.train.inputs, same.train.inputs));
  EXPECT_TRUE(torch::equal(a.train.labels, same.train.labels));
  EXPECT_TRUE(torch::equal(a.test.labels, same.test.labels));
  EXPECT_FALSE(torch::equal(a.train.inputs.narrow(0, 0, 100), a.validation.inputs));

  TaskData other;
  ASSERT_TRUE(LoadTaskData(SyntheticSpec(6), &other).ok());
  EXPECT_FALSE(torch::equal(a.train.inputs, other.train.inputs));
}

TEST(SyntheticDataTest, LabelsFollowTheTeacherWhenNoiseIsLow) {
  ExecutionSpec execution = SyntheticSpec(1);
  execution.synthetic.noise = 0.0;
  execution.synthetic.train_samples = 2000;
  TaskData data;
  ASSERT_TRUE(LoadTaskData(execution, &data).ok());
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
  ExecutionSpec execution = SyntheticSpec(1);
  execution.synthetic.classes = 1;
  TaskData data;
  EXPECT_EQ(LoadTaskData(execution, &data).code(), Status::Code::kBadInput);
}

class FashionFolderTest : public testing::TempDirTest {
 protected:
  // train: 20 images whose pixels all equal the image's index * 10, labels index % 10; t10k: 5.
  void WriteFolder(bool gzip) {
    const auto write = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
      if (gzip) {
        WriteGzip(name + ".gz", bytes);
      } else {
        WritePlain(name, bytes);
      }
    };
    const auto pixel = [](uint32_t i) { return static_cast<uint8_t>((i / 784) * 10); };
    std::vector<uint8_t> labels;
    for (uint8_t i = 0; i < 20; ++i) labels.push_back(i % 10);
    write("train-images-idx3-ubyte", testing::ImagesFile(20, 28, 28, pixel));
    write("train-labels-idx1-ubyte", testing::LabelsFile(labels));
    write("t10k-images-idx3-ubyte", testing::ImagesFile(5, 28, 28, pixel));
    write("t10k-labels-idx1-ubyte", testing::LabelsFile({0, 1, 2, 3, 4}));
  }

  ExecutionSpec Spec(uint64_t seed) const {
    ExecutionSpec execution;
    execution.task = "fashion_mnist";
    execution.data = dir_.string();
    execution.seed = seed;
    execution.validation_samples = 6;
    return execution;
  }
};

// Image index i has pixels 10 i (normalised) and label i % 10, so each row names its source.
std::vector<int64_t> SourceRows(const LabeledTensors& split) {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < split.size(); ++r) {
    const double value = split.inputs[r][0][0][0].item<double>() * kStd + kMean;
    const auto index = static_cast<int64_t>(std::lround(value * 255.0 / 10.0));
    EXPECT_EQ(split.labels[r].item<int64_t>(), index % 10);
    rows.push_back(index);
  }
  return rows;
}

TEST_F(FashionFolderTest, SplitsAFixedShuffleAndNormalises) {
  for (bool gzip : {true, false}) {
    WriteFolder(gzip);
    TaskData data;
    const Status status = LoadTaskData(Spec(1), &data);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(data.num_classes, 10);
    EXPECT_EQ(data.train.inputs.sizes(), (std::vector<int64_t>{14, 1, 28, 28}));
    EXPECT_EQ(data.validation.size(), 6);
    EXPECT_EQ(data.test.size(), 5);
    EXPECT_NEAR(data.test.inputs[0][0][5][5].item<double>(), (0.0 - kMean) / kStd, 1e-6);
    EXPECT_NEAR(data.test.inputs[3][0][5][5].item<double>(), (30.0 / 255.0 - kMean) / kStd, 1e-6);

    std::vector<int64_t> train = SourceRows(data.train);
    const std::vector<int64_t> validation = SourceRows(data.validation);
    std::vector<int64_t> all = train;
    all.insert(all.end(), validation.begin(), validation.end());
    std::sort(all.begin(), all.end());
    for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(all[i], i);
    EXPECT_NE(validation, (std::vector<int64_t>{14, 15, 16, 17, 18, 19}));  // shuffled

    TaskData other_seed;
    ASSERT_TRUE(LoadTaskData(Spec(999), &other_seed).ok());
    EXPECT_EQ(SourceRows(other_seed.validation), validation);

    ExecutionSpec limited = Spec(1);
    limited.train_samples = 4;
    TaskData small;
    ASSERT_TRUE(LoadTaskData(limited, &small).ok());
    EXPECT_EQ(SourceRows(small.train), std::vector<int64_t>(train.begin(), train.begin() + 4));
    EXPECT_EQ(SourceRows(small.validation), validation);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
}

TEST_F(FashionFolderTest, BadFolderOrSplitIsBadInput) {
  TaskData data;
  Status status = LoadTaskData(Spec(1), &data);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find((dir_ / "train-images-idx3-ubyte.gz").string()),
            std::string::npos);

  WriteFolder(true);
  ExecutionSpec too_many = Spec(1);
  too_many.validation_samples = 20;
  status = LoadTaskData(too_many, &data);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("validation_samples"), std::string::npos);

  WriteGzip("t10k-labels-idx1-ubyte.gz", testing::LabelsFile({0, 1, 2}));
  status = LoadTaskData(Spec(1), &data);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("t10k-labels-idx1-ubyte.gz: 3 labels for 5 images"),
            std::string::npos);
}

TEST(FashionMnistDebianTest, LoadsTheInstalledDataset) {
  if (!std::filesystem::exists(std::string(kDebianFolder) + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  ExecutionSpec execution;
  execution.task = "fashion_mnist";
  TaskData data;
  const Status status = LoadTaskData(execution, &data);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(data.train.size(), 54000);
  EXPECT_EQ(data.validation.size(), 6000);
  EXPECT_EQ(data.test.inputs.sizes(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_NEAR(data.train.inputs.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(data.train.inputs.std().item<double>(), 1.0, 0.02);
  EXPECT_EQ(data.train.labels.max().item<int64_t>(), 9);
}

}  // namespace
}  // namespace hpo
