#include "hpo/model_task.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace hpo {
namespace {

std::map<std::string, double> Metrics(const Evaluation& evaluation) {
  return {evaluation.metrics.begin(), evaluation.metrics.end()};
}

// Logits whose argmax is `predicted`.
torch::Tensor LogitsFor(const std::vector<int64_t>& predicted, int64_t classes) {
  torch::Tensor logits = torch::zeros({static_cast<int64_t>(predicted.size()), classes});
  for (size_t row = 0; row < predicted.size(); ++row) {
    logits[static_cast<int64_t>(row)][predicted[row]] = 5.0;
  }
  return logits;
}

TEST(ClassificationObjectiveTest, AccuracyMacroF1AndConfusionAsScikitLearnComputesThem) {
  // y_true = [0 0 1 1 2 2], y_pred = [0 1 1 1 0 2]: per class F1 = 2TP / (true + predicted) =
  // 2/4, 4/5, 2/3; scikit-learn's f1_score(average="macro") is their mean, 0.65555...
  const std::vector<int64_t> truth = {0, 0, 1, 1, 2, 2};
  const std::vector<int64_t> predicted = {0, 1, 1, 1, 0, 2};
  ClassificationObjective objective({"a", "b", "c"});
  Batch batch;
  batch.targets = torch::tensor(truth, torch::kInt64);
  std::vector<double> sums(objective.EvaluationSize(), 0.0);
  // In two halves, as two ranks would add their shards.
  for (int64_t half : {0, 1}) {
    Batch part;
    part.targets = batch.targets.narrow(0, half * 3, 3);
    objective.Accumulate(LogitsFor(predicted, 3).narrow(0, half * 3, 3), part, sums.data());
  }
  const Evaluation evaluation = objective.Summarize(sums, "test_");
  const std::map<std::string, double> metrics = Metrics(evaluation);
  EXPECT_DOUBLE_EQ(metrics.at("test_accuracy"), 4.0 / 6.0);
  EXPECT_NEAR(metrics.at("test_macro_f1"), (2.0 / 4 + 4.0 / 5 + 2.0 / 3) / 3, 1e-12);
  EXPECT_GT(metrics.at("test_loss"), 0.0);
  ASSERT_EQ(evaluation.tables.size(), 1u);
  const MetricTable& confusion = evaluation.tables[0];
  EXPECT_EQ(confusion.name, "confusion");
  EXPECT_EQ(confusion.labels, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(confusion.values, (std::vector<double>{1, 1, 0, 0, 2, 0, 1, 0, 1}));
  EXPECT_TRUE(objective.Summarize(sums, "val_").tables.empty());
  EXPECT_EQ(ClassificationObjective::MetricNames("val_"),
            (std::vector<std::string>{"val_loss", "val_accuracy", "val_macro_f1"}));
}

TEST(ClassificationObjectiveTest, MacroF1LeavesOutClassesNeitherTrueNorPredicted) {
  ClassificationObjective objective({"a", "b", "c", "d"});
  Batch batch;
  batch.targets = torch::tensor(std::vector<int64_t>{0, 1}, torch::kInt64);
  std::vector<double> sums(objective.EvaluationSize(), 0.0);
  objective.Accumulate(LogitsFor({0, 1}, 4), batch, sums.data());
  EXPECT_DOUBLE_EQ(Metrics(objective.Summarize(sums, "val_")).at("val_macro_f1"), 1.0);
}

TEST(ClassificationObjectiveTest, OutputsOfTheWrongShapeAreNamed) {
  ClassificationObjective objective({"a", "b"});
  Batch batch;
  batch.targets = torch::zeros({4}, torch::kInt64);
  try {
    objective.Loss(torch::zeros({4, 3}), batch);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("[4, 3]"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("[4, 2]"), std::string::npos) << error.what();
  }
}

TEST(RegressionObjectiveTest, MseRmseAndR2PerOutputAveraged) {
  // Two outputs; scikit-learn: r2_score(y, p) = mean(1 - 2/20, 1 - 0/8) = 0.95.
  const torch::Tensor targets =
      torch::tensor({1.0, 0.0, 3.0, 2.0, 5.0, 4.0, 7.0, 2.0}).view({4, 2});
  const torch::Tensor outputs =
      torch::tensor({2.0, 0.0, 3.0, 2.0, 5.0, 4.0, 6.0, 2.0}).view({4, 2});
  RegressionObjective objective(2);
  Batch batch;
  batch.targets = targets;
  std::vector<double> sums(objective.EvaluationSize(), 0.0);
  objective.Accumulate(outputs, batch, sums.data());
  const std::map<std::string, double> metrics = Metrics(objective.Summarize(sums, "val_"));
  EXPECT_DOUBLE_EQ(metrics.at("val_loss"), 2.0 / 8.0);
  EXPECT_DOUBLE_EQ(metrics.at("val_rmse"), std::sqrt(2.0 / 8.0));
  EXPECT_NEAR(metrics.at("val_r2"), 0.95, 1e-12);
  EXPECT_NEAR(objective.Loss(outputs, batch).item<double>(), 0.25, 1e-6);
}

TEST(TensorDatasetTest, GathersRowsOfEveryInputAndTheTargets) {
  const TensorDataset data({torch::arange(12).view({6, 2}), torch::arange(6) * 10},
                           torch::arange(6) + 100);
  const Batch batch = data.Gather(torch::tensor(std::vector<int64_t>{4, 1}, torch::kInt64));
  ASSERT_EQ(batch.size(), 2);
  EXPECT_TRUE(torch::equal(batch.inputs[0], torch::tensor({8, 9, 2, 3}).view({2, 2})));
  EXPECT_TRUE(torch::equal(batch.inputs[1], torch::tensor({40, 10})));
  EXPECT_TRUE(torch::equal(batch.targets, torch::tensor({104, 101})));
}

}  // namespace
}  // namespace hpo
