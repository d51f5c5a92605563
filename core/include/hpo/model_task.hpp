// A user's own libtorch model as a kind of task (docs/design.md, "Tasks"): the task says what data
// it trains on, how it builds a model from a trial's hyperparameters, its loss, and what it
// measures; the project's DDP trainer does the rest (sharding, gradient buckets with overlap and
// compression, checkpoints, preemption, early stopping, NCCL on GPUs). The built-in tasks
// (fashion_mnist, synthetic, torchscript, text_classification) are written against exactly this
// header.
//
// Register one with AddModelTask (below) in a TaskRegistry, and run the registry with
// hpo::Main (hpo/main.hpp); apps/examples/custom_task is a complete example.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/trial.hpp"

namespace hpo {

class TaskRegistry;

// Rows of a split as the trainer hands them to the model: one or more input tensors and the
// targets, each [B, ...] with the same B. Tensors are shared handles; copying a Batch is cheap.
struct Batch {
  std::vector<torch::Tensor> inputs;
  torch::Tensor targets;

  int64_t size() const { return targets.defined() ? targets.size(0) : 0; }
  // The same rows on `device` (non_blocking copies from pinned memory where it applies).
  Batch To(torch::Device device) const;
};

// One split of a task's data, loaded once per rank and shared read-only by every trial the rank
// trains. The trainer shards it across the trial group and assembles batches by index, on the
// training thread and on a prefetch thread at once: Gather must be safe to call concurrently.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Rows `indices` (int64 [B], on the CPU, each in [0, size())), on the CPU.
  virtual Batch Gather(const torch::Tensor& indices) const = 0;
};

// The common case: whole tensors in memory, rows picked with index_select. Integer inputs (token
// ids) and any number of input dimensions are fine. An empty TensorDataset has size 0.
class TensorDataset final : public Dataset {
 public:
  TensorDataset() = default;
  // Preconditions: every tensor is [N, ...] with the same N, on the CPU.
  TensorDataset(std::vector<torch::Tensor> inputs, torch::Tensor targets);
  // The rows of `batch` (e.g. a Gather of another dataset).
  explicit TensorDataset(Batch batch)
      : TensorDataset(std::move(batch.inputs), std::move(batch.targets)) {}

  int64_t size() const override { return targets_.defined() ? targets_.size(0) : 0; }
  Batch Gather(const torch::Tensor& indices) const override;

  const std::vector<torch::Tensor>& inputs() const { return inputs_; }
  const torch::Tensor& targets() const { return targets_; }

 private:
  std::vector<torch::Tensor> inputs_;
  torch::Tensor targets_;
};

// One trial's model on one rank, as the trainer sees it: its tensors, its mode, its forward, and
// how its state is saved. Owned by the trainer for the length of a trial; used by one thread.
class TrainableModel {
 public:
  virtual ~TrainableModel() = default;
  // Every parameter, in a fixed order; the trainer optimises those that require grad and
  // averages their gradients across the group.
  virtual std::vector<torch::Tensor> Parameters() = 0;
  // Every buffer (BatchNorm statistics, ...), in a fixed order; kept identical across the group.
  virtual std::vector<torch::Tensor> Buffers() = 0;
  virtual void SetTraining(bool training) = 0;
  virtual void MoveTo(torch::Device device) = 0;
  // The outputs for `batch` (already on the model's device), e.g. logits [B, classes].
  virtual torch::Tensor Forward(const Batch& batch) = 0;
  // Parameters and buffers into / out of a checkpoint archive.
  virtual void Save(torch::serialize::OutputArchive& archive) = 0;
  virtual void Load(torch::serialize::InputArchive& archive) = 0;
  // Writes the trained model where a user can load it again (the best trial's model file), and
  // reads such a file back into this model (to evaluate the best trial on the test split). Export
  // should write CPU tensors (the built-in models do), so that the file loads where there is no
  // GPU; Import puts the tensors on this model's device (InputArchive::load_from(path, device)),
  // whichever device the file's came from.
  virtual void Export(const std::string& path) = 0;
  virtual void Import(const std::string& path) = 0;
};

// A torch::nn::Module and the forward that feeds it a Batch, e.g.
//   auto net = std::make_shared<MyNet>(width);
//   *model = std::make_unique<ModuleModel>(net, [net](const Batch& b) {
//     return net->forward(b.inputs[0]); });
// Export writes the module's parameters and buffers as torch::save does (torch::load reads it),
// copied to the CPU.
// Forward must not keep the batch beyond the call.
class ModuleModel final : public TrainableModel {
 public:
  using ForwardFn = std::function<torch::Tensor(const Batch&)>;
  ModuleModel(std::shared_ptr<torch::nn::Module> module, ForwardFn forward)
      : module_(std::move(module)), forward_(std::move(forward)) {}

  std::vector<torch::Tensor> Parameters() override { return module_->parameters(); }
  std::vector<torch::Tensor> Buffers() override { return module_->buffers(); }
  void SetTraining(bool training) override { module_->train(training); }
  void MoveTo(torch::Device device) override { module_->to(device); }
  torch::Tensor Forward(const Batch& batch) override { return forward_(batch); }
  void Save(torch::serialize::OutputArchive& archive) override { module_->save(archive); }
  void Load(torch::serialize::InputArchive& archive) override { module_->load(archive); }
  void Export(const std::string& path) override;
  void Import(const std::string& path) override;

  const std::shared_ptr<torch::nn::Module>& module() const { return module_; }

 private:
  std::shared_ptr<torch::nn::Module> module_;
  ForwardFn forward_;
};

// What a task measured on one split: named values (the prefix given, e.g. val_accuracy) and
// tables (test split only).
struct Evaluation {
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<MetricTable> tables;
};

// The per-rank half of a user's libtorch task, made once per sweep on every rank (its data loaded
// then) and used by one thread. Evaluation is split in two so that the group reduces it in one
// allreduce: each rank adds its shard's statistics into `sums` (Accumulate), the trainer sums them
// over the group, and Summarize turns the group's sums into metrics.
class ModelTask {
 public:
  virtual ~ModelTask() = default;

  virtual const Dataset& train_data() const = 0;
  virtual const Dataset& validation_data() const = 0;
  // nullptr when the task has no test split (the best trial is then not evaluated).
  virtual const Dataset* test_data() const = 0;

  // A new model for a trial's hyperparameters (`params`: the swept ones; read the others'
  // defaults with HyperparameterOrDefault). Called with torch's generator seeded from the trial
  // seed, on the CPU; the trainer moves it to the device and copies the leader's initial weights
  // to every rank. BadInput for values the task cannot take (the trial fails, the sweep goes on).
  virtual Status BuildModel(const Assignment& params, std::unique_ptr<TrainableModel>* model) = 0;

  // The batch's mean loss (a scalar the trainer calls backward on).
  virtual torch::Tensor Loss(const torch::Tensor& outputs, const Batch& batch) = 0;

  // How many sums Accumulate adds to.
  virtual size_t EvaluationSize() const = 0;
  // Adds `batch`'s statistics (loss sum, counts, ...) to `sums` (EvaluationSize() values).
  virtual void Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) = 0;
  // The metrics of the group's summed statistics, named with `prefix` ("val_" or "test_"); the
  // names for "val_" must be those the task's description lists. Tables only for "test_".
  virtual Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) = 0;
};

// Classification by cross-entropy, for tasks to delegate to: loss, and per split the loss,
// accuracy and macro F1 (the mean of the classes' F1 over the classes that occur among the true or
// predicted labels, as scikit-learn's f1_score(average="macro")), and on the test split the
// confusion matrix. Outputs are logits [B, classes], targets int64 [B]; other shapes throw
// std::invalid_argument naming both (the trial fails with that message).
class ClassificationObjective {
 public:
  explicit ClassificationObjective(std::vector<std::string> class_names);

  torch::Tensor Loss(const torch::Tensor& logits, const Batch& batch) const;
  size_t EvaluationSize() const;
  void Accumulate(const torch::Tensor& logits, const Batch& batch, double* sums) const;
  Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) const;
  // Metric names Summarize gives for "val_": val_loss, val_accuracy, val_macro_f1.
  static std::vector<std::string> MetricNames(const std::string& prefix);

  int64_t num_classes() const { return static_cast<int64_t>(class_names_.size()); }

 private:
  std::vector<std::string> class_names_;
};

// Regression by mean squared error: loss, and per split the loss (MSE over every output), RMSE
// and R2 (per output 1 - SSE/SST, averaged over outputs, as scikit-learn's r2_score). Outputs
// [B, outputs] (or [B] for one), float targets with as many values per row; other shapes throw
// std::invalid_argument naming both.
class RegressionObjective {
 public:
  explicit RegressionObjective(int64_t outputs);

  torch::Tensor Loss(const torch::Tensor& outputs, const Batch& batch) const;
  size_t EvaluationSize() const;
  void Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) const;
  Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) const;
  // val_loss, val_rmse, val_r2.
  static std::vector<std::string> MetricNames(const std::string& prefix);

 private:
  int64_t outputs_;
};

// Makes a task's per-rank half. Called once per sweep on every rank (data loaded here). A non-OK
// Status ends the job with that message (BadInput: exit 2).
using ModelTaskFactory =
    std::function<Status(const SweepConfig& config, std::unique_ptr<ModelTask>* task)>;

// Registers a libtorch task: `description` for rank 0's checks (its hyperparameters should start
// with TrainerHyperparameters(), its MetricNames be ModelTaskMetricNames(...)), `factory` for the
// trainer on every rank.
void AddModelTask(TaskRegistry* registry, std::shared_ptr<const TaskDescription> description,
                  ModelTaskFactory factory);

}  // namespace hpo
