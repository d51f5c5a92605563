#include "train/builtin_classifier.hpp"

#include <utility>

#include "hpo/task_catalog.hpp"
#include "train/models.hpp"

namespace hpo {
namespace {

TensorDataset Split(const LabeledTensors& tensors) {
  if (!tensors.labels.defined()) return TensorDataset();
  return TensorDataset({tensors.inputs}, tensors.labels);
}

std::vector<std::string> ClassNames(const std::string& task, int64_t classes) {
  if (task == "fashion_mnist" && classes == 10) {
    return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
            "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  }
  std::vector<std::string> names;
  for (int64_t c = 0; c < classes; ++c) names.push_back(std::to_string(c));
  return names;
}

}  // namespace

BuiltinClassifier::BuiltinClassifier(std::string task, const TaskData& data)
    : task_(std::move(task)),
      train_(Split(data.train)),
      validation_(Split(data.validation)),
      test_(Split(data.test)),
      objective_(ClassNames(task_, data.num_classes)) {
  const torch::Tensor& inputs = data.train.inputs.defined() ? data.train.inputs : data.test.inputs;
  input_features_ = inputs.defined() && inputs.dim() == 2 ? inputs.size(1) : 0;
}

Status BuiltinClassifier::Load(const ExecutionSpec& execution,
                               std::unique_ptr<BuiltinClassifier>* task) {
  TaskData data;
  HPO_RETURN_IF_ERROR(LoadTaskData(execution, &data));
  *task = std::make_unique<BuiltinClassifier>(execution.task, data);
  return Status::Ok();
}

Status BuiltinClassifier::BuildModel(const Assignment& params,
                                     std::unique_ptr<TrainableModel>* model) {
  const std::vector<HyperparameterInfo>& known = ClassifierHyperparameters();
  const ParamValue width = HyperparameterOrDefault(known, params, "width");
  const ParamValue dropout = HyperparameterOrDefault(known, params, "dropout");
  ModelSpec spec;
  spec.task = task_;
  spec.width = static_cast<int64_t>(ParamAsDouble(width));
  spec.dropout = ParamAsDouble(dropout);
  spec.input_features = input_features_;
  spec.num_classes = objective_.num_classes();
  if (static_cast<double>(spec.width) != ParamAsDouble(width) || spec.width < 1 ||
      spec.width > 4096) {
    return Status::BadInput("hyperparameter width: must be an integer in [1, 4096], got " +
                            FormatParamValueExact(width));
  }
  if (!(spec.dropout >= 0.0 && spec.dropout < 1.0)) {
    return Status::BadInput("hyperparameter dropout: must be in [0, 1), got " +
                            FormatParamValueExact(dropout));
  }
  torch::nn::Sequential net = hpo::BuildModel(spec);
  *model = std::make_unique<ModuleModel>(
      net.ptr(), [net](const Batch& batch) mutable { return net->forward(batch.inputs[0]); });
  return Status::Ok();
}

TrainingSetup BuiltinClassifierSetup(BuiltinClassifier* task, const ExecutionSpec& execution) {
  TrainingSetup setup;
  setup.task = task;
  setup.hyperparameters = ClassifierHyperparameters();
  setup.metric_names = ClassifierMetricNames();
  setup.threads_per_rank = execution.threads_per_rank;
  return setup;
}

}  // namespace hpo
