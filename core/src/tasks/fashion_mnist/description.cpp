// task: fashion_mnist, torch-free: the built-in classifier's description and its options.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tasks/builtin_tasks.hpp"
#include "tasks/classifier_description.hpp"
#include "tasks/fashion_mnist/options.hpp"

namespace hpo {
namespace {

constexpr int64_t kTrainingImages = 60000;

class FashionMnistDescription final : public TaskDescription {
 public:
  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return ClassifierHyperparameters();
  }
  std::vector<std::string> MetricNames(const SweepConfig&) const override {
    return ClassifierMetricNames();
  }
  std::vector<std::string> option_keys() const override {
    return {"data", "validation_samples", "train_samples"};
  }
  Status CheckOptions(const SweepConfig& config) const override {
    FashionMnistOptions options;
    return ReadFashionMnistOptions(config.task_options, &options);
  }

 private:
  std::string name_ = "fashion_mnist";
};

}  // namespace

Status ReadFashionMnistOptions(const TaskOptions& options, FashionMnistOptions* read) {
  *read = FashionMnistOptions();
  if (const TaskOption* data = options.Find("data")) {
    if (data->value.empty()) return options.Error("data", "must not be empty");
    read->folder = data->value;
  }
  HPO_RETURN_IF_ERROR(options.GetInteger("validation_samples", 1, kTrainingImages - 1,
                                         read->validation_samples, &read->validation_samples));
  return options.GetInteger("train_samples", 0, std::numeric_limits<int64_t>::max(),
                            read->train_samples, &read->train_samples);
}

namespace tasks::fashion_mnist {

std::shared_ptr<const TaskDescription> Describe() {
  static const auto kDescription = std::make_shared<const FashionMnistDescription>();
  return kDescription;
}

}  // namespace tasks::fashion_mnist
}  // namespace hpo
