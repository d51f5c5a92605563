// The built-in classifiers' shared description, torch-free: fashion_mnist and synthetic take the
// same hyperparameters and report the same metrics; each folder adds its own options.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hpo/task_catalog.hpp"

namespace hpo {

// TrainerHyperparameters(), dropout (in [0, 1)) and width (hidden width, in [1, 4096]).
const std::vector<HyperparameterInfo>& ClassifierHyperparameters();

// train_loss, val_loss, val_accuracy, val_macro_f1, epoch_time_s.
const std::vector<std::string>& ClassifierMetricNames();

// A built-in classifier's description: the lists above, its own option keys and the check of
// them (BadInput naming file, line and key). Immutable; thread-safe.
class ClassifierDescription final : public TaskDescription {
 public:
  using OptionsCheck = std::function<Status(const TaskOptions& options)>;

  ClassifierDescription(std::string name, std::vector<std::string> option_keys,
                        OptionsCheck check_options);

  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return ClassifierHyperparameters();
  }
  std::vector<std::string> MetricNames(const SweepConfig&) const override {
    return ClassifierMetricNames();
  }
  std::vector<std::string> option_keys() const override { return option_keys_; }
  Status CheckOptions(const SweepConfig& config) const override {
    return check_options_(config.task_options);
  }

 private:
  std::string name_;
  std::vector<std::string> option_keys_;
  OptionsCheck check_options_;
};

}  // namespace hpo
