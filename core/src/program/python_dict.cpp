#include "program/python_dict.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <system_error>

#include "common/utf8.hpp"

namespace hpo {

namespace {

constexpr int kMaxDepth = 64;

bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentifierChar(char c) { return IsIdentifierStart(c) || IsDecimalDigit(c); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool Parse(std::vector<std::pair<std::string, double>>* numbers, std::string* why) {
    SkipSpace();
    if (!Consume('{')) return Fail("it does not start with '{'", why);
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      if (!Peek('\'') && !Peek('"')) return Fail("a key is not a string", why);
      if (!ParseString(&key)) return Fail("a string is not closed", why);
      SkipSpace();
      if (!Consume(':')) return Fail("no ':' after the key '" + key + "'", why);
      SkipSpace();
      bool is_number = false;
      double number = 0.0;
      if (!ParseValue(1, &is_number, &number)) {
        return Fail("the value of '" + key + "' is not a Python literal", why);
      }
      if (is_number) numbers->emplace_back(std::move(key), number);
      SkipSpace();
      if (Consume('}')) break;
      if (!Consume(',')) return Fail("no ',' or '}' after the value of '" + key + "'", why);
    }
    SkipSpace();
    if (at_ != text_.size()) return Fail("text follows the closing '}'", why);
    return true;
  }

 private:
  static bool Fail(const std::string& reason, std::string* why) {
    *why = reason;
    return false;
  }
  bool Peek(char c) const { return at_ < text_.size() && text_[at_] == c; }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++at_;
    return true;
  }
  void SkipSpace() {
    while (at_ < text_.size() && IsSpace(text_[at_])) ++at_;
  }
  bool AtValueEnd() const {
    return at_ == text_.size() || text_[at_] == ',' || text_[at_] == '}' || text_[at_] == ')' ||
           text_[at_] == ']' || text_[at_] == ':' || IsSpace(text_[at_]);
  }

  // One value inside a container at `depth`; false when it is none of the forms ParsePythonDict
  // names or the text ends inside it.
  bool ParseValue(int depth, bool* is_number, double* number) {
    *is_number = false;
    if (depth > kMaxDepth || at_ == text_.size()) return false;
    const char c = text_[at_];
    if (c == '\'' || c == '"') {
      std::string content;
      if (!ParseString(&content)) return false;
      *is_number = IsWholeNumber(content, number);
      return true;
    }
    if (c == '{' || c == '[' || c == '(') return ParseContainer(depth);
    const size_t start = at_;
    if (ParseNumber(number) && AtValueEnd()) {
      *is_number = true;
      return true;
    }
    at_ = start;
    if (!IsIdentifierStart(c)) return false;
    while (at_ < text_.size() && (IsIdentifierChar(text_[at_]) || text_[at_] == '.')) ++at_;
    SkipSpace();
    if (Peek('(')) return ParseCall(depth, is_number, number);
    return true;  // True, False, None, torch.float64, ...
  }

  // Whether `content` is one number as ParseNumber reads it and nothing else: Trainer's printed
  // logs (transformers 5) hold their floats formatted as strings ('0.8123').
  static bool IsWholeNumber(const std::string& content, double* number) {
    Parser parser(content);
    return parser.ParseNumber(number) && parser.at_ == content.size();
  }

  // At '(' after a callee: the first argument's number, when it is one.
  bool ParseCall(int depth, bool* is_number, double* number) {
    ++at_;
    bool first = true;
    while (true) {
      SkipSpace();
      if (Consume(')')) return true;
      const size_t before = at_;
      while (at_ < text_.size() && IsIdentifierChar(text_[at_])) ++at_;
      SkipSpace();
      const bool keyword = at_ > before && Peek('=') && text_.compare(at_, 2, "==") != 0;
      if (keyword) {
        ++at_;
        SkipSpace();
      } else {
        at_ = before;
      }
      bool argument_is_number = false;
      double argument = 0.0;
      if (!ParseValue(depth + 1, &argument_is_number, &argument)) return false;
      if (first && !keyword && argument_is_number) {
        *is_number = true;
        *number = argument;
      }
      first = false;
      SkipSpace();
      if (Consume(')')) return true;
      if (!Consume(',')) return false;
    }
  }

  // At '{', '[' or '(': every value (and dict key) inside, up to the matching bracket.
  bool ParseContainer(int depth) {
    const char open = text_[at_++];
    const char close = open == '{' ? '}' : open == '[' ? ']' : ')';
    while (true) {
      SkipSpace();
      if (Consume(close)) return true;
      bool is_number = false;
      double ignored = 0.0;
      if (!ParseValue(depth + 1, &is_number, &ignored)) return false;
      SkipSpace();
      if (open == '{' && Consume(':')) {
        SkipSpace();
        if (!ParseValue(depth + 1, &is_number, &ignored)) return false;
        SkipSpace();
      }
      if (Consume(close)) return true;
      if (!Consume(',')) return false;
    }
  }

  // -?digits(.digits)?([eE][+-]?digits)?, nan, inf, -inf: what repr prints for int and float.
  bool ParseNumber(double* value) {
    const size_t start = at_;
    const bool negative = Consume('-');
    if (text_.compare(at_, 3, "nan") == 0) {
      at_ += 3;
      *value = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    if (text_.compare(at_, 3, "inf") == 0) {
      at_ += 3;
      *value = negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      return true;
    }
    const size_t digits = at_;
    while (at_ < text_.size() && IsDecimalDigit(text_[at_])) ++at_;
    if (at_ == digits) return false;
    if (text_[digits] == '0' && at_ - digits > 1) return false;  // 05 is no Python number
    if (Consume('.')) {
      while (at_ < text_.size() && IsDecimalDigit(text_[at_])) ++at_;
    }
    if (Consume('e') || Consume('E')) {
      if (!Consume('+')) Consume('-');
      const size_t exponent = at_;
      while (at_ < text_.size() && IsDecimalDigit(text_[at_])) ++at_;
      if (at_ == exponent) return false;
    }
    std::string token(text_.substr(start, at_ - start));
    // from_chars reads neither "1." nor "+" exponents the way repr may print them.
    if (!token.empty() && token.back() == '.') token.push_back('0');
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *value);
    return error == std::errc() && end == token.data() + token.size();
  }

  // At a quote; appends the decoded string to `out` when it is not null. Python's escapes:
  // \\ \' \" \n \r \t \xHH \uHHHH \UHHHHHHHH; any other keeps its backslash, as Python does.
  bool ParseString(std::string* out) {
    const char quote = text_[at_++];
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == quote) return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;  // repr escapes control characters
      if (c != '\\') {
        if (out != nullptr) out->push_back(c);
        continue;
      }
      if (at_ == text_.size()) return false;
      const char escaped = text_[at_++];
      int hex_digits = 0;
      char plain = 0;
      switch (escaped) {
        case '\\':
        case '\'':
        case '"':
          plain = escaped;
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'x':
          hex_digits = 2;
          break;
        case 'u':
          hex_digits = 4;
          break;
        case 'U':
          hex_digits = 8;
          break;
        default:
          if (out != nullptr) {
            out->push_back('\\');
            out->push_back(escaped);
          }
          continue;
      }
      if (hex_digits == 0) {
        if (out != nullptr) out->push_back(plain);
        continue;
      }
      uint32_t code = 0;
      if (text_.size() - at_ < static_cast<size_t>(hex_digits)) return false;
      const auto [end, error] =
          std::from_chars(text_.data() + at_, text_.data() + at_ + hex_digits, code, 16);
      if (error != std::errc() || end != text_.data() + at_ + hex_digits || code > 0x10FFFF) {
        return false;
      }
      at_ += static_cast<size_t>(hex_digits);
      if (out != nullptr) AppendUtf8(code, out);
    }
    return false;
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

bool ParsePythonDict(std::string_view text, std::vector<std::pair<std::string, double>>* numbers,
                     std::string* why) {
  std::vector<std::pair<std::string, double>> parsed;
  if (!Parser(text).Parse(&parsed, why)) return false;
  *numbers = std::move(parsed);
  return true;
}

}  // namespace hpo
