// task: text_classification as a ModelTask (hpo/model_task.hpp): the corpus of the `text:`
// section (LoadTextCorpus, once per rank) and, per trial, a TextTransformer built from the trial's
// layers, heads, d_model, ff_dim, dropout, max_seq_length and pooling, trained with cross-entropy
// (accuracy, macro F1, and the confusion matrix on the test split). Used by one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/model_task.hpp"
#include "tasks/text_classification/text_corpus.hpp"

namespace hpo {

// One split's token ids as a Dataset: Gather pads the rows it picks with Vocabulary::kPadId to
// the longest of them ([B, L] int64 inputs, L >= 1; int64 class targets). Every row starts with
// [CLS]. Holds the split by shared pointer: copies are cheap and Gather is thread-safe.
class TokenSequenceDataset final : public Dataset {
 public:
  TokenSequenceDataset() = default;
  explicit TokenSequenceDataset(std::shared_ptr<const EncodedSplit> split)
      : split_(std::move(split)) {}

  int64_t size() const override { return split_ ? split_->size() : 0; }
  Batch Gather(const torch::Tensor& indices) const override;

 private:
  std::shared_ptr<const EncodedSplit> split_;
};

class TextClassificationTask final : public ModelTask {
 public:
  // Reads `config`'s text section and loads the corpus, each text cut to the longest
  // max_seq_length the sweep can ask for. BadInput naming the file (and line) at fault.
  static Status Make(const SweepConfig& config, std::unique_ptr<ModelTask>* task);

  const Dataset& train_data() const override { return train_; }
  const Dataset& validation_data() const override { return validation_; }
  const Dataset* test_data() const override { return &test_; }
  // BadInput for a shape the encoder cannot take (d_model not a multiple of heads, a
  // max_seq_length beyond what the corpus was cut to).
  Status BuildModel(const Assignment& params, std::unique_ptr<TrainableModel>* model) override;
  torch::Tensor Loss(const torch::Tensor& outputs, const Batch& batch) override;
  size_t EvaluationSize() const override { return objective_.EvaluationSize(); }
  void Accumulate(const torch::Tensor& outputs, const Batch& batch, double* sums) override;
  Evaluation Summarize(const std::vector<double>& sums, const std::string& prefix) override;

 private:
  TextClassificationTask(std::shared_ptr<const TextCorpus> corpus, int64_t longest_sequence);

  std::shared_ptr<const TextCorpus> corpus_;
  int64_t longest_sequence_;  // the most ids of any encoded text, [CLS] included
  TokenSequenceDataset train_;
  TokenSequenceDataset validation_;
  TokenSequenceDataset test_;
  ClassificationObjective objective_;
};

}  // namespace hpo
