#include "tasks/torchscript/model_runtime/torchscript_task.hpp"

#include <sstream>
#include <utility>

#include "hpo/task_catalog.hpp"
#include "hpo/task_runner.hpp"
#include "tasks/builtin_tasks.hpp"
#include "tasks/torchscript/array_dataset.hpp"
#include "tasks/torchscript/model_path.hpp"
#include "tasks/torchscript/model_runtime/script_model.hpp"

namespace hpo {
namespace {

torch::ScalarType TorchType(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return torch::kFloat32;
    case ElementType::kFloat64:
      return torch::kFloat64;
    case ElementType::kInt8:
      return torch::kInt8;
    case ElementType::kUInt8:
      return torch::kUInt8;
    case ElementType::kInt16:
      return torch::kInt16;
    case ElementType::kInt32:
      return torch::kInt32;
    case ElementType::kInt64:
      return torch::kInt64;
    case ElementType::kBool:
      return torch::kBool;
  }
  return torch::kFloat32;
}

// The array as a tensor of `type` that owns its memory (the array's buffer moved into it when the
// type already matches: no copy).
torch::Tensor ToTensor(NumericArray array, torch::ScalarType type) {
  auto owner = std::make_shared<NumericArray>(std::move(array));
  const torch::Tensor view = torch::from_blob(
      owner->bytes.data(), owner->shape, [owner](void*) {},
      torch::TensorOptions().dtype(TorchType(owner->type)));
  return view.scalar_type() == type ? view : view.to(type);
}

// Inputs train as float32 when they are floating point, as int64 (ids) otherwise.
torch::ScalarType InputType(const NumericArray& x) {
  return IsFloating(x.type) ? torch::kFloat32 : torch::kInt64;
}

std::string Shape(const torch::Tensor& tensor) {
  std::ostringstream text;
  text << tensor.sizes();
  return text.str();
}

}  // namespace

Status TorchScriptTask::Make(const SweepConfig& config, std::unique_ptr<ModelTask>* task) {
  std::unique_ptr<TorchScriptTask> made(new TorchScriptTask());
  made->model_pattern_ = ModelPathPattern(config);
  const bool regression = config.task_options.Get("loss", "cross_entropy") == "mse";

  ArrayDataset data;
  HPO_RETURN_IF_ERROR(LoadArrayDataset(config.task_options.Get("data", ""), &data));
  if (regression) {
    int64_t outputs = 0;
    HPO_RETURN_IF_ERROR(CheckRegressionTargets(data, &outputs));
    made->objective_ = RegressionObjective(outputs);
  } else {
    int64_t classes = 0;
    HPO_RETURN_IF_ERROR(CheckClassLabels(data, &classes));
    std::vector<std::string> names;
    for (int64_t c = 0; c < classes; ++c) names.push_back(std::to_string(c));
    made->objective_ = ClassificationObjective(std::move(names));
  }
  const torch::ScalarType input_type = InputType(data.train.x);
  const torch::ScalarType target_type = regression ? torch::kFloat32 : torch::kInt64;
  const auto split = [&](ArraySplit& arrays) {
    torch::Tensor targets = ToTensor(std::move(arrays.y), target_type);
    if (!regression) targets = targets.reshape({-1});
    return TensorDataset({ToTensor(std::move(arrays.x), input_type)}, targets);
  };
  const TensorDataset train = split(data.train);
  if (data.validation) {
    made->train_ = train;
    made->validation_ = split(*data.validation);
  } else {
    const torch::Tensor index = torch::arange(train.size(), torch::kInt64);
    const torch::Tensor carved = index.remainder(10) == 9;
    if (carved.sum().item<int64_t>() == 0) {
      return Status::BadInput(data.train.x_name + ": " + std::to_string(train.size()) +
                              " samples are too few to carve a validation split from (give val/x "
                              "and val/y)");
    }
    made->train_ = TensorDataset(train.Gather(index.masked_select(~carved)));
    made->validation_ = TensorDataset(train.Gather(index.masked_select(carved)));
  }
  if (data.test) made->test_ = split(*data.test);

  std::vector<std::string> placeholders;
  HPO_RETURN_IF_ERROR(ModelPathPlaceholders(config.task_options.Get("model", ""), &placeholders));
  if (placeholders.empty()) {
    std::unique_ptr<TrainableModel> checked;
    HPO_RETURN_IF_ERROR(made->BuildModel({}, &checked));
  }
  *task = std::move(made);
  return Status::Ok();
}

Status TorchScriptTask::BuildModel(const Assignment& params,
                                   std::unique_ptr<TrainableModel>* model) {
  std::string path;
  HPO_RETURN_IF_ERROR(ExpandModelPath(model_pattern_, params, &path));
  std::unique_ptr<ScriptModel> script;
  HPO_RETURN_IF_ERROR(ScriptModel::Load(path, &script));
  if (checked_models_.count(path) == 0) {
    HPO_RETURN_IF_ERROR(CheckOnFirstBatch(path, *script));
    checked_models_.insert(path);
  }
  *model = std::move(script);
  return Status::Ok();
}

Status TorchScriptTask::CheckOnFirstBatch(const std::string& path, TrainableModel& model) {
  const Batch batch = train_.Gather(torch::arange(std::min<int64_t>(2, train_.size())));
  torch::NoGradGuard no_grad;
  model.SetTraining(false);
  torch::Tensor outputs;
  try {
    outputs = model.Forward(batch);
  } catch (const std::exception& error) {
    std::string reason = error.what();
    reason = reason.substr(0, reason.find('\n'));
    return Status::BadInput(
        path + ": forward failed on a batch of the data's inputs, shape " + Shape(batch.inputs[0]) +
        " " + std::string(c10::toString(batch.inputs[0].scalar_type())) + ": " + reason);
  }
  try {
    Loss(outputs, batch);
  } catch (const std::exception& error) {
    return Status::BadInput(path + ": " + error.what());
  }
  model.SetTraining(true);
  return Status::Ok();
}

torch::Tensor TorchScriptTask::Loss(const torch::Tensor& outputs, const Batch& batch) {
  return std::visit([&](const auto& objective) { return objective.Loss(outputs, batch); },
                    objective_);
}

size_t TorchScriptTask::EvaluationSize() const {
  return std::visit([](const auto& objective) { return objective.EvaluationSize(); }, objective_);
}

void TorchScriptTask::Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) {
  std::visit([&](const auto& objective) { objective.Accumulate(outputs, batch, sums); },
             objective_);
}

Evaluation TorchScriptTask::Summarize(const std::vector<double>& sums, const std::string& prefix) {
  return std::visit([&](const auto& objective) { return objective.Summarize(sums, prefix); },
                    objective_);
}

namespace tasks::torchscript {

void Register(TaskRegistry* registry) { AddModelTask(registry, Describe(), TorchScriptTask::Make); }

}  // namespace tasks::torchscript
}  // namespace hpo
