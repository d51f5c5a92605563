// task: fashion_mnist, the runner side: the 60000 + 10000 Fashion-MNIST images and a small CNN,
// trained as a TensorClassifier by the DDP trainer.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "hpo/status.hpp"
#include "tasks/fashion_mnist/options.hpp"
#include "tasks/model_runtime/tensor_classifier.hpp"
#include "train/task_data.hpp"

namespace hpo {

// Reads the four IDX files (gzip or plain) from options.folder, checks magic numbers, shapes and
// sizes, and splits validation_samples off a fixed (seed-independent) shuffle of the training set.
// Images become float32 [N, 1, 28, 28], scaled to [0, 1] then normalised with the dataset's mean
// 0.2860 and std 0.3530. Missing, truncated or malformed files are BadInput naming the file.
Status LoadFashionMnist(const FashionMnistOptions& options, TaskData* data);

// On [N, 1, 28, 28]: conv(1, w, 3, pad 1)-BN-ReLU-maxpool 2, conv(w, 2w, 3, pad 1)-BN-ReLU-
// maxpool 2, flatten, dropout, linear(2w*7*7, 128)-ReLU-dropout-linear(128, classes); logits.
torch::nn::Sequential BuildFashionCnn(int64_t width, double dropout, int64_t classes);

// The task over loaded data (class names T-shirt/top, Trouser, ...).
std::unique_ptr<TensorClassifier> MakeFashionMnistClassifier(const TaskData& data);

}  // namespace hpo
