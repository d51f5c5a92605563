#include "tasks/text_classification/model_runtime/text_classification_task.hpp"

#include <algorithm>
#include <utility>

#include "hpo/task_catalog.hpp"
#include "hpo/task_runner.hpp"
#include "tasks/builtin_tasks.hpp"
#include "tasks/text_classification/model_runtime/text_transformer.hpp"
#include "tasks/text_classification/text_options.hpp"
#include "train/archive_file.hpp"

namespace hpo {
namespace {

const std::vector<HyperparameterInfo>& Hyperparameters() {
  return tasks::text_classification::Describe()->hyperparameters();
}

int64_t IntegerHyperparameter(const Assignment& params, const std::string& name) {
  return static_cast<int64_t>(
      ParamAsDouble(HyperparameterOrDefault(Hyperparameters(), params, name)));
}

// The largest max_seq_length a trial of `config` can have: the largest value or the top of the
// range of the parameter, its default when it is not swept.
int64_t LongestMaxSeqLength(const SweepConfig& config) {
  for (const ParameterSpec& parameter : config.sweep.parameters) {
    if (parameter.name != "max_seq_length") continue;
    if (parameter.values.empty()) return static_cast<int64_t>(parameter.max);
    double longest = 1;
    for (const ParamValue& value : parameter.values)
      longest = std::max(longest, ParamAsDouble(value));
    return static_cast<int64_t>(longest);
  }
  return static_cast<int64_t>(
      ParamAsDouble(HyperparameterOrDefault(Hyperparameters(), {}, "max_seq_length")));
}

std::string ExactValue(const Assignment& params, const std::string& name) {
  return FormatParamValueExact(HyperparameterOrDefault(Hyperparameters(), params, name));
}

// The TextTransformer and the corpus's vocabulary and classes, which Export stores beside the
// weights (attributes `vocabulary` and `classes` of the saved module: a user can tokenize new
// text as training did, e.g. in Python: m = torch.jit.load(path); m.vocabulary).
class TextClassifierModel final : public TrainableModel {
 public:
  TextClassifierModel(TextTransformer net, std::shared_ptr<const TextCorpus> corpus)
      : net_(std::move(net)), corpus_(std::move(corpus)) {}

  std::vector<torch::Tensor> Parameters() override { return net_->parameters(); }
  std::vector<torch::Tensor> Buffers() override { return net_->buffers(); }
  void SetTraining(bool training) override { net_->train(training); }
  void MoveTo(torch::Device device) override { net_->to(device); }

  // The batch's rows start with [CLS]: kept for cls pooling, dropped for mean pooling; then cut
  // to the trial's max_seq_length.
  torch::Tensor Forward(const Batch& batch) override {
    const TextTransformerSpec& spec = net_->spec();
    torch::Tensor tokens = batch.inputs[0];
    if (spec.pooling == TextTransformerSpec::Pooling::kMean) tokens = tokens.slice(1, 1);
    tokens = tokens.slice(1, 0, spec.max_seq_length);
    if (tokens.size(1) == 0) {
      tokens = torch::full({tokens.size(0), 1}, spec.pad_id, tokens.options());
    }
    return net_->forward(tokens);
  }

  void Save(torch::serialize::OutputArchive& archive) override { net_->save(archive); }
  void Load(torch::serialize::InputArchive& archive) override { net_->load(archive); }
  void Export(const std::string& path) override {
    torch::serialize::OutputArchive archive;
    SaveModuleOnCpu(*net_, archive);
    c10::List<std::string> vocabulary;
    for (const std::string& token : corpus_->vocabulary.tokens()) vocabulary.push_back(token);
    c10::List<std::string> classes;
    for (const std::string& name : corpus_->labels.names()) classes.push_back(name);
    archive.write("vocabulary", c10::IValue(vocabulary));
    archive.write("classes", c10::IValue(classes));
    SaveArchiveToFile(archive, path);
  }
  void Import(const std::string& path) override { LoadModuleFromFile(*net_, path); }

 private:
  TextTransformer net_;
  std::shared_ptr<const TextCorpus> corpus_;
};

}  // namespace

Batch TokenSequenceDataset::Gather(const torch::Tensor& indices) const {
  const torch::Tensor rows = indices.to(torch::kInt64).contiguous();
  const int64_t* row = rows.data_ptr<int64_t>();
  const int64_t count = rows.numel();
  int64_t longest = 1;
  for (int64_t i = 0; i < count; ++i) {
    longest = std::max(longest, split_->offsets[row[i] + 1] - split_->offsets[row[i]]);
  }
  Batch batch;
  torch::Tensor tokens = torch::full({count, longest}, Vocabulary::kPadId, torch::kInt64);
  torch::Tensor targets = torch::empty({count}, torch::kInt64);
  int64_t* token_out = tokens.data_ptr<int64_t>();
  int64_t* target_out = targets.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t begin = split_->offsets[row[i]];
    const int64_t end = split_->offsets[row[i] + 1];
    std::copy(split_->token_ids.begin() + begin, split_->token_ids.begin() + end,
              token_out + i * longest);
    target_out[i] = split_->labels[row[i]];
  }
  batch.inputs = {tokens};
  batch.targets = targets;
  return batch;
}

TextClassificationTask::TextClassificationTask(std::shared_ptr<const TextCorpus> corpus,
                                               int64_t longest_sequence)
    : corpus_(std::move(corpus)),
      longest_sequence_(longest_sequence),
      train_(std::shared_ptr<const EncodedSplit>(corpus_, &corpus_->train)),
      validation_(std::shared_ptr<const EncodedSplit>(corpus_, &corpus_->validation)),
      test_(std::shared_ptr<const EncodedSplit>(corpus_, &corpus_->test)),
      objective_(corpus_->labels.names()) {}

Status TextClassificationTask::Make(const SweepConfig& config, std::unique_ptr<ModelTask>* task) {
  TextCorpusSpec spec;
  HPO_RETURN_IF_ERROR(ReadTextCorpusSpec(config, &spec));
  // Every text keeps [CLS] and as many words as the longest max_seq_length can use (mean pooling
  // drops [CLS]); each trial cuts to its own.
  const int64_t longest = LongestMaxSeqLength(config) + 1;
  auto corpus = std::make_shared<TextCorpus>();
  HPO_RETURN_IF_ERROR(LoadTextCorpus(spec, longest, /*prepend_cls=*/true, corpus.get()));
  task->reset(new TextClassificationTask(std::move(corpus), longest));
  return Status::Ok();
}

Status TextClassificationTask::BuildModel(const Assignment& params,
                                          std::unique_ptr<TrainableModel>* model) {
  TextTransformerSpec spec;
  spec.vocab_size = corpus_->vocabulary.size();
  spec.num_classes = corpus_->labels.size();
  spec.max_seq_length =
      std::min(IntegerHyperparameter(params, "max_seq_length"), longest_sequence_);
  spec.d_model = IntegerHyperparameter(params, "d_model");
  spec.heads = IntegerHyperparameter(params, "heads");
  spec.layers = IntegerHyperparameter(params, "layers");
  spec.ff_dim = IntegerHyperparameter(params, "ff_dim");
  spec.dropout = ParamAsDouble(HyperparameterOrDefault(Hyperparameters(), params, "dropout"));
  spec.pooling =
      std::get<std::string>(HyperparameterOrDefault(Hyperparameters(), params, "pooling")) == "cls"
          ? TextTransformerSpec::Pooling::kCls
          : TextTransformerSpec::Pooling::kMean;
  spec.pad_id = Vocabulary::kPadId;
  if (spec.d_model % spec.heads != 0) {
    return Status::BadInput("hyperparameters d_model " + ExactValue(params, "d_model") +
                            " and heads " + ExactValue(params, "heads") +
                            ": d_model must be a multiple of heads");
  }
  HPO_RETURN_IF_ERROR(ValidateTextTransformerSpec(spec));
  *model = std::make_unique<TextClassifierModel>(TextTransformer(spec), corpus_);
  return Status::Ok();
}

torch::Tensor TextClassificationTask::Loss(const torch::Tensor& outputs, const Batch& batch) {
  return objective_.Loss(outputs, batch);
}

void TextClassificationTask::Accumulate(const torch::Tensor& outputs, const Batch& batch,
                                        double* sums) {
  objective_.Accumulate(outputs, batch, sums);
}

Evaluation TextClassificationTask::Summarize(const std::vector<double>& sums,
                                             const std::string& prefix) {
  return objective_.Summarize(sums, prefix);
}

namespace tasks::text_classification {

void Register(TaskRegistry* registry) {
  AddModelTask(registry, Describe(), TextClassificationTask::Make);
}

}  // namespace tasks::text_classification
}  // namespace hpo
