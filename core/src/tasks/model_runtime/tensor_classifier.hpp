// A classifier over in-memory tensors as a ModelTask (hpo/model_task.hpp), written against the
// public task API like a user's own task: the task's data (TaskData, loaded once per rank and
// shared), a network built per trial from its `width` and `dropout` by the task's builder,
// cross-entropy with accuracy, macro F1 and, on the test split, the confusion matrix. The built-in
// fashion_mnist and synthetic tasks are this with their own data and network. Used by one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hpo/model_task.hpp"
#include "train/task_data.hpp"
#include "train/trainer.hpp"

namespace hpo {

class TensorClassifier final : public ModelTask {
 public:
  // The network of one trial: logits over `classes`; width >= 1, 0 <= dropout < 1. Initial
  // weights come from torch's global generator, which the trainer seeds.
  using NetworkBuilder =
      std::function<torch::nn::Sequential(int64_t width, double dropout, int64_t classes)>;

  // Shares `data`'s tensors (no copy). `class_names` label the confusion matrix (one per class).
  TensorClassifier(const TaskData& data, std::vector<std::string> class_names,
                   NetworkBuilder build_network);

  const Dataset& train_data() const override { return train_; }
  const Dataset& validation_data() const override { return validation_; }
  const Dataset* test_data() const override { return &test_; }
  // BadInput for a width outside [1, 4096] or a dropout outside [0, 1).
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
  TensorDataset train_;
  TensorDataset validation_;
  TensorDataset test_;
  ClassificationObjective objective_;
  NetworkBuilder build_network_;
};

// The class names 0, 1, ..., classes - 1.
std::vector<std::string> NumberedClassNames(int64_t classes);

// The trainer's setup for `task` (borrowed): the classifiers' hyperparameters and metrics
// (tasks/classifier_description.hpp) and `threads_per_rank`.
TrainingSetup ClassifierSetup(TensorClassifier* task, int64_t threads_per_rank);

}  // namespace hpo
