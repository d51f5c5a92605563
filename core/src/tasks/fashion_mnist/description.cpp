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
  static const auto kDescription = std::make_shared<const ClassifierDescription>(
      "fashion_mnist", std::vector<std::string>{"data", "validation_samples", "train_samples"},
      [](const TaskOptions& options) {
        FashionMnistOptions read;
        return ReadFashionMnistOptions(options, &read);
      });
  return kDescription;
}

}  // namespace tasks::fashion_mnist
}  // namespace hpo
