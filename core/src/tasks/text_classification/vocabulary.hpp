// The token vocabulary of `task: text_classification`: a dense id per token, built from the
// training split's tokens or loaded from a file. A value type; const methods are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hpo/status.hpp"
#include "tasks/text_classification/delimited_table.hpp"

namespace hpo {

// Maps tokens (as Tokenize produces them) to ids 0..size()-1. The special tokens always hold the
// first ids: [PAD] = 0 (padding, never produced by Encode), [UNK] = 1 (any token not in the
// vocabulary), [CLS] = 2 (prepended by Encode on request). The tokenizer never produces them
// itself ('[' is a token of its own), so text cannot collide with them. A default-constructed
// vocabulary holds the special tokens only.
class Vocabulary {
 public:
  static constexpr int64_t kPadId = 0;
  static constexpr int64_t kUnknownId = 1;
  static constexpr int64_t kClsId = 2;
  static constexpr int64_t kNumSpecialTokens = 3;

  Vocabulary();

  // Counts the tokens of the texts of `train` and keeps those occurring at least `min_count`
  // times, most frequent first, equal counts in byte-wise order of the token (deterministic).
  // `max_vocab` caps size() including the special tokens; 0 means no cap. BadInput when
  // min_count < 1 or max_vocab is negative or leaves no room beyond the special tokens (1 to 3).
  static Status Build(const std::vector<LabeledText>& train, int64_t min_count, int64_t max_vocab,
                      Vocabulary* vocabulary);

  // Reads a vocabulary file: UTF-8, one token per line in id order, LF or CRLF, blank lines at
  // the end ignored. The special tokens take ids 0-2 whether or not the file lists them; where it
  // does they move to the front and the other tokens keep their order. Tokens the tokenizer never
  // produces (upper case letters, punctuation inside a word) are kept and never match. BadInput
  // naming the file (and line): unreadable, no tokens, a blank line before the end, a token with
  // whitespace in it, a token listed twice ("PATH:LINE: token 'x' is already on line N").
  static Status Load(const std::string& path, Vocabulary* vocabulary);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }

  // The tokens by id.
  const std::vector<std::string>& tokens() const { return tokens_; }

  // The token's id, kUnknownId when it is not in the vocabulary.
  int64_t Id(std::string_view token) const;

  // Appends the ids of the tokens of `text` to `ids`, kClsId first when `prepend_cls`, at most
  // `max_length` ids in all (CLS included): tokens beyond are dropped.
  void Encode(std::string_view text, int64_t max_length, bool prepend_cls,
              std::vector<int64_t>* ids) const;

 private:
  // Sets the vocabulary to the special tokens followed by `tokens` (which must not hold them).
  void Assign(std::vector<std::string> tokens);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace hpo
