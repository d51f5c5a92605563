// Tests only: a built-in classifier task (synthetic or fashion_mnist) with its options, loaded and
// made directly, without a config or a registry, for tests that drive the trainer themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hpo/status.hpp"
#include "tasks/fashion_mnist/model_runtime/task.hpp"
#include "tasks/model_runtime/tensor_classifier.hpp"
#include "tasks/synthetic/model_runtime/task.hpp"

namespace hpo::testing {

struct ClassifierTaskSpec {
  std::string task = "synthetic";  // or fashion_mnist
  uint64_t seed = 0;               // the synthetic data's seed
  int64_t epochs = 1;
  int64_t threads_per_rank = 1;
  SyntheticOptions synthetic;
  FashionMnistOptions fashion;
};

inline Status LoadClassifierData(const ClassifierTaskSpec& spec, TaskData* data) {
  return spec.task == "synthetic" ? GenerateSyntheticData(spec.synthetic, spec.seed, data)
                                  : LoadFashionMnist(spec.fashion, data);
}

inline std::unique_ptr<TensorClassifier> MakeClassifier(const ClassifierTaskSpec& spec,
                                                        const TaskData& data) {
  return spec.task == "synthetic" ? MakeSyntheticClassifier(data)
                                  : MakeFashionMnistClassifier(data);
}

}  // namespace hpo::testing
