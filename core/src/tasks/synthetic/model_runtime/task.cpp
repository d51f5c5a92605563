#include "tasks/synthetic/model_runtime/task.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <string>
#include <utility>

#include "hpo/task_runner.hpp"
#include "tasks/builtin_tasks.hpp"

namespace hpo {
namespace {

// Mixed into the sweep seed for the synthetic task's data.
constexpr uint64_t kSyntheticDataStream = 0x73796e7468ULL;

Status GenerateSyntheticSplits(const SyntheticOptions& options, uint64_t seed, TaskData* data) {
  if (options.features < 1 || options.classes < 2 || options.train_samples < 1 ||
      options.val_samples < 1 || options.test_samples < 0 || !(options.noise >= 0.0) ||
      !std::isfinite(options.noise)) {
    return Status::BadInput(
        "synthetic: needs features >= 1, classes >= 2, train_samples >= 1, val_samples >= 1, "
        "test_samples >= 0 and a finite noise >= 0");
  }
  at::Generator generator = at::detail::createCPUGenerator(seed ^ kSyntheticDataStream);
  const torch::Tensor teacher =
      torch::randn({options.features, options.classes}, generator, torch::kFloat32)
          .div_(std::sqrt(static_cast<double>(options.features)));
  const auto generate = [&](int64_t count) {
    LabeledTensors split;
    split.inputs = torch::randn({count, options.features}, generator, torch::kFloat32);
    const torch::Tensor noise = torch::randn({count, options.classes}, generator, torch::kFloat32);
    split.labels = split.inputs.matmul(teacher).add_(noise.mul_(options.noise)).argmax(1);
    return split;
  };
  data->train = generate(options.train_samples);
  data->validation = generate(options.val_samples);
  data->test = generate(options.test_samples);
  data->num_classes = options.classes;
  return Status::Ok();
}

// Every rank generates the same data from the sweep seed; each trial builds its MLP.
Status MakeTask(const SweepConfig& config, std::unique_ptr<ModelTask>* task) {
  SyntheticOptions options;
  HPO_RETURN_IF_ERROR(ReadSyntheticOptions(config.task_options, &options));
  TaskData data;
  HPO_RETURN_IF_ERROR(GenerateSyntheticData(options, config.execution.seed, &data));
  *task = MakeSyntheticClassifier(data);
  return Status::Ok();
}

}  // namespace

Status GenerateSyntheticData(const SyntheticOptions& options, uint64_t seed, TaskData* data) {
  try {
    *data = TaskData();
    return GenerateSyntheticSplits(options, seed, data);
  } catch (const std::exception& error) {
    return Status::Failure(std::string("generating the synthetic data: ") + error.what());
  }
}

torch::nn::Sequential BuildSyntheticMlp(int64_t features, int64_t width, double dropout,
                                        int64_t classes) {
  namespace nn = torch::nn;
  const int64_t w = width;
  return nn::Sequential(nn::Linear(features, w), nn::ReLU(), nn::Dropout(dropout), nn::Linear(w, w),
                        nn::ReLU(), nn::Dropout(dropout), nn::Linear(w, classes));
}

std::unique_ptr<TensorClassifier> MakeSyntheticClassifier(const TaskData& data) {
  const torch::Tensor& inputs = data.train.inputs.defined() ? data.train.inputs : data.test.inputs;
  const int64_t features = inputs.defined() && inputs.dim() == 2 ? inputs.size(1) : 0;
  return std::make_unique<TensorClassifier>(
      data, NumberedClassNames(data.num_classes),
      [features](int64_t width, double dropout, int64_t classes) {
        return BuildSyntheticMlp(features, width, dropout, classes);
      });
}

namespace tasks::synthetic {

void Register(TaskRegistry* registry) { AddModelTask(registry, Describe(), MakeTask); }

}  // namespace tasks::synthetic
}  // namespace hpo
