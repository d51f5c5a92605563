#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tasks/synthetic/model_runtime/task.hpp"

namespace hpo {
namespace {

TEST(SyntheticMlpTest, LogitsPerSampleAndNoBuffers) {
  torch::nn::Sequential model =
      BuildSyntheticMlp(/*features=*/11, /*width=*/7, /*dropout=*/0.0, /*classes=*/4);
  EXPECT_EQ(model->forward(torch::zeros({2, 11})).sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(model->parameters().size(), 6u);
  EXPECT_TRUE(model->buffers().empty());
}

TEST(SyntheticMlpTest, ClassifierBuildsTheMlpOverTheDataFeatures) {
  SyntheticOptions options;
  options.features = 5;
  options.classes = 3;
  TaskData data;
  ASSERT_TRUE(GenerateSyntheticData(options, 1, &data).ok());
  const std::unique_ptr<TensorClassifier> task = MakeSyntheticClassifier(data);
  std::unique_ptr<TrainableModel> model;
  ASSERT_TRUE(task->BuildModel({{"width", int64_t{6}}}, &model).ok());
  EXPECT_EQ(model->Parameters().front().sizes(), (std::vector<int64_t>{6, 5}));
  EXPECT_EQ(task->BuildModel({{"width", int64_t{0}}}, &model).code(), Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
