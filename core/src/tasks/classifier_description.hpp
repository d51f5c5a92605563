// The built-in classifiers' shared description, torch-free: fashion_mnist and synthetic take the
// same hyperparameters and report the same metrics; each folder adds its own options.
#pragma once

#include <string>
#include <vector>

#include "hpo/task_catalog.hpp"

namespace hpo {

// TrainerHyperparameters(), dropout (in [0, 1)) and width (hidden width, in [1, 4096]).
const std::vector<HyperparameterInfo>& ClassifierHyperparameters();

// train_loss, val_loss, val_accuracy, val_macro_f1, epoch_time_s.
const std::vector<std::string>& ClassifierMetricNames();

}  // namespace hpo
