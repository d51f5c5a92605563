#include "program/metric_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

#include "common/infinity.hpp"
#include "common/utf8.hpp"
#include "program/python_dict.hpp"
#include "program/user_regex.hpp"

namespace hpo {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxJsonDepth = 64;          // deeper lines are plain text (no stack overflow)
constexpr size_t kMaxRegexBytes = 4096;    // longer line parts are not searched by definitions
constexpr double kMaxStepNumber = 9.0e15;  // exactly representable, far from int64_t's limits

bool IsStepKey(std::string_view name) {
  return name == "epoch" || name == "step" || name == "_step";
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsNameStart(char c) { return IsLetter(c) || c == '_'; }
bool IsNameChar(char c) {
  return IsNameStart(c) || IsDigit(c) || c == '.' || c == '|' || c == '/' || c == '@' || c == '-';
}
bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `text` at `at` starts with the lower-case `word`, in any case.
bool StartsWithNoCase(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (Lower(text[at + i]) != word[i]) return false;
  }
  return true;
}

size_t SkipDigits(std::string_view text, size_t at) {
  while (at < text.size() && IsDigit(text[at])) ++at;
  return at;
}

// `token` (an optional '-', digits, fraction, exponent) as a double; false when it is beyond
// double's range. from_chars, unlike strtod, ignores the locale.
bool ConvertDecimal(std::string_view token, double* value) {
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return error == std::errc() && end == token.data() + token.size();
}

// Scans a decimal number at `at`: an optional sign, then digits with an optional fraction (or a
// fraction alone) and an optional exponent, or nan, inf, infinity in any case. Returns the index
// past it, or `at` when there is none.
size_t ScanDecimal(std::string_view text, size_t at, double* value) {
  size_t i = at;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  if (StartsWithNoCase(text, i, "nan")) {
    *value = kNaN;
    return i + 3;
  }
  if (StartsWithNoCase(text, i, "inf")) {
    *value = negative ? -kInfinity : kInfinity;
    return i + (StartsWithNoCase(text, i, "infinity") ? 8 : 3);
  }
  const size_t digits = i;
  size_t end = SkipDigits(text, i);
  bool any_digit = end > digits;
  if (end < text.size() && text[end] == '.') {
    const size_t fraction_end = SkipDigits(text, end + 1);
    any_digit = any_digit || fraction_end > end + 1;
    end = fraction_end;
  }
  if (!any_digit) return at;
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    size_t exponent = end + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    const size_t exponent_end = SkipDigits(text, exponent);
    if (exponent_end > exponent) end = exponent_end;
  }
  // from_chars takes no '+'; a '-' is part of its token.
  const size_t token = text[at] == '+' ? at + 1 : at;
  if (!ConvertDecimal(text.substr(token, end - token), value)) return at;
  return end;
}

// Whether a number that ends at `at` ends a token: not followed by a letter, digit, '_', or '.'
// and a digit ("3.2s" and "1.2.3" are not numbers).
bool EndsNumber(std::string_view text, size_t at) {
  if (at == text.size()) return true;
  const char c = text[at];
  if (IsLetter(c) || IsDigit(c) || c == '_') return false;
  return !(c == '.' && at + 1 < text.size() && IsDigit(text[at + 1]));
}

// All of `text` but blanks around it as a decimal number (ScanDecimal's forms).
bool ParseWholeDecimal(std::string_view text, double* value) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && IsJsonSpace(text[begin])) ++begin;
  while (end > begin && IsJsonSpace(text[end - 1])) --end;
  const std::string_view trimmed = text.substr(begin, end - begin);
  return !trimmed.empty() && ScanDecimal(trimmed, 0, value) == trimmed.size();
}

// A strict JSON (RFC 8259) reader of one object, plus Python json.dumps's NaN, Infinity and
// -Infinity. Objects and arrays nested deeper than kMaxJsonDepth make the text invalid.
class JsonObjectParser {
 public:
  explicit JsonObjectParser(std::string_view text) : text_(text) {}

  // Parses all of the text (JSON white space around allowed) as one object; on success
  // `numbers` holds its top-level members whose values are numbers, in order.
  bool Parse(std::vector<std::pair<std::string, double>>* numbers) {
    SkipSpace();
    if (!Peek('{') || !ParseObject(1, numbers)) return false;
    SkipSpace();
    return at_ == text_.size();
  }

 private:
  bool Peek(char c) const { return at_ < text_.size() && text_[at_] == c; }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++at_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    if (text_.compare(at_, word.size(), word) != 0) return false;
    at_ += word.size();
    return true;
  }
  void SkipSpace() {
    while (at_ < text_.size() && IsJsonSpace(text_[at_])) ++at_;
  }

  // At '{'. Collects top-level numbers into `numbers` when it is not null.
  bool ParseObject(int depth, std::vector<std::pair<std::string, double>>* numbers) {
    if (depth > kMaxJsonDepth) return false;
    ++at_;
    SkipSpace();
    if (Consume('}')) return true;
    std::string key;
    while (true) {
      SkipSpace();
      key.clear();
      if (!ParseString(numbers != nullptr ? &key : nullptr)) return false;
      SkipSpace();
      if (!Consume(':')) return false;
      SkipSpace();
      bool is_number = false;
      double number = 0.0;
      if (!ParseValue(depth, &is_number, &number)) return false;
      if (numbers != nullptr && is_number) numbers->emplace_back(key, number);
      SkipSpace();
      if (Consume('}')) return true;
      if (!Consume(',')) return false;
    }
  }

  // At '['.
  bool ParseArray(int depth) {
    if (depth > kMaxJsonDepth) return false;
    ++at_;
    SkipSpace();
    if (Consume(']')) return true;
    while (true) {
      SkipSpace();
      bool is_number = false;
      double number = 0.0;
      if (!ParseValue(depth, &is_number, &number)) return false;
      SkipSpace();
      if (Consume(']')) return true;
      if (!Consume(',')) return false;
    }
  }

  // A value inside a container at `depth`; *is_number tells whether it was a number.
  bool ParseValue(int depth, bool* is_number, double* number) {
    *is_number = false;
    if (at_ == text_.size()) return false;
    switch (text_[at_]) {
      case '{':
        return ParseObject(depth + 1, nullptr);
      case '[':
        return ParseArray(depth + 1);
      case '"':
        return ParseString(nullptr);
      case 't':
        return ConsumeWord("true");
      case 'f':
        return ConsumeWord("false");
      case 'n':
        return ConsumeWord("null");
      default:
        *is_number = true;
        return ParseNumber(number);
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, NaN, Infinity or -Infinity.
  bool ParseNumber(double* value) {
    if (ConsumeWord("NaN")) {
      *value = kNaN;
      return true;
    }
    if (ConsumeWord("Infinity")) {
      *value = kInfinity;
      return true;
    }
    if (ConsumeWord("-Infinity")) {
      *value = -kInfinity;
      return true;
    }
    const size_t start = at_;
    Consume('-');
    if (Consume('0')) {
      if (at_ < text_.size() && IsDigit(text_[at_])) return false;  // no leading zeros
    } else if (at_ < text_.size() && IsDigit(text_[at_])) {
      at_ = SkipDigits(text_, at_);
    } else {
      return false;
    }
    if (Consume('.')) {
      const size_t fraction = at_;
      at_ = SkipDigits(text_, at_);
      if (at_ == fraction) return false;
    }
    if (Consume('e') || Consume('E')) {
      if (!Consume('+')) Consume('-');
      const size_t exponent = at_;
      at_ = SkipDigits(text_, at_);
      if (at_ == exponent) return false;
    }
    return ConvertDecimal(text_.substr(start, at_ - start), value);
  }

  // At '"'; appends the decoded string to `out` when it is not null.
  bool ParseString(std::string* out) {
    if (!Consume('"')) return false;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out != nullptr) out->push_back(c);
        continue;
      }
      if (at_ == text_.size()) return false;
      const char escaped = text_[at_++];
      char plain = 0;
      switch (escaped) {
        case '"':
        case '\\':
        case '/':
          plain = escaped;
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
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
        case 'u': {
          uint32_t code = 0;
          if (!ParseHex4(&code)) return false;
          uint32_t low = 0;
          if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
            const size_t before = at_;
            at_ += 2;
            if (ParseHex4(&low) && low >= 0xDC00 && low < 0xE000) {
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            } else {
              at_ = before;  // not its pair: the next escape is read on its own
            }
          }
          if (out != nullptr) AppendUtf8(code, out);
          continue;
        }
        default:
          return false;
      }
      if (out != nullptr) out->push_back(plain);
    }
    return false;
  }

  bool ParseHex4(uint32_t* code) {
    if (text_.size() - at_ < 4) return false;
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      uint32_t digit = 0;
      if (IsDigit(c)) {
        digit = static_cast<uint32_t>(c - '0');
      } else if (Lower(c) >= 'a' && Lower(c) <= 'f') {
        digit = static_cast<uint32_t>(Lower(c) - 'a' + 10);
      } else {
        return false;
      }
      *code = *code * 16 + digit;
    }
    return true;
  }

  std::string_view text_;
  size_t at_ = 0;
};

// Compiles `definitions` into `compiled` (when not null); errors as CheckMetricDefinitions.
Status CompileDefinitions(const std::vector<MetricDefinition>& definitions,
                          std::vector<std::regex>* compiled) {
  for (size_t i = 0; i < definitions.size(); ++i) {
    const std::string where =
        "metric_definitions[" + std::to_string(i) + "].regex: '" + definitions[i].regex + "'";
    std::regex regex;
    const Status compiling = CompileUserRegex(definitions[i].regex, &regex);
    if (!compiling.ok()) return Status::BadInput(where + " " + compiling.message());
    if (regex.mark_count() < 1) {
      return Status::BadInput(where + " has no capture group (the value is the first group)");
    }
    if (compiled != nullptr) compiled->push_back(std::move(regex));
  }
  return Status::Ok();
}

}  // namespace

Status CheckMetricDefinitions(const std::vector<MetricDefinition>& definitions) {
  return CompileDefinitions(definitions, nullptr);
}

Status MetricReader::Create(std::vector<std::string> columns, std::string objective,
                            const std::vector<MetricDefinition>& definitions,
                            MetricReader* reader) {
  std::vector<std::regex> compiled;
  HPO_RETURN_IF_ERROR(CompileDefinitions(definitions, &compiled));
  MetricReader made;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!made.column_index_.try_emplace(std::move(columns[i]), i).second) {  // not moved when taken
      return Status::BadInput("the metric '" + columns[i] + "' is listed twice");
    }
  }
  const auto found = made.column_index_.find(objective);
  if (found == made.column_index_.end()) {
    return Status::BadInput("the metric '" + objective + "' is not among the recorded metrics");
  }
  made.objective_index_ = found->second;
  for (size_t i = 0; i < definitions.size(); ++i) {
    made.definitions_.push_back({definitions[i].name, std::move(compiled[i])});
  }
  made.pending_.assign(made.column_index_.size(), kNaN);
  *reader = std::move(made);
  return Status::Ok();
}

void MetricReader::Report(std::string_view name, double value, bool* objective_seen) {
  if (IsStepKey(name)) {
    if (name == "epoch" && std::isfinite(value)) pending_epoch_key_ = value;
    if (value == std::floor(value) && std::fabs(value) < kMaxStepNumber) {
      pending_step_ = static_cast<int64_t>(value);
      pending_step_explicit_ = true;
    }
    return;
  }
  const auto found = column_index_.find(name);
  if (found == column_index_.end()) {
    undeclared_.emplace(name);
    return;
  }
  pending_[found->second] = value;
  if (found->second == objective_index_) *objective_seen = true;
}

bool MetricReader::ReadDict(std::string_view line, bool* objective_seen) {
  size_t begin = 0;
  size_t end = line.size();
  while (begin < end && IsJsonSpace(line[begin])) ++begin;
  while (end > begin && IsJsonSpace(line[end - 1])) --end;
  if (end - begin < 2 || line[begin] != '{' || line[end - 1] != '}') return false;
  const std::string_view text = line.substr(begin, end - begin);
  std::vector<std::pair<std::string, double>> numbers;
  std::string why;
  if (!JsonObjectParser(text).Parse(&numbers) && !ParsePythonDict(text, &numbers, &why)) {
    if (unreadable_lines_++ == 0) {
      first_unreadable_ = {lines_read_, std::string(text.substr(0, 200)), why};
    }
    return false;
  }
  for (const auto& [name, value] : numbers) Report(name, value, objective_seen);
  return true;
}

void MetricReader::ReadPairs(std::string_view line, bool* objective_seen) {
  for (size_t equals = line.find('='); equals != std::string_view::npos;
       equals = line.find('=', equals + 1)) {
    size_t name_end = equals;
    while (name_end > 0 && IsBlank(line[name_end - 1])) --name_end;
    size_t name_start = name_end;
    while (name_start > 0 && IsNameChar(line[name_start - 1])) --name_start;
    if (name_start == name_end || !IsNameStart(line[name_start])) continue;
    const std::string_view name = line.substr(name_start, name_end - name_start);
    if (!IsStepKey(name) && column_index_.count(name) == 0) continue;
    size_t value_start = equals + 1;
    while (value_start < line.size() && IsBlank(line[value_start])) ++value_start;
    double value = 0.0;
    const size_t value_end = ScanDecimal(line, value_start, &value);
    if (value_end > value_start && EndsNumber(line, value_end)) {
      Report(name, value, objective_seen);
    }
  }
}

void MetricReader::ReadDefinitions(std::string_view line, bool* objective_seen) {
  size_t start = 0;
  while (start < line.size()) {
    size_t end = line.find('\r', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start && end - start <= kMaxRegexBytes) {
      const char* first = line.data() + start;
      const char* last = line.data() + end;
      for (const Definition& definition : definitions_) {
        for (std::cregex_iterator match(first, last, definition.regex), done; match != done;
             ++match) {
          const auto& group = (*match)[1];
          double value = 0.0;
          if (group.matched &&
              ParseWholeDecimal(std::string_view(group.first, group.length()), &value)) {
            Report(definition.name, value, objective_seen);
          }
        }
      }
    }
    start = end + 1;
  }
}

void MetricReader::ReadLine(std::string_view line, std::vector<EpochMetrics>* steps) {
  bool objective_seen = false;
  ++lines_read_;
  const bool dict = line.find('{') != std::string_view::npos && ReadDict(line, &objective_seen);
  if (!dict && line.find('=') != std::string_view::npos) ReadPairs(line, &objective_seen);
  if (!definitions_.empty()) ReadDefinitions(line, &objective_seen);
  if (!objective_seen) return;
  const bool repeat = pending_step_explicit_ && last_step_key_ && *last_step_key_ == pending_step_;
  last_step_key_ = pending_step_explicit_ ? std::optional<int64_t>(pending_step_) : std::nullopt;
  if (!repeat) {
    EpochMetrics step;
    step.epoch = NumberStep();
    step.values = std::move(pending_);
    last_step_ = step.epoch;
    if (pending_epoch_key_) epoch_keys_[step.epoch] = *pending_epoch_key_;
    steps->push_back(std::move(step));
  }
  pending_.assign(column_index_.size(), kNaN);
  pending_step_ = 0;
  pending_step_explicit_ = false;
  pending_epoch_key_.reset();
}

// The pending step's number: its integer key when past the last step, else the next; a resumed
// run's first step with fractional `epoch` keys, one past the earlier steps with lower keys.
int64_t MetricReader::NumberStep() const {
  const auto fractional = [](double key) { return std::isfinite(key) && key != std::floor(key); };
  if (last_step_ == 0 && pending_epoch_key_ &&
      (fractional(*pending_epoch_key_) ||
       std::any_of(earlier_epoch_keys_.begin(), earlier_epoch_keys_.end(), fractional))) {
    const double key = *pending_epoch_key_;
    return 1 + std::count_if(earlier_epoch_keys_.begin(), earlier_epoch_keys_.end(),
                             [key](double earlier) { return earlier < key; });
  }
  return pending_step_ > last_step_ ? pending_step_ : last_step_ + 1;
}

double MetricReader::epoch_key(int64_t step) const {
  const auto found = epoch_keys_.find(step);
  return found == epoch_keys_.end() ? kNaN : found->second;
}

}  // namespace hpo
