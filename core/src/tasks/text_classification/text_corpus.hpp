// The data of `task: text_classification`, from its `text:` config section to token ids: reads
// the train, validation and test tables, builds (or loads) the vocabulary and the classes, and
// encodes every split. Torch-free. A pure function of the files it reads: every rank that calls
// it with the same spec gets the same corpus, without collectives. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/status.hpp"
#include "tasks/text_classification/delimited_table.hpp"
#include "tasks/text_classification/label_map.hpp"
#include "tasks/text_classification/vocabulary.hpp"

namespace hpo {

// The `text:` section and the tokenizer settings of a text_classification task.
struct TextCorpusSpec {
  std::string train;
  // Empty: the validation split is carved out of `train`: N/10 of its N rows (at least 1), picked
  // by a fixed permutation that depends on N only (no seed), so it is the same in every trial,
  // sweep and rank. The carved rows leave the training split; the vocabulary comes from the rows
  // that stay, the classes from the whole file.
  std::string validation;
  std::string test;
  TableFormat format = TableFormat::kTsv;
  std::string text_column = "text";
  std::string label_column = "label";
  int64_t min_count = 1;  // see Vocabulary::Build
  int64_t max_vocab = 0;  // see Vocabulary::Build; 0: no limit
  // Set: the vocabulary is read from this file (Vocabulary::Load); min_count and max_vocab unused.
  std::string vocabulary_file;
};

// The examples of one split as token ids, in file order, in compressed sparse row form: example i
// has the ids token_ids[offsets[i] .. offsets[i + 1]) (between 0 and max_seq_length of them;
// none for a text without tokens unless CLS is prepended) and the class labels[i].
struct EncodedSplit {
  std::vector<int64_t> token_ids;
  std::vector<int64_t> offsets;  // size() + 1 entries, offsets[0] = 0
  std::vector<int64_t> labels;   // class indices into TextCorpus::labels.names()

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

struct TextCorpus {
  Vocabulary vocabulary;
  LabelMap labels;
  EncodedSplit train;
  EncodedSplit validation;
  EncodedSplit test;
};

// Loads the corpus `spec` describes, each example cut to at most `max_seq_length` ids ([CLS]
// included when `prepend_cls`). Every error is BadInput naming the file (and line) at fault:
// those of ReadLabeledTexts, Vocabulary::Build or Load and LabelMap::Build or Index, a split
// without rows, no train or test file given, max_seq_length < 1.
Status LoadTextCorpus(const TextCorpusSpec& spec, int64_t max_seq_length, bool prepend_cls,
                      TextCorpus* corpus);

}  // namespace hpo
