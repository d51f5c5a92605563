#include "tasks/text_classification/vocabulary.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "common/file_io.hpp"
#include "common/utf8.hpp"
#include "tasks/text_classification/tokenizer.hpp"

namespace hpo {
namespace {

// By id.
constexpr std::array<std::string_view, Vocabulary::kNumSpecialTokens> kSpecialTokens = {
    "[PAD]", "[UNK]", "[CLS]"};

bool IsSpecialToken(std::string_view token) {
  return std::find(kSpecialTokens.begin(), kSpecialTokens.end(), token) != kSpecialTokens.end();
}

bool HasWhitespace(std::string_view token) {
  return std::any_of(token.begin(), token.end(),
                     [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7F; });
}

// The lines of `content` without their LF or CRLF, blank lines at the end left out.
std::vector<std::string_view> SplitLines(std::string_view content) {
  std::vector<std::string_view> lines;
  while (!content.empty()) {
    const size_t end = std::min(content.find('\n'), content.size());
    std::string_view line = content.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    content.remove_prefix(std::min(end + 1, content.size()));
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

}  // namespace

Vocabulary::Vocabulary() { Assign({}); }

void Vocabulary::Assign(std::vector<std::string> tokens) {
  tokens_.clear();
  tokens_.reserve(kNumSpecialTokens + tokens.size());
  for (std::string_view special : kSpecialTokens) tokens_.emplace_back(special);
  tokens_.insert(tokens_.end(), std::make_move_iterator(tokens.begin()),
                 std::make_move_iterator(tokens.end()));
  ids_.clear();
  ids_.reserve(tokens_.size());
  for (size_t id = 0; id < tokens_.size(); ++id) ids_.emplace(tokens_[id], id);
}

Status Vocabulary::Build(const std::vector<LabeledText>& train, int64_t min_count,
                         int64_t max_vocab, Vocabulary* vocabulary) {
  if (min_count < 1) {
    return Status::BadInput("min_count must be at least 1, got " + std::to_string(min_count));
  }
  if (max_vocab < 0 || (max_vocab > 0 && max_vocab <= kNumSpecialTokens)) {
    return Status::BadInput(
        "max_vocab must be 0 (no limit) or above " + std::to_string(kNumSpecialTokens) +
        " (it counts the special tokens [PAD], [UNK], [CLS]), got " + std::to_string(max_vocab));
  }
  std::unordered_map<std::string, int64_t> counts;
  for (const LabeledText& row : train) {
    ForEachToken(row.text, [&counts](const std::string& token) {
      ++counts[token];
      return true;
    });
  }
  std::vector<std::pair<std::string, int64_t>> kept;
  for (auto& [token, count] : counts) {
    if (count >= min_count) kept.emplace_back(token, count);
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (max_vocab > 0) {
    kept.resize(std::min<size_t>(kept.size(), max_vocab - kNumSpecialTokens));
  }
  std::vector<std::string> tokens;
  tokens.reserve(kept.size());
  for (auto& token_and_count : kept) tokens.push_back(std::move(token_and_count.first));
  vocabulary->Assign(std::move(tokens));
  return Status::Ok();
}

Status Vocabulary::Load(const std::string& path, Vocabulary* vocabulary) {
  std::string bytes;
  HPO_RETURN_IF_ERROR(ReadWholeFile(path, "vocabulary", &bytes));
  std::string_view content = bytes;
  if (content.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
    content.remove_prefix(kUtf8ByteOrderMark.size());
  }
  const std::vector<std::string_view> lines = SplitLines(content);
  if (lines.empty()) return Status::BadInput(path + ": empty vocabulary file");

  std::unordered_map<std::string_view, int64_t> line_of_token;
  std::vector<std::string> tokens;
  for (size_t index = 0; index < lines.size(); ++index) {
    const std::string_view token = lines[index];
    const int64_t line = static_cast<int64_t>(index) + 1;
    const std::string where = path + ":" + std::to_string(line) + ": ";
    if (token.empty()) {
      return Status::BadInput(where + "blank line; expected one token per line");
    }
    if (HasWhitespace(token)) {
      return Status::BadInput(where + "token '" + std::string(token) +
                              "' contains whitespace; expected one token per line");
    }
    const auto [previous, inserted] = line_of_token.emplace(token, line);
    if (!inserted) {
      return Status::BadInput(where + "token '" + std::string(token) + "' is already on line " +
                              std::to_string(previous->second));
    }
    if (!IsSpecialToken(token)) tokens.emplace_back(token);
  }
  vocabulary->Assign(std::move(tokens));
  return Status::Ok();
}

int64_t Vocabulary::Id(std::string_view token) const {
  const auto found = ids_.find(std::string(token));
  return found == ids_.end() ? kUnknownId : found->second;
}

void Vocabulary::Encode(std::string_view text, int64_t max_length, bool prepend_cls,
                        std::vector<int64_t>* ids) const {
  int64_t room = max_length;
  if (room <= 0) return;
  if (prepend_cls) {
    ids->push_back(kClsId);
    if (--room == 0) return;
  }
  ForEachToken(text, [this, ids, &room](const std::string& token) {
    const auto found = ids_.find(token);
    ids->push_back(found == ids_.end() ? kUnknownId : found->second);
    return --room > 0;
  });
}

}  // namespace hpo
