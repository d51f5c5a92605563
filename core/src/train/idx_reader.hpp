// Readers for the IDX files of MNIST-style datasets (http://yann.lecun.com/exdb/mnist/), gzip
// compressed or plain (zlib reads both transparently). Torch-free: they return bytes, the caller
// turns them into tensors. Pure functions of the files they read; thread-safe; called by every rank
// that loads data, no collectives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/status.hpp"

namespace hpo {

inline constexpr uint32_t kIdxImagesMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
inline constexpr uint32_t kIdxLabelsMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension

// An images file: `count` images of rows x cols pixels, row-major, one byte per pixel.
struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols bytes
};

// Reads an images file (magic 2051). The file's length must be exactly what its header announces.
// Every error is BadInput and starts with `path`: missing or unreadable file, bad magic number,
// "<path>: truncated: expected N bytes, got M", or trailing bytes.
Status ReadIdxImages(const std::string& path, IdxImages* images);

// Reads a labels file (magic 2049) with the same checks as ReadIdxImages.
Status ReadIdxLabels(const std::string& path, std::vector<uint8_t>* labels);

// Reads a matching pair and checks it: images of exactly rows x cols pixels, as many labels as
// images, every label below `num_classes`. Errors are BadInput naming the offending file.
Status ReadIdxDataset(const std::string& images_path, const std::string& labels_path, int64_t rows,
                      int64_t cols, int num_classes, IdxImages* images,
                      std::vector<uint8_t>* labels);

// Finds `name` in `folder` as shipped ("<name>.gz") or uncompressed ("<name>"), preferring the
// compressed file. When neither exists: BadInput naming both full paths.
Status FindIdxFile(const std::string& folder, const std::string& name, std::string* path);

}  // namespace hpo
