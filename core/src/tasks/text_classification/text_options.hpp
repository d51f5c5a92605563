// The `text:` section of a `task: text_classification` config, read from SweepConfig's task
// options into a TextCorpusSpec. Torch-free; used by rank 0's config check and by every rank's
// task when it loads the corpus, so both read the section the same way.
#pragma once

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "tasks/text_classification/text_corpus.hpp"

namespace hpo {

// The config key of the section.
inline constexpr const char* kTextSectionKey = "text";

// Reads config.task_options' `text.*` keys:
//   text:
//     train: FILE            (required)  relative paths are taken from where hpo runs, as
//                                     for model: and data:
//     validation: FILE       (optional; carved from train when absent, see TextCorpusSpec)
//     test: FILE             (required)
//     format: tsv | csv      (default tsv)
//     text_column: NAME      (default text)
//     label_column: NAME     (default label)
//     min_count: N           (default 1)
//     max_vocab: N           (default 0: no limit)
//     vocabulary: FILE       (optional; one token per line, replaces min_count/max_vocab)
// BadInput "FILE:LINE: text.KEY: ..." for an unknown key, a missing train or test, a bad format
// or a count that is not an integer >= its minimum (min_count >= 1, max_vocab >= 0). Files are
// not opened here.
Status ReadTextCorpusSpec(const SweepConfig& config, TextCorpusSpec* spec);

}  // namespace hpo
