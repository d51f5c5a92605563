// Test-only helpers that write IDX files (plain or gzip) into a per-test temporary folder, which
// the fixture creates in SetUp and removes in TearDown. Single-threaded.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "train/idx_reader.hpp"

namespace hpo::testing {

inline void AppendBigEndian(std::vector<uint8_t>* bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes->push_back((value >> shift) & 0xff);
}

// An images file whose pixel i (over the whole file) is pixel(i).
template <typename PixelFn>
std::vector<uint8_t> ImagesFile(uint32_t count, uint32_t rows, uint32_t cols, PixelFn pixel,
                                uint32_t magic = kIdxImagesMagic) {
  std::vector<uint8_t> bytes;
  for (uint32_t value : {magic, count, rows, cols}) AppendBigEndian(&bytes, value);
  for (uint32_t i = 0; i < count * rows * cols; ++i) bytes.push_back(pixel(i));
  return bytes;
}

inline std::vector<uint8_t> ImagesFile(uint32_t count, uint32_t rows, uint32_t cols,
                                       uint32_t magic = kIdxImagesMagic) {
  return ImagesFile(
      count, rows, cols, [](uint32_t i) { return static_cast<uint8_t>(i % 256); }, magic);
}

inline std::vector<uint8_t> LabelsFile(const std::vector<uint8_t>& labels,
                                       uint32_t magic = kIdxLabelsMagic) {
  std::vector<uint8_t> bytes;
  AppendBigEndian(&bytes, magic);
  AppendBigEndian(&bytes, static_cast<uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hpo_train_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WritePlain(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  std::string WriteGzip(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir_ / name).string();
    gzFile file = gzopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    EXPECT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(file);
    return path;
  }

  std::filesystem::path dir_;
};

}  // namespace hpo::testing
