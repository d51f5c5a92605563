// task: synthetic's options, torch-free: the `synthetic:` section's size and difficulty of the
// in-memory data set.
#pragma once

#include <cstdint>

#include "hpo/config.hpp"
#include "hpo/status.hpp"

namespace hpo {

struct SyntheticOptions {
  int64_t train_samples = 4096;
  int64_t val_samples = 1024;
  int64_t test_samples = 1024;
  int64_t features = 32;
  int64_t classes = 4;
  double noise = 0.5;  // std-dev of the Gaussian noise added to the teacher's logits
};

// Reads `synthetic.*` (sizes and features >= 1, classes >= 2, noise >= 0); BadInput naming the
// file, line and key.
Status ReadSyntheticOptions(const TaskOptions& options, SyntheticOptions* read);

}  // namespace hpo
