#include "hpo/task_catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <utility>

#include "text/text_options.hpp"

namespace hpo {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Bounds {
  double min;
  double max;
  bool min_exclusive;
  bool max_exclusive;
};

HyperparameterInfo Numeric(const char* name, ParamType type, ParamValue default_value,
                           Bounds bounds, const char* help) {
  HyperparameterInfo info;
  info.name = name;
  info.type = type;
  info.default_value = std::move(default_value);
  info.min = bounds.min;
  info.max = bounds.max;
  info.min_exclusive = bounds.min_exclusive;
  info.max_exclusive = bounds.max_exclusive;
  info.help = help;
  return info;
}

HyperparameterInfo Choice(const char* name, std::string default_value,
                          std::vector<std::string> choices, const char* help) {
  HyperparameterInfo info;
  info.name = name;
  info.type = ParamType::kString;
  info.default_value = std::move(default_value);
  info.choices = std::move(choices);
  info.help = help;
  return info;
}

std::vector<HyperparameterInfo> BuildClassifierHyperparameters() {
  std::vector<HyperparameterInfo> list = TrainerHyperparameters();
  list.push_back(
      Numeric("dropout", ParamType::kFloat, 0.0, {0.0, 1.0, false, true}, "dropout probability"));
  list.push_back(Numeric("width", ParamType::kInt, int64_t{16}, {1, 4096, false, false},
                         "width of the model's hidden layers"));
  return list;
}

// A built-in libtorch classifier: fashion_mnist or synthetic.
class ClassifierTask final : public TaskDescription {
 public:
  explicit ClassifierTask(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return ClassifierHyperparameters();
  }
  std::vector<std::string> MetricNames(const SweepConfig&) const override {
    return ClassifierMetricNames();
  }

 private:
  std::string name_;
};

// A task with fixed lists (MakeTaskDescription).
class FixedTaskDescription final : public TaskDescription {
 public:
  FixedTaskDescription(std::string name, std::vector<HyperparameterInfo> hyperparameters,
                       std::vector<std::string> metric_names)
      : name_(std::move(name)),
        hyperparameters_(std::move(hyperparameters)),
        metric_names_(std::move(metric_names)) {}
  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return hyperparameters_;
  }
  std::vector<std::string> MetricNames(const SweepConfig&) const override { return metric_names_; }

 private:
  std::string name_;
  std::vector<HyperparameterInfo> hyperparameters_;
  std::vector<std::string> metric_names_;
};

// task: torchscript: the user's TorchScript model trained by the DDP trainer on an HDF5 file or a
// folder of .npy files (`data:`). Parameter names are the trainer's hyperparameters and the
// `{name}` placeholders of `model`; the metrics follow `loss`.
class TorchScriptTask final : public TaskDescription {
 public:
  TorchScriptTask() : name_(kTorchScriptTaskName), hyperparameters_(TrainerHyperparameters()) {}
  const std::string& name() const override { return name_; }
  // The architecture names are the user's (checked against `model` in CheckOptions).
  bool free_parameters() const override { return true; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return hyperparameters_;
  }
  std::vector<std::string> option_keys() const override { return {"model", "loss"}; }
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
    if (config.execution.data.empty()) {
      return Status::BadInput(options.file +
                              ": data: missing (an HDF5 file with train/x, train/y, or a folder "
                              "of train_x.npy, train_y.npy, ...)");
    }
    std::vector<std::string> placeholders;
    HPO_RETURN_IF_ERROR(ModelPathPlaceholders(options.Get("model", ""), &placeholders)
                            .WithContext(options.file + ":" +
                                         std::to_string(options.Find("model")->line) + ": model"));
    for (const std::string& placeholder : placeholders) {
      bool known = false;
      for (const ParameterSpec& parameter : config.sweep.parameters) {
        known = known || parameter.name == placeholder;
      }
      if (!known) {
        return options.Error("model", "{" + placeholder +
                                          "} is not a parameter of the sweep (swept, or fixed "
                                          "with `value:`)");
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

  std::string name_;
  std::vector<HyperparameterInfo> hyperparameters_;
};

// task: text_classification: a Transformer encoder classifier trained from scratch on labelled
// text files (`text:`, read by ReadTextCorpusSpec), tokenized with a vocabulary of the training
// split. Architecture hyperparameters beside the trainer's.
class TextClassificationDescription final : public TaskDescription {
 public:
  TextClassificationDescription() : hyperparameters_(TrainerHyperparameters()) {
    hyperparameters_.push_back(
        Numeric("layers", ParamType::kInt, int64_t{2}, {1, 48, false, false}, "encoder layers"));
    hyperparameters_.push_back(Numeric("heads", ParamType::kInt, int64_t{4}, {1, 64, false, false},
                                       "attention heads (d_model must be a multiple)"));
    hyperparameters_.push_back(Numeric("d_model", ParamType::kInt, int64_t{128},
                                       {1, 4096, false, false}, "embedding and encoder width"));
    hyperparameters_.push_back(Numeric("ff_dim", ParamType::kInt, int64_t{256},
                                       {1, 65536, false, false},
                                       "hidden width of each feed-forward block"));
    hyperparameters_.push_back(Numeric("dropout", ParamType::kFloat, 0.1, {0.0, 1.0, false, true},
                                       "dropout on embeddings, attention and residuals"));
    hyperparameters_.push_back(
        Numeric("max_seq_length", ParamType::kInt, int64_t{128}, {1, 8192, false, false},
                "tokens the encoder sees per text (with cls pooling, [CLS] is one)"));
    hyperparameters_.push_back(
        Choice("pooling", "mean", {"mean", "cls"}, "mean over the tokens, or the [CLS] token"));
  }
  const std::string& name() const override { return name_; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    return hyperparameters_;
  }
  std::vector<std::string> option_keys() const override { return {kTextSectionKey}; }
  std::vector<std::string> MetricNames(const SweepConfig&) const override {
    return ModelTaskMetricNames({"val_loss", "val_accuracy", "val_macro_f1"});
  }
  Status CheckOptions(const SweepConfig& config) const override {
    TextCorpusSpec spec;
    HPO_RETURN_IF_ERROR(ReadTextCorpusSpec(config, &spec));
    const std::vector<std::pair<std::string, std::string>> files = {
        {"train", spec.train},
        {"validation", spec.validation},
        {"test", spec.test},
        {"vocabulary", spec.vocabulary_file}};
    for (const auto& [key, path] : files) {
      std::error_code error;
      if (!path.empty() && !std::filesystem::is_regular_file(path, error)) {
        return config.task_options.Error(std::string(kTextSectionKey) + "." + key,
                                         path + " does not exist");
      }
    }
    return Status::Ok();
  }

 private:
  std::string name_ = kTextClassificationTaskName;
  std::vector<HyperparameterInfo> hyperparameters_;
};

// The user's own program (W&B `program`/`command`): any hyperparameter, and the metrics are the
// sweep metric, then `metrics:`, then the names of `metric_definitions`, each once.
class CommandTask final : public TaskDescription {
 public:
  const std::string& name() const override { return name_; }
  bool free_parameters() const override { return true; }
  const std::vector<HyperparameterInfo>& hyperparameters() const override {
    static const std::vector<HyperparameterInfo> kNone;
    return kNone;
  }
  std::vector<std::string> MetricNames(const SweepConfig& config) const override {
    std::vector<std::string> names = {config.sweep.metric.name};
    auto add = [&names](const std::string& name) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    for (const std::string& name : config.command.metrics) add(name);
    for (const MetricRegex& definition : config.command.metric_definitions) add(definition.name);
    return names;
  }

 private:
  std::string name_ = kCommandTaskName;
};

}  // namespace

const HyperparameterInfo* TaskDescription::FindHyperparameter(const std::string& name) const {
  for (const HyperparameterInfo& info : hyperparameters()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

void TaskCatalog::Add(std::shared_ptr<const TaskDescription> description) {
  const std::string name = description->name();
  tasks_[name] = std::move(description);
}

const TaskDescription* TaskCatalog::Find(const std::string& name) const {
  const auto found = tasks_.find(name);
  return found == tasks_.end() ? nullptr : found->second.get();
}

std::shared_ptr<const TaskDescription> TaskCatalog::Share(const std::string& name) const {
  const auto found = tasks_.find(name);
  return found == tasks_.end() ? nullptr : found->second;
}

std::vector<std::string> TaskCatalog::names() const {
  std::vector<std::string> names;
  for (const auto& entry : tasks_) names.push_back(entry.first);
  return names;
}

const TaskCatalog& BuiltinTaskCatalog() {
  static const TaskCatalog kCatalog = [] {
    TaskCatalog catalog;
    catalog.Add(std::make_shared<ClassifierTask>("fashion_mnist"));
    catalog.Add(std::make_shared<ClassifierTask>("synthetic"));
    catalog.Add(std::make_shared<CommandTask>());
    catalog.Add(std::make_shared<TorchScriptTask>());
    catalog.Add(std::make_shared<TextClassificationDescription>());
    return catalog;
  }();
  return kCatalog;
}

const std::vector<HyperparameterInfo>& ClassifierHyperparameters() {
  static const std::vector<HyperparameterInfo> kClassifierHyperparameters =
      BuildClassifierHyperparameters();
  return kClassifierHyperparameters;
}

const std::vector<std::string>& ClassifierMetricNames() {
  static const std::vector<std::string> kClassifierMetrics =
      ModelTaskMetricNames({"val_loss", "val_accuracy", "val_macro_f1"});
  return kClassifierMetrics;
}

std::vector<HyperparameterInfo> TrainerHyperparameters() {
  return {
      Numeric("lr", ParamType::kFloat, 0.01, {0.0, kInfinity, true, false},
              "learning rate of the optimizer"),
      Numeric("batch_size", ParamType::kInt, int64_t{64}, {1, 65536, false, false},
              "global batch size, split across the trial's ranks"),
      Choice("optimizer", "adam", {"sgd", "adam", "adamw"}, "sgd, adam or adamw"),
      Numeric("momentum", ParamType::kFloat, 0.9, {0.0, 1.0, false, true}, "momentum of sgd"),
      Numeric("weight_decay", ParamType::kFloat, 0.0, {0.0, kInfinity, false, false},
              "weight decay of the optimizer"),
      Numeric("warmup_ratio", ParamType::kFloat, 0.0, {0.0, 1.0, false, true},
              "fraction of all steps with a linear lr warm-up, then linear decay (0: constant)"),
  };
}

std::vector<std::string> ModelTaskMetricNames(const std::vector<std::string>& validation_metrics) {
  std::vector<std::string> names = {"train_loss"};
  names.insert(names.end(), validation_metrics.begin(), validation_metrics.end());
  names.push_back("epoch_time_s");
  return names;
}

ParamValue HyperparameterOrDefault(const std::vector<HyperparameterInfo>& hyperparameters,
                                   const Assignment& params, const std::string& name) {
  if (const ParamValue* value = FindParam(params, name)) return *value;
  for (const HyperparameterInfo& info : hyperparameters) {
    if (info.name == name) return info.default_value;
  }
  return ParamValue();
}

std::shared_ptr<const TaskDescription> MakeTaskDescription(
    std::string name, std::vector<HyperparameterInfo> hyperparameters,
    std::vector<std::string> metric_names) {
  return std::make_shared<FixedTaskDescription>(std::move(name), std::move(hyperparameters),
                                                std::move(metric_names));
}

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

}  // namespace hpo
