// task: torchscript as a ModelTask (hpo/model_task.hpp): the user's TorchScript model
// (ScriptModel, `model:` with {placeholders} filled per trial) trained on a data set of numeric
// arrays (`data:`, an HDF5 file or a folder of .npy files, loaded once per rank), with
// cross-entropy (accuracy, macro F1, confusion) or mse (RMSE, R2) by `loss:`. Float inputs train
// as float32, integer inputs (token ids) as int64. When the data set has no validation split,
// every tenth training sample (index % 10 == 9, the same whatever the seed) is carved off for it.
// Used by one thread.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/model_task.hpp"

namespace hpo {

class TorchScriptTask final : public ModelTask {
 public:
  // Loads `config`'s data and, when `model` has no placeholder, checks the model on a first batch.
  // BadInput naming the file and dataset or the model's problem (forward failing on a batch of
  // the data's shape, outputs that do not fit the labels).
  static Status Make(const SweepConfig& config, std::unique_ptr<ModelTask>* task);

  const Dataset& train_data() const override { return train_; }
  const Dataset& validation_data() const override { return validation_; }
  const Dataset* test_data() const override { return test_.size() > 0 ? &test_ : nullptr; }
  // Loads the trial's model file; a file seen for the first time is checked on a first batch.
  Status BuildModel(const Assignment& params, std::unique_ptr<TrainableModel>* model) override;
  torch::Tensor Loss(const torch::Tensor& outputs, const Batch& batch) override;
  size_t EvaluationSize() const override;
  void Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) override;
  Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) override;

 private:
  TorchScriptTask() = default;
  // BadInput unless the model at `path` runs on two training rows and its output fits the loss.
  Status CheckOnFirstBatch(const std::string& path, TrainableModel& model);

  std::string model_pattern_;  // ModelPathPattern: absolute, placeholders unfilled
  TensorDataset train_;
  TensorDataset validation_;
  TensorDataset test_;
  std::variant<ClassificationObjective, RegressionObjective> objective_{
      ClassificationObjective({})};
  std::set<std::string> checked_models_;
};

}  // namespace hpo
