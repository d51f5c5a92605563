// The built-in classifiers (fashion_mnist, synthetic) as a ModelTask (hpo/model_task.hpp), written
// against the public task API like a user's own task: the task's data (TaskData, loaded once per
// rank), the CNN or MLP of models.hpp built from a trial's `width` and `dropout`, cross-entropy
// with accuracy, macro F1 and, on the test split, the confusion matrix. Used by one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hpo/model_task.hpp"
#include "train/task_data.hpp"
#include "train/trainer.hpp"

namespace hpo {

class BuiltinClassifier final : public ModelTask {
 public:
  // `task`: fashion_mnist or synthetic. Shares `data`'s tensors (no copy).
  BuiltinClassifier(std::string task, const TaskData& data);

  // Loads the task's data for `execution` (LoadTaskData) and makes the task.
  static Status Load(const ExecutionSpec& execution, std::unique_ptr<BuiltinClassifier>* task);

  const Dataset& train_data() const override { return train_; }
  const Dataset& validation_data() const override { return validation_; }
  const Dataset* test_data() const override { return &test_; }
  Status BuildModel(const Assignment& params, std::unique_ptr<TrainableModel>* model) override;
  torch::Tensor Loss(const torch::Tensor& outputs, const Batch& batch) override {
    return objective_.Loss(outputs, batch);
  }
  size_t EvaluationSize() const override { return objective_.EvaluationSize(); }
  void Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) override {
    objective_.Accumulate(outputs, batch, sums);
  }
  Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) override {
    return objective_.Summarize(sums, prefix);
  }

 private:
  std::string task_;
  int64_t input_features_ = 0;
  TensorDataset train_;
  TensorDataset validation_;
  TensorDataset test_;
  ClassificationObjective objective_;
};

// The trainer's setup for `task` (borrowed): the classifiers' hyperparameters and metrics, and
// `execution`'s threads per rank.
TrainingSetup BuiltinClassifierSetup(BuiltinClassifier* task, const ExecutionSpec& execution);

}  // namespace hpo
