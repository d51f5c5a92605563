#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tasks/fashion_mnist/model_runtime/task.hpp"

namespace hpo {
namespace {

TEST(FashionCnnTest, LogitsPerImage) {
  torch::nn::Sequential model = BuildFashionCnn(/*width=*/3, /*dropout=*/0.5, /*classes=*/10);
  EXPECT_EQ(model->forward(torch::zeros({5, 1, 28, 28})).sizes(), (std::vector<int64_t>{5, 10}));
  // Two convolutions with their BatchNorms, two linear layers: weight and bias each.
  EXPECT_EQ(model->parameters().size(), 12u);
}

TEST(FashionCnnTest, ClassifierNamesTheClothes) {
  TaskData data;
  data.num_classes = 10;
  const std::unique_ptr<TensorClassifier> task = MakeFashionMnistClassifier(data);
  std::vector<double> sums(task->EvaluationSize(), 0.0);
  EXPECT_EQ(task->Summarize(sums, "test_").tables.at(0).labels.at(9), "Ankle boot");
}

}  // namespace
}  // namespace hpo
