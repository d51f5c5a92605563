#include "tasks/model_runtime/tensor_classifier.hpp"

#include <utility>

#include "hpo/task_catalog.hpp"
#include "tasks/classifier_description.hpp"

namespace hpo {
namespace {

TensorDataset Split(const LabeledTensors& tensors) {
  if (!tensors.labels.defined()) return TensorDataset();
  return TensorDataset({tensors.inputs}, tensors.labels);
}

}  // namespace

TensorClassifier::TensorClassifier(const TaskData& data, std::vector<std::string> class_names,
                                   NetworkBuilder build_network)
    : train_(Split(data.train)),
      validation_(Split(data.validation)),
      test_(Split(data.test)),
      objective_(std::move(class_names)),
      build_network_(std::move(build_network)) {}

Status TensorClassifier::BuildModel(const Assignment& params,
                                    std::unique_ptr<TrainableModel>* model) {
  const std::vector<HyperparameterInfo>& known = ClassifierHyperparameters();
  const ParamValue width_value = HyperparameterOrDefault(known, params, "width");
  const ParamValue dropout_value = HyperparameterOrDefault(known, params, "dropout");
  const auto width = static_cast<int64_t>(ParamAsDouble(width_value));
  const double dropout = ParamAsDouble(dropout_value);
  if (static_cast<double>(width) != ParamAsDouble(width_value) || width < 1 || width > 4096) {
    return Status::BadInput("hyperparameter width: must be an integer in [1, 4096], got " +
                            FormatParamValueExact(width_value));
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    return Status::BadInput("hyperparameter dropout: must be in [0, 1), got " +
                            FormatParamValueExact(dropout_value));
  }
  torch::nn::Sequential net = build_network_(width, dropout, objective_.num_classes());
  *model = std::make_unique<ModuleModel>(
      net.ptr(), [net](const Batch& batch) mutable { return net->forward(batch.inputs[0]); });
  return Status::Ok();
}

std::vector<std::string> NumberedClassNames(int64_t classes) {
  std::vector<std::string> names;
  for (int64_t c = 0; c < classes; ++c) names.push_back(std::to_string(c));
  return names;
}

TrainingSetup ClassifierSetup(TensorClassifier* task, int64_t threads_per_rank) {
  TrainingSetup setup;
  setup.task = task;
  setup.hyperparameters = ClassifierHyperparameters();
  setup.metric_names = ClassifierMetricNames();
  setup.threads_per_rank = threads_per_rank;
  return setup;
}

}  // namespace hpo
