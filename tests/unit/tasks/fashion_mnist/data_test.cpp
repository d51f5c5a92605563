#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tasks/fashion_mnist/model_runtime/task.hpp"
#include "train/idx_test_files.hpp"

namespace hpo {
namespace {

constexpr char kDebianFolder[] = "/usr/share/datasets/fashion-mnist";
constexpr double kMean = 0.2860;
constexpr double kStd = 0.3530;

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

  FashionMnistOptions Options() const {
    FashionMnistOptions options;
    options.folder = dir_.string();
    options.validation_samples = 6;
    return options;
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
    const Status status = LoadFashionMnist(Options(), &data);
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

    TaskData again;
    ASSERT_TRUE(LoadFashionMnist(Options(), &again).ok());
    EXPECT_EQ(SourceRows(again.validation), validation);

    FashionMnistOptions limited = Options();
    limited.train_samples = 4;
    TaskData small;
    ASSERT_TRUE(LoadFashionMnist(limited, &small).ok());
    EXPECT_EQ(SourceRows(small.train), std::vector<int64_t>(train.begin(), train.begin() + 4));
    EXPECT_EQ(SourceRows(small.validation), validation);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
}

TEST_F(FashionFolderTest, BadFolderOrSplitIsBadInput) {
  TaskData data;
  Status status = LoadFashionMnist(Options(), &data);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find((dir_ / "train-images-idx3-ubyte.gz").string()),
            std::string::npos);

  WriteFolder(true);
  FashionMnistOptions too_many = Options();
  too_many.validation_samples = 20;
  status = LoadFashionMnist(too_many, &data);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("validation_samples"), std::string::npos);

  WriteGzip("t10k-labels-idx1-ubyte.gz", testing::LabelsFile({0, 1, 2}));
  status = LoadFashionMnist(Options(), &data);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("t10k-labels-idx1-ubyte.gz: 3 labels for 5 images"),
            std::string::npos);
}

TEST(FashionMnistDebianTest, LoadsTheInstalledDataset) {
  if (!std::filesystem::exists(std::string(kDebianFolder) + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  TaskData data;
  const Status status = LoadFashionMnist(FashionMnistOptions(), &data);
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
