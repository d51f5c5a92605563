// The word tokenizer of `task: text_classification`. Pure functions; thread-safe.
//
// Rules, applied to bytes:
//  - ASCII letters are lower-cased; nothing else is changed.
//  - A token is a maximal run of word bytes: ASCII letters, digits and every byte >= 0x80, so a
//    UTF-8 encoded word stays whole ("naïve" is one token) while its letters keep their case.
//  - Every other printable ASCII character (punctuation, symbols) is a token of its own.
//  - Whitespace and the other ASCII control bytes separate tokens and are dropped.
// So "Don't PANIC: 42km!" gives don ' t panic : 42km !
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpo {

namespace tokenizer_internal {

enum class ByteClass : uint8_t { kSeparator, kWord, kSymbol };

constexpr ByteClass ClassOf(unsigned char byte) {
  if (byte >= 0x80) return ByteClass::kWord;
  if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
      (byte >= '0' && byte <= '9')) {
    return ByteClass::kWord;
  }
  if (byte > ' ' && byte < 0x7F) return ByteClass::kSymbol;
  return ByteClass::kSeparator;
}

constexpr std::array<ByteClass, 256> kByteClasses = [] {
  std::array<ByteClass, 256> classes{};
  for (int byte = 0; byte < 256; ++byte) classes[byte] = ClassOf(static_cast<unsigned char>(byte));
  return classes;
}();

inline ByteClass ClassOfByte(char c) { return kByteClasses[static_cast<unsigned char>(c)]; }

inline char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

}  // namespace tokenizer_internal

// Calls `visit(const std::string& token)` for each token of `text` in order until it returns false.
// The token is a buffer reused between calls (no allocation per token): copy it to keep it.
template <typename Visit>
void ForEachToken(std::string_view text, Visit&& visit) {
  using tokenizer_internal::ByteClass;
  using tokenizer_internal::ClassOfByte;
  std::string token;
  size_t at = 0;
  while (at < text.size()) {
    const ByteClass byte_class = ClassOfByte(text[at]);
    if (byte_class == ByteClass::kSeparator) {
      ++at;
      continue;
    }
    const size_t start = at++;
    if (byte_class == ByteClass::kWord) {
      while (at < text.size() && ClassOfByte(text[at]) == ByteClass::kWord) ++at;
    }
    token.assign(text.data() + start, at - start);
    for (char& c : token) c = tokenizer_internal::LowerAscii(c);
    if (!visit(std::as_const(token))) return;
  }
}

// The tokens of `text`, in order.
std::vector<std::string> Tokenize(std::string_view text);

}  // namespace hpo
