#include "hpo/model_task.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "train/archive_file.hpp"

namespace hpo {
namespace {

std::string ShapeOf(const torch::Tensor& tensor) {
  std::ostringstream text;
  text << tensor.sizes();
  return text.str();
}

// Rows `indices` of `source`: a memcpy per row for a contiguous CPU tensor (no torch kernel, so a
// prefetch thread uses no intra-op threads), index_select otherwise.
torch::Tensor GatherTensorRows(const torch::Tensor& source, const torch::Tensor& indices) {
  if (!source.is_contiguous() || !source.device().is_cpu()) return source.index_select(0, indices);
  std::vector<int64_t> shape = source.sizes().vec();
  const int64_t count = indices.size(0);
  shape[0] = count;
  torch::Tensor rows = torch::empty(shape, source.options());
  if (count == 0) return rows;
  const size_t row_bytes =
      static_cast<size_t>(source.numel() / source.size(0)) * source.element_size();
  const auto* from = static_cast<const char*>(source.data_ptr());
  auto* to = static_cast<char*>(rows.data_ptr());
  const torch::Tensor contiguous = indices.contiguous();
  const int64_t* index = contiguous.data_ptr<int64_t>();
  for (int64_t row = 0; row < count; ++row) {
    std::memcpy(to + static_cast<size_t>(row) * row_bytes,
                from + static_cast<size_t>(index[row]) * row_bytes, row_bytes);
  }
  return rows;
}

}  // namespace

Batch Batch::To(torch::Device device) const {
  Batch moved;
  for (const torch::Tensor& input : inputs) moved.inputs.push_back(input.to(device));
  if (targets.defined()) moved.targets = targets.to(device);
  return moved;
}

TensorDataset::TensorDataset(std::vector<torch::Tensor> inputs, torch::Tensor targets)
    : inputs_(std::move(inputs)), targets_(std::move(targets)) {}

Batch TensorDataset::Gather(const torch::Tensor& indices) const {
  Batch batch;
  for (const torch::Tensor& input : inputs_) {
    batch.inputs.push_back(GatherTensorRows(input, indices));
  }
  batch.targets = GatherTensorRows(targets_, indices);
  return batch;
}

void ModuleModel::Export(const std::string& path) {
  torch::serialize::OutputArchive archive;
  SaveModuleOnCpu(*module_, archive);
  SaveArchiveToFile(archive, path);
}

void ModuleModel::Import(const std::string& path) { LoadModuleFromFile(*module_, path); }

ClassificationObjective::ClassificationObjective(std::vector<std::string> class_names)
    : class_names_(std::move(class_names)) {}

namespace {

// std::invalid_argument unless `logits` is [B, classes] for the batch's B targets.
void CheckLogits(const torch::Tensor& logits, const Batch& batch, int64_t classes) {
  if (logits.dim() != 2 || logits.size(0) != batch.size() || logits.size(1) != classes) {
    throw std::invalid_argument("the model's output " + ShapeOf(logits) + " is not [" +
                                std::to_string(batch.size()) + ", " + std::to_string(classes) +
                                "] (batch, classes) for targets " + ShapeOf(batch.targets));
  }
}

}  // namespace

torch::Tensor ClassificationObjective::Loss(const torch::Tensor& logits, const Batch& batch) const {
  CheckLogits(logits, batch, num_classes());
  return torch::nn::functional::cross_entropy(logits, batch.targets);
}

size_t ClassificationObjective::EvaluationSize() const {
  return 2 + static_cast<size_t>(num_classes() * num_classes());
}

void ClassificationObjective::Accumulate(const torch::Tensor& logits, const Batch& batch,
                                         double* sums) const {
  torch::NoGradGuard no_grad;
  const int64_t classes = num_classes();
  CheckLogits(logits, batch, classes);
  const torch::Tensor loss = torch::nn::functional::cross_entropy(
      logits, batch.targets,
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  sums[0] += loss.item<double>();
  sums[1] += static_cast<double>(batch.size());
  const torch::Tensor cells = batch.targets.to(torch::kInt64) * classes + logits.argmax(1);
  const torch::Tensor counts =
      torch::bincount(cells.cpu(), {}, classes * classes).to(torch::kFloat64).contiguous();
  const double* count = counts.data_ptr<double>();
  for (int64_t cell = 0; cell < classes * classes; ++cell) sums[2 + cell] += count[cell];
}

Evaluation ClassificationObjective::Summarize(const std::vector<double>& sums,
                                              const std::string& prefix) const {
  const int64_t classes = num_classes();
  const double count = sums[1];
  const double* confusion = sums.data() + 2;
  double correct = 0.0;
  double f1_sum = 0.0;
  int64_t f1_classes = 0;
  for (int64_t c = 0; c < classes; ++c) {
    const double true_positives = confusion[c * classes + c];
    double actual = 0.0;
    double predicted = 0.0;
    for (int64_t other = 0; other < classes; ++other) {
      actual += confusion[c * classes + other];
      predicted += confusion[other * classes + c];
    }
    correct += true_positives;
    if (actual + predicted > 0.0) {
      f1_sum += 2.0 * true_positives / (actual + predicted);
      ++f1_classes;
    }
  }
  Evaluation evaluation;
  evaluation.metrics = {
      {prefix + "loss", sums[0] / count},
      {prefix + "accuracy", correct / count},
      {prefix + "macro_f1", f1_classes > 0 ? f1_sum / static_cast<double>(f1_classes) : 0.0},
  };
  if (prefix == "test_") {
    MetricTable table;
    table.name = "confusion";
    table.rows = classes;
    table.columns = classes;
    table.values.assign(confusion, confusion + classes * classes);
    table.labels = class_names_;
    evaluation.tables.push_back(std::move(table));
  }
  return evaluation;
}

std::vector<std::string> ClassificationObjective::MetricNames(const std::string& prefix) {
  return {prefix + "loss", prefix + "accuracy", prefix + "macro_f1"};
}

RegressionObjective::RegressionObjective(int64_t outputs) : outputs_(outputs) {}

namespace {

// `targets` shaped as `outputs` ([B, k] or [B]), or std::invalid_argument.
torch::Tensor MatchTargets(const torch::Tensor& outputs, const torch::Tensor& targets,
                           int64_t expected_outputs) {
  const int64_t rows = targets.size(0);
  if (outputs.dim() == 0 || outputs.size(0) != rows || outputs.numel() != targets.numel() ||
      outputs.numel() != rows * expected_outputs) {
    throw std::invalid_argument("the model's output " + ShapeOf(outputs) +
                                " does not match the targets " + ShapeOf(targets) + " (" +
                                std::to_string(expected_outputs) + " value(s) per row)");
  }
  return targets.reshape(outputs.sizes()).to(outputs.scalar_type());
}

}  // namespace

torch::Tensor RegressionObjective::Loss(const torch::Tensor& outputs, const Batch& batch) const {
  return torch::mse_loss(outputs, MatchTargets(outputs, batch.targets, outputs_));
}

size_t RegressionObjective::EvaluationSize() const { return 1 + 3 * static_cast<size_t>(outputs_); }

void RegressionObjective::Accumulate(const torch::Tensor& outputs, const Batch& batch,
                                     double* sums) const {
  torch::NoGradGuard no_grad;
  const torch::Tensor targets =
      MatchTargets(outputs, batch.targets, outputs_).reshape({-1, outputs_}).to(torch::kFloat64);
  const torch::Tensor predicted = outputs.reshape({-1, outputs_}).to(torch::kFloat64);
  const torch::Tensor per_output =
      torch::stack({targets.sum(0), targets.square().sum(0), (predicted - targets).square().sum(0)})
          .cpu()
          .contiguous();
  const double* value = per_output.data_ptr<double>();
  sums[0] += static_cast<double>(batch.size());
  for (int64_t k = 0; k < 3 * outputs_; ++k) sums[1 + k] += value[k];
}

Evaluation RegressionObjective::Summarize(const std::vector<double>& sums,
                                          const std::string& prefix) const {
  const double rows = sums[0];
  const double* target_sum = sums.data() + 1;
  const double* target_square_sum = target_sum + outputs_;
  const double* squared_error = target_square_sum + outputs_;
  double total_error = 0.0;
  double r2_sum = 0.0;
  for (int64_t k = 0; k < outputs_; ++k) {
    total_error += squared_error[k];
    const double total_variation = target_square_sum[k] - target_sum[k] * target_sum[k] / rows;
    // A constant target: R2 is 1 for a perfect fit, else 0 (scikit-learn's convention).
    r2_sum += total_variation > 0.0 ? 1.0 - squared_error[k] / total_variation
                                    : (squared_error[k] == 0.0 ? 1.0 : 0.0);
  }
  const double mse = total_error / (rows * static_cast<double>(outputs_));
  Evaluation evaluation;
  evaluation.metrics = {
      {prefix + "loss", mse},
      {prefix + "rmse", std::sqrt(mse)},
      {prefix + "r2", r2_sum / static_cast<double>(outputs_)},
  };
  return evaluation;
}

std::vector<std::string> RegressionObjective::MetricNames(const std::string& prefix) {
  return {prefix + "loss", prefix + "rmse", prefix + "r2"};
}

}  // namespace hpo
