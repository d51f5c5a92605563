// task: fashion_mnist's options, torch-free: the keys it owns beside `sweep:`.
#pragma once

#include <cstdint>
#include <string>

#include "hpo/config.hpp"
#include "hpo/status.hpp"

namespace hpo {

struct FashionMnistOptions {
  // `data`: the folder with the four IDX files (gzip as shipped or uncompressed).
  std::string folder = "/usr/share/datasets/fashion-mnist";
  // `validation_samples`: carved from the end of a fixed shuffle of the 60000 training images.
  int64_t validation_samples = 6000;
  // `train_samples`: use only the first N training samples after the split; 0 means all.
  int64_t train_samples = 0;
};

// Reads `data`, `validation_samples` (1 to 59999) and `train_samples` (>= 0); BadInput naming the
// file, line and key.
Status ReadFashionMnistOptions(const TaskOptions& options, FashionMnistOptions* read);

}  // namespace hpo
