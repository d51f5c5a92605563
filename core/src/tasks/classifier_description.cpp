#include "tasks/classifier_description.hpp"

#include <utility>

namespace hpo {

const std::vector<HyperparameterInfo>& ClassifierHyperparameters() {
  static const std::vector<HyperparameterInfo> kHyperparameters = [] {
    std::vector<HyperparameterInfo> list = TrainerHyperparameters();
    list.push_back(NumericHyperparameter("dropout", ParamType::kFloat, 0.0, 0.0, 1.0,
                                         "dropout probability", false, true));
    list.push_back(BindingCheckpoint(NumericHyperparameter(
        "width", ParamType::kInt, int64_t{16}, 1, 4096, "width of the model's hidden layers")));
    return list;
  }();
  return kHyperparameters;
}

const std::vector<std::string>& ClassifierMetricNames() {
  static const std::vector<std::string> kMetrics =
      ModelTaskMetricNames({"val_loss", "val_accuracy", "val_macro_f1"});
  return kMetrics;
}

ClassifierDescription::ClassifierDescription(std::string name, std::vector<std::string> option_keys,
                                             OptionsCheck check_options)
    : name_(std::move(name)),
      option_keys_(std::move(option_keys)),
      check_options_(std::move(check_options)) {}

}  // namespace hpo
