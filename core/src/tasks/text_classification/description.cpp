// task: text_classification, torch-free: its description (the encoder's hyperparameters, the
// metrics, the check of the `text:` section and its files).
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hpo/task_catalog.hpp"
#include "tasks/builtin_tasks.hpp"
#include "tasks/text_classification/text_options.hpp"

namespace hpo {
namespace {

// task: text_classification: a Transformer encoder classifier trained from scratch on labelled
// text files (`text:`, read by ReadTextCorpusSpec), tokenized with a vocabulary of the training
// split. Architecture hyperparameters beside the trainer's.
class TextClassificationDescription final : public TaskDescription {
 public:
  TextClassificationDescription() : hyperparameters_(TrainerHyperparameters()) {
    hyperparameters_.push_back(BindingCheckpoint(
        NumericHyperparameter("layers", ParamType::kInt, int64_t{2}, 1, 48, "encoder layers")));
    hyperparameters_.push_back(
        NumericHyperparameter("heads", ParamType::kInt, int64_t{4}, 1, 64,
                              "attention heads (d_model must be a multiple)"));
    hyperparameters_.push_back(BindingCheckpoint(NumericHyperparameter(
        "d_model", ParamType::kInt, int64_t{128}, 1, 4096, "embedding and encoder width")));
    hyperparameters_.push_back(
        BindingCheckpoint(NumericHyperparameter("ff_dim", ParamType::kInt, int64_t{256}, 1, 65536,
                                                "hidden width of each feed-forward block")));
    hyperparameters_.push_back(
        NumericHyperparameter("dropout", ParamType::kFloat, 0.1, 0.0, 1.0,
                              "dropout on embeddings, attention and residuals", false, true));
    hyperparameters_.push_back(BindingCheckpoint(NumericHyperparameter(
        "max_seq_length", ParamType::kInt, int64_t{128}, 1, 8192,
        "tokens the encoder sees per text (with cls pooling, [CLS] is one)")));
    hyperparameters_.push_back(ChoiceHyperparameter("pooling", "mean", {"mean", "cls"},
                                                    "mean over the tokens, or the [CLS] token"));
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
  std::string name_ = "text_classification";
  std::vector<HyperparameterInfo> hyperparameters_;
};

}  // namespace

namespace tasks::text_classification {

std::shared_ptr<const TaskDescription> Describe() {
  static const auto kDescription = std::make_shared<const TextClassificationDescription>();
  return kDescription;
}

}  // namespace tasks::text_classification
}  // namespace hpo
