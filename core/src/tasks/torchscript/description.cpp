// task: torchscript, torch-free: its description (parameters, metrics, the checks of `model`,
// `loss` and `data`) and the model-path helpers its runner shares.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hpo/task_catalog.hpp"
#include "tasks/builtin_tasks.hpp"
#include "tasks/torchscript/model_path.hpp"

namespace hpo {
namespace {

// task: torchscript: the user's TorchScript model trained by the DDP trainer on an HDF5 file or a
// folder of .npy files (`data:`). Parameter names are the trainer's hyperparameters and the
// `{name}` placeholders of `model`; the metrics follow `loss`.
class TorchScriptDescription final : public TaskDescription {
 public:
  TorchScriptDescription() : hyperparameters_(TrainerHyperparameters()) {}
  const std::string& name() const override { return name_; }
  // The architecture names are the user's (checked against `model` in CheckOptions).
  bool free_parameters() const override { return true; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return hyperparameters_;
  }
  std::vector<std::string> option_keys() const override { return {"model", "loss", "data"}; }
  // A `{placeholder}` of `model` picks the model file, and so the checkpoint's layout.
  bool BindsCheckpoint(const std::string& parameter, const SweepConfig& config) const override {
    std::vector<std::string> placeholders;
    if (ModelPathPlaceholders(config.task_options.Get("model", ""), &placeholders).ok() &&
        std::find(placeholders.begin(), placeholders.end(), parameter) != placeholders.end()) {
      return true;
    }
    return TaskDescription::BindsCheckpoint(parameter, config);
  }
  std::vector<std::string> MetricNames(const SweepConfig& config) const override {
    const std::vector<std::string> classification = {"val_loss", "val_accuracy", "val_macro_f1"};
    const std::vector<std::string> regression = {"val_loss", "val_rmse", "val_r2"};
    return ModelTaskMetricNames(
        config.task_options.Get("loss", "cross_entropy") == "mse" ? regression : classification);
  }
  Status CheckOptions(const SweepConfig& config) const override {
    const TaskOptions& options = config.task_options;
    if (options.Find("model") == nullptr) {
      return Status::BadInput(options.file +
                              ": model: missing (the TorchScript file to train, saved with "
                              "torch.jit.save(torch.jit.script(module), FILE))");
    }
    const std::string loss = options.Get("loss", "cross_entropy");
    if (loss != "cross_entropy" && loss != "mse") {
      return options.Error("loss",
                           "must be cross_entropy (classification) or mse (regression), "
                           "got '" +
                               loss + "'");
    }
    if (options.Get("data", "").empty()) {
      return Status::BadInput(options.file +
                              ": data: missing (an HDF5 file with train/x, train/y, or a folder "
                              "of train_x.npy, train_y.npy, ...)");
    }
    std::vector<std::string> placeholders;
    HPO_RETURN_IF_ERROR(ModelPathPlaceholders(options.Get("model", ""), &placeholders)
                            .WithContext(options.file + ":" +
                                         std::to_string(options.Find("model")->line) + ": model"));
    for (const std::string& placeholder : placeholders) {
      const ParameterSpec* named = nullptr;
      for (const ParameterSpec& parameter : config.sweep.parameters) {
        if (parameter.name == placeholder) named = &parameter;
      }
      if (named == nullptr) {
        return options.Error("model", "{" + placeholder +
                                          "} is not a parameter of the sweep (swept, or fixed "
                                          "with `value:`)");
      }
      if (named->condition) {
        return options.Error("model", "{" + placeholder +
                                          "} exists only in some trials (conditions:), so the "
                                          "others would name no model file");
      }
    }
    HPO_RETURN_IF_ERROR(CheckModelFilesExist(config, placeholders));
    for (const ParameterSpec& parameter : config.sweep.parameters) {
      const bool trainer = FindHyperparameter(parameter.name) != nullptr;
      const bool placeholder =
          std::find(placeholders.begin(), placeholders.end(), parameter.name) != placeholders.end();
      if (!trainer && !placeholder) {
        std::string accepted;
        for (const HyperparameterInfo& info : hyperparameters_) {
          accepted += (accepted.empty() ? "" : ", ") + info.name;
        }
        return Status::BadInput(config.path + ":" + std::to_string(parameter.line) +
                                ": sweep.parameters." + parameter.name +
                                ": unknown hyperparameter for task torchscript: neither the "
                                "trainer's (" +
                                accepted + ") nor a {placeholder} of model");
      }
    }
    return Status::Ok();
  }

 private:
  // When every placeholder's parameter has a list of values (or one value), every model file the
  // sweep can name must exist: BadInput naming the first that does not (at most 256 are checked).
  static Status CheckModelFilesExist(const SweepConfig& config,
                                     const std::vector<std::string>& placeholders) {
    const TaskOptions& options = config.task_options;
    std::vector<Assignment> assignments = {{}};
    for (const std::string& name : placeholders) {
      const ParameterSpec* spec = nullptr;
      for (const ParameterSpec& parameter : config.sweep.parameters) {
        if (parameter.name == name) spec = &parameter;
      }
      if (spec == nullptr || spec->values.empty()) return Status::Ok();  // a distribution
      std::vector<Assignment> extended;
      for (const Assignment& partial : assignments) {
        for (const ParamValue& value : spec->values) {
          Assignment next = partial;
          next.push_back({name, value});
          extended.push_back(std::move(next));
        }
      }
      if (extended.size() > 256) return Status::Ok();
      assignments = std::move(extended);
    }
    const std::string pattern = ModelPathPattern(config);
    for (const Assignment& assignment : assignments) {
      std::string path;
      HPO_RETURN_IF_ERROR(ExpandModelPath(pattern, assignment, &path));
      std::error_code error;
      if (!std::filesystem::is_regular_file(path, error)) {
        return options.Error("model", path + " does not exist");
      }
    }
    return Status::Ok();
  }

  std::string name_ = "torchscript";
  std::vector<HyperparameterInfo> hyperparameters_;
};

}  // namespace

Status ModelPathPlaceholders(const std::string& pattern, std::vector<std::string>* names) {
  names->clear();
  for (size_t open = pattern.find('{'); open != std::string::npos;
       open = pattern.find('{', open + 1)) {
    const size_t close = pattern.find('}', open);
    if (close == std::string::npos) {
      return Status::BadInput("'" + pattern + "' has a '{' without its '}'");
    }
    const std::string name = pattern.substr(open + 1, close - open - 1);
    if (name.empty() || name.find('{') != std::string::npos) {
      return Status::BadInput("'" + pattern + "' has an empty or nested {placeholder}");
    }
    if (std::find(names->begin(), names->end(), name) == names->end()) names->push_back(name);
  }
  return Status::Ok();
}

std::string ModelPathPattern(const SweepConfig& config) {
  const std::string model = config.task_options.Get("model", "");
  if (std::filesystem::path(model).is_absolute()) return model;
  return (std::filesystem::absolute(config.path).parent_path() / model).string();
}

Status ExpandModelPath(const std::string& pattern, const Assignment& params, std::string* path) {
  std::vector<std::string> names;
  HPO_RETURN_IF_ERROR(ModelPathPlaceholders(pattern, &names));
  std::string expanded = pattern;
  for (const std::string& name : names) {
    const ParamValue* value = FindParam(params, name);
    if (value == nullptr) {
      return Status::BadInput("model '" + pattern + "': the trial has no parameter " + name);
    }
    const std::string text = std::holds_alternative<std::string>(*value)
                                 ? std::get<std::string>(*value)
                                 : FormatParamValue(*value);
    const std::string token = "{" + name + "}";
    for (size_t at = expanded.find(token); at != std::string::npos;
         at = expanded.find(token, at + text.size())) {
      expanded.replace(at, token.size(), text);
    }
  }
  *path = expanded;
  return Status::Ok();
}

namespace tasks::torchscript {

std::shared_ptr<const TaskDescription> Describe() {
  static const auto kDescription = std::make_shared<const TorchScriptDescription>();
  return kDescription;
}

}  // namespace tasks::torchscript
}  // namespace hpo
