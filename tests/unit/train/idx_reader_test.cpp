#include "train/idx_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "idx_test_files.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

constexpr char kDebianFolder[] = "/usr/share/datasets/fashion-mnist";

using IdxReaderTest = testing::TempDirTest;
using testing::ImagesFile;
using testing::LabelsFile;

TEST_F(IdxReaderTest, ReadsPlainAndGzipFilesAlike) {
  const std::vector<uint8_t> bytes = ImagesFile(3, 28, 28);
  for (const std::string& path : {WritePlain("images", bytes), WriteGzip("images.gz", bytes)}) {
    IdxImages images;
    const Status status = ReadIdxImages(path, &images);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(images.count, 3);
    EXPECT_EQ(images.rows, 28);
    EXPECT_EQ(images.cols, 28);
    ASSERT_EQ(images.pixels.size(), 3u * 28 * 28);
    EXPECT_TRUE(std::equal(images.pixels.begin(), images.pixels.end(), bytes.begin() + 16));
  }
  const std::vector<uint8_t> labels = {0, 9, 4};
  for (const std::string& path :
       {WritePlain("labels", LabelsFile(labels)), WriteGzip("labels.gz", LabelsFile(labels))}) {
    std::vector<uint8_t> read;
    ASSERT_TRUE(ReadIdxLabels(path, &read).ok());
    EXPECT_EQ(read, labels);
  }
}

TEST_F(IdxReaderTest, BadMagicNamesTheFile) {
  const std::string path = WriteGzip("images.gz", ImagesFile(2, 28, 28, kIdxLabelsMagic));
  IdxImages images;
  const Status status = ReadIdxImages(path, &images);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), path + ": bad magic number 2049, expected 2051");

  const std::string labels_path = WritePlain("labels", LabelsFile({1, 2}, kIdxImagesMagic));
  std::vector<uint8_t> labels;
  const Status labels_status = ReadIdxLabels(labels_path, &labels);
  EXPECT_EQ(labels_status.code(), Status::Code::kBadInput);
  EXPECT_NE(labels_status.message().find(labels_path + ": bad magic number 2051"),
            std::string::npos);
}

TEST_F(IdxReaderTest, TruncatedFileReportsExpectedAndActualLength) {
  std::vector<uint8_t> bytes = ImagesFile(2, 28, 28);
  const size_t expected = bytes.size();
  bytes.resize(expected - 100);
  for (const std::string& path : {WritePlain("short", bytes), WriteGzip("short.gz", bytes)}) {
    IdxImages images;
    const Status status = ReadIdxImages(path, &images);
    EXPECT_EQ(status.code(), Status::Code::kBadInput);
    EXPECT_EQ(status.message(), path + ": truncated: expected " + std::to_string(expected) +
                                    " bytes, got " + std::to_string(expected - 100));
  }
  const std::string header_only = WritePlain("header", {0, 0, 8, 1});
  std::vector<uint8_t> labels;
  const Status status = ReadIdxLabels(header_only, &labels);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(header_only + ": truncated"), std::string::npos);
}

TEST_F(IdxReaderTest, TruncatedGzipStreamIsTruncated) {
  const std::string full = WriteGzip("full.gz", ImagesFile(20, 28, 28));
  std::ifstream in(full, std::ios::binary);
  std::vector<uint8_t> compressed((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  compressed.resize(compressed.size() / 2);
  const std::string path = WritePlain("cut.gz", compressed);
  IdxImages images;
  const Status status = ReadIdxImages(path, &images);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message().rfind(path + ": ", 0), 0u) << status.message();
}

TEST_F(IdxReaderTest, TrailingBytesAreAnError) {
  std::vector<uint8_t> bytes = LabelsFile({1, 2, 3});
  bytes.push_back(7);
  const std::string path = WritePlain("long", bytes);
  std::vector<uint8_t> labels;
  const Status status = ReadIdxLabels(path, &labels);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), path + ": trailing data: expected 11 bytes, got 12");
}

TEST_F(IdxReaderTest, MissingFileNamesTheFullPath) {
  const std::string path = (dir_ / "nothing-here.gz").string();
  IdxImages images;
  const Status status = ReadIdxImages(path, &images);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), path + ": no such file");
}

TEST_F(IdxReaderTest, DatasetChecksCountsShapesAndLabels) {
  const std::string images_path = WriteGzip("images.gz", ImagesFile(3, 28, 28));
  IdxImages images;
  std::vector<uint8_t> labels;

  const std::string two_labels = WriteGzip("two.gz", LabelsFile({1, 2}));
  Status status = ReadIdxDataset(images_path, two_labels, 28, 28, 10, &images, &labels);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), two_labels + ": 2 labels for 3 images in " + images_path);

  const std::string big_label = WritePlain("big", LabelsFile({1, 10, 2}));
  status = ReadIdxDataset(images_path, big_label, 28, 28, 10, &images, &labels);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(big_label + ": label 10 of item 1"), std::string::npos);

  const std::string small_images = WritePlain("small", ImagesFile(3, 27, 28));
  const std::string good_labels = WritePlain("good", LabelsFile({1, 9, 2}));
  status = ReadIdxDataset(small_images, good_labels, 28, 28, 10, &images, &labels);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), small_images + ": images are 27x28, expected 28x28");

  status = ReadIdxDataset(images_path, good_labels, 28, 28, 10, &images, &labels);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(images.count, 3);
  EXPECT_EQ(labels, (std::vector<uint8_t>{1, 9, 2}));
}

TEST_F(IdxReaderTest, FindIdxFilePrefersGzipThenPlain) {
  std::string path;
  Status status = FindIdxFile(dir_.string(), "data", &path);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            (dir_ / "data").string() + ".gz: no such file (nor " + (dir_ / "data").string() + ")");

  WritePlain("data", LabelsFile({1}));
  ASSERT_TRUE(FindIdxFile(dir_.string(), "data", &path).ok());
  EXPECT_EQ(path, (dir_ / "data").string());

  WriteGzip("data.gz", LabelsFile({1}));
  ASSERT_TRUE(FindIdxFile(dir_.string(), "data", &path).ok());
  EXPECT_EQ(path, (dir_ / "data").string() + ".gz");
}

TEST(IdxReaderDebianTest, ReadsFashionMnistFiles) {
  const std::string folder = kDebianFolder;
  if (!fs::exists(folder + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  struct Split {
    const char* prefix;
    int64_t count;
  };
  for (const Split& split : {Split{"train", 60000}, Split{"t10k", 10000}}) {
    IdxImages images;
    std::vector<uint8_t> labels;
    const std::string prefix = folder + "/" + split.prefix;
    const Status status =
        ReadIdxDataset(prefix + "-images-idx3-ubyte.gz", prefix + "-labels-idx1-ubyte.gz", 28, 28,
                       10, &images, &labels);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(images.count, split.count);
    EXPECT_EQ(static_cast<int64_t>(labels.size()), split.count);
    EXPECT_EQ(*std::min_element(images.pixels.begin(), images.pixels.end()), 0);
    EXPECT_EQ(*std::max_element(images.pixels.begin(), images.pixels.end()), 255);
    EXPECT_EQ(*std::max_element(labels.begin(), labels.end()), 9);
  }
}

}  // namespace
}  // namespace hpo
