#include "tasks/text_classification/text_corpus.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

namespace hpo {
namespace {

// Seeds the permutation that picks the carved validation rows. Never change it: that would move
// rows between the training and validation splits of existing studies.
constexpr uint64_t kValidationCarveSeed = 0x7e57'da7a'5eed'0019;

// Reads the split at `path`; BadInput when it has no rows.
Status ReadSplit(const std::string& path, const TextCorpusSpec& spec,
                 std::vector<LabeledText>* rows) {
  HPO_RETURN_IF_ERROR(
      ReadLabeledTexts(path, spec.format, spec.text_column, spec.label_column, rows));
  if (rows->empty()) return Status::BadInput(path + ": no rows after the header");
  return Status::Ok();
}

// Moves N/10 of the N rows of `train` (at least 1) to `validation`. Both keep the file order.
// N >= 2 (LabelMap::Build demands two distinct labels), so the training split keeps a row.
// std::mt19937_64's output is fixed by the standard (unlike std::shuffle's and the
// distributions'), so the pick is the same with every standard library.
void CarveValidation(std::vector<LabeledText>* train, std::vector<LabeledText>* validation) {
  const size_t num_rows = train->size();
  std::vector<size_t> permutation(num_rows);
  std::iota(permutation.begin(), permutation.end(), size_t{0});
  std::mt19937_64 generator(kValidationCarveSeed);
  for (size_t i = num_rows; i > 1; --i) std::swap(permutation[i - 1], permutation[generator() % i]);
  std::vector<bool> carved(num_rows, false);
  for (size_t i = 0; i < std::max<size_t>(1, num_rows / 10); ++i) carved[permutation[i]] = true;

  std::vector<LabeledText> kept;
  validation->clear();
  for (size_t row = 0; row < num_rows; ++row) {
    (carved[row] ? validation : &kept)->push_back(std::move((*train)[row]));
  }
  *train = std::move(kept);
}

Status EncodeSplit(const std::vector<LabeledText>& rows, const std::string& path,
                   const TextCorpus& corpus, int64_t max_seq_length, bool prepend_cls,
                   EncodedSplit* split) {
  split->token_ids.clear();
  split->offsets.assign(1, 0);
  split->offsets.reserve(rows.size() + 1);
  split->labels.clear();
  split->labels.reserve(rows.size());
  for (const LabeledText& row : rows) {
    int64_t class_index = 0;
    HPO_RETURN_IF_ERROR(corpus.labels.Index(row, path, &class_index));
    split->labels.push_back(class_index);
    corpus.vocabulary.Encode(row.text, max_seq_length, prepend_cls, &split->token_ids);
    split->offsets.push_back(static_cast<int64_t>(split->token_ids.size()));
  }
  return Status::Ok();
}

// Reads the split at `path` and encodes it.
Status LoadSplit(const std::string& path, const TextCorpusSpec& spec, const TextCorpus& corpus,
                 int64_t max_seq_length, bool prepend_cls, EncodedSplit* split) {
  std::vector<LabeledText> rows;
  HPO_RETURN_IF_ERROR(ReadSplit(path, spec, &rows));
  return EncodeSplit(rows, path, corpus, max_seq_length, prepend_cls, split);
}

}  // namespace

Status LoadTextCorpus(const TextCorpusSpec& spec, int64_t max_seq_length, bool prepend_cls,
                      TextCorpus* corpus) {
  if (spec.train.empty() || spec.test.empty()) {
    return Status::BadInput("text: both a train and a test file are needed");
  }
  if (max_seq_length < 1) {
    return Status::BadInput("max_seq_length must be at least 1, got " +
                            std::to_string(max_seq_length));
  }
  {  // the training rows are released before the other splits are read
    std::vector<LabeledText> train;
    HPO_RETURN_IF_ERROR(ReadSplit(spec.train, spec, &train));
    HPO_RETURN_IF_ERROR(LabelMap::Build(train, spec.train, &corpus->labels));
    std::vector<LabeledText> carved_validation;
    if (spec.validation.empty()) CarveValidation(&train, &carved_validation);
    if (spec.vocabulary_file.empty()) {
      HPO_RETURN_IF_ERROR(
          Vocabulary::Build(train, spec.min_count, spec.max_vocab, &corpus->vocabulary));
    } else {
      HPO_RETURN_IF_ERROR(Vocabulary::Load(spec.vocabulary_file, &corpus->vocabulary));
    }
    HPO_RETURN_IF_ERROR(
        EncodeSplit(train, spec.train, *corpus, max_seq_length, prepend_cls, &corpus->train));
    if (spec.validation.empty()) {
      HPO_RETURN_IF_ERROR(EncodeSplit(carved_validation, spec.train, *corpus, max_seq_length,
                                      prepend_cls, &corpus->validation));
    }
  }
  if (!spec.validation.empty()) {
    HPO_RETURN_IF_ERROR(LoadSplit(spec.validation, spec, *corpus, max_seq_length, prepend_cls,
                                  &corpus->validation));
  }
  return LoadSplit(spec.test, spec, *corpus, max_seq_length, prepend_cls, &corpus->test);
}

}  // namespace hpo
