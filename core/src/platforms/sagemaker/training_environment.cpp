// SageMaker script mode's training environment (training_environment.hpp). A small JSON model
// decodes each hyperparameter as Python's json.loads does (the toolkit's read_hyperparameters) and
// renders values as json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True) and
// str() do (mapping.to_env_vars, mapping.to_cmd_args); the rest follows environment.py's
// Environment.__init__ and to_env_vars key by key.
#include "platforms/sagemaker/training_environment.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/file_io.hpp"
#include "common/utf8.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

// A JSON value as Python's json module holds it: an object keeps its keys in first-seen order (a
// later duplicate replaces the value), an integer keeps all its digits.
struct SageMakerJson {
  enum class Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;                 // kFloat
  std::string text;                  // kInt: the digits ("-12"); kString: UTF-8
  std::vector<std::string> keys;     // kObject
  std::vector<SageMakerJson> items;  // kArray: the elements; kObject: the values, as keys
};

using SageMakerKind = SageMakerJson::Kind;

// The group and instance type the toolkit's local mode and a homogeneous SageMaker job report.
constexpr const char* kSageMakerGroup = "homogeneousCluster";
constexpr const char* kSageMakerInstanceType = "local";
// Python's int() refuses longer digit strings (sys.get_int_max_str_digits() by default).
constexpr size_t kSageMakerMaxIntDigits = 4300;
// Deeper values would exhaust Python's recursion limit; such a text stays a string here.
constexpr int kSageMakerMaxDepth = 500;

SageMakerJson SageMakerString(std::string text) {
  SageMakerJson value;
  value.kind = SageMakerKind::kString;
  value.text = std::move(text);
  return value;
}

SageMakerJson SageMakerInteger(long long number) {
  SageMakerJson value;
  value.kind = SageMakerKind::kInt;
  value.text = std::to_string(number);
  return value;
}

SageMakerJson SageMakerBoolean(bool flag) {
  SageMakerJson value;
  value.kind = SageMakerKind::kBool;
  value.boolean = flag;
  return value;
}

SageMakerJson SageMakerArray(std::vector<SageMakerJson> items = {}) {
  SageMakerJson value;
  value.kind = SageMakerKind::kArray;
  value.items = std::move(items);
  return value;
}

SageMakerJson SageMakerStringList(const std::vector<std::string>& texts) {
  SageMakerJson value = SageMakerArray();
  for (const std::string& text : texts) value.items.push_back(SageMakerString(text));
  return value;
}

SageMakerJson SageMakerObject() {
  SageMakerJson value;
  value.kind = SageMakerKind::kObject;
  return value;
}

// The value of `key` in `object`, or null when absent.
const SageMakerJson* SageMakerFind(const SageMakerJson& object, const std::string& key) {
  for (size_t i = 0; i < object.keys.size(); ++i) {
    if (object.keys[i] == key) return &object.items[i];
  }
  return nullptr;
}

// object[key] = value, as a Python dict assigns: an existing key keeps its place.
void SageMakerSet(SageMakerJson* object, const std::string& key, SageMakerJson value) {
  for (size_t i = 0; i < object->keys.size(); ++i) {
    if (object->keys[i] == key) {
      object->items[i] = std::move(value);
      return;
    }
  }
  object->keys.push_back(key);
  object->items.push_back(std::move(value));
}

bool SageMakerDigit(char c) { return c >= '0' && c <= '9'; }

// Python's float() of a JSON number that std::from_chars finds out of range: infinity when its
// first significant digit lies left of the decimal point after the exponent, else zero.
double SageMakerOutOfRange(const std::string& number) {
  const bool negative = number[0] == '-';
  const size_t e = number.find_first_of("eE");
  const std::string mantissa = number.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  const long long exponent =
      e == std::string::npos ? 0 : std::strtoll(number.c_str() + e + 1, nullptr, 10);
  const size_t point = std::min(mantissa.find('.'), mantissa.size());
  const size_t first = mantissa.find_first_of("123456789");
  const long long order = (first < point ? static_cast<long long>(point - first)
                                         : -static_cast<long long>(first - point - 1)) +
                          exponent;
  const double magnitude = order > 0 ? HUGE_VAL : 0.0;
  return negative ? -magnitude : magnitude;
}

// Python's json.loads over one text: Parse returns false where it would raise (ValueError: a
// syntax error, extra data, a control character in a string, an integer of more than 4300
// digits). NaN, Infinity and -Infinity are numbers, as Python reads them.
class SageMakerJsonParser {
 public:
  explicit SageMakerJsonParser(const std::string& text) : text_(text) {}

  bool Parse(SageMakerJson* value) {
    SkipSpace();
    if (!ParseValue(value, 0)) return false;
    SkipSpace();
    return at_ == text_.size();
  }

 private:
  bool Next(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  bool NextWord(const char* word) {
    const std::string_view expected(word);
    if (text_.compare(at_, expected.size(), expected) != 0) return false;
    at_ += expected.size();
    return true;
  }

  void SkipSpace() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  bool ParseValue(SageMakerJson* value, int depth) {
    if (at_ >= text_.size() || depth > kSageMakerMaxDepth) return false;
    const char c = text_[at_];
    if (c == '{') return ParseObject(value, depth);
    if (c == '[') return ParseArray(value, depth);
    if (c == '"') {
      value->kind = SageMakerKind::kString;
      return ParseString(&value->text);
    }
    if (NextWord("null")) return true;
    const bool is_true = NextWord("true");
    if (is_true || NextWord("false")) {
      value->kind = SageMakerKind::kBool;
      value->boolean = is_true;
      return true;
    }
    const bool negative_infinity = NextWord("-Infinity");
    if (negative_infinity || NextWord("Infinity") || NextWord("NaN")) {
      value->kind = SageMakerKind::kFloat;
      value->number = text_[at_ - 1] == 'N' ? NAN : negative_infinity ? -HUGE_VAL : HUGE_VAL;
      return true;
    }
    return ParseNumber(value);
  }

  void SkipDigits() {
    while (at_ < text_.size() && SageMakerDigit(text_[at_])) ++at_;
  }

  // -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? as Python's scanner matches it: a "." or "e" that no
  // digit follows is left for the caller (extra data).
  bool ParseNumber(SageMakerJson* value) {
    const size_t start = at_;
    Next('-');
    if (at_ >= text_.size() || !SageMakerDigit(text_[at_])) return false;
    if (!Next('0')) SkipDigits();
    bool fraction = false;
    if (at_ + 1 < text_.size() && text_[at_] == '.' && SageMakerDigit(text_[at_ + 1])) {
      ++at_;
      SkipDigits();
      fraction = true;
    }
    const size_t before_exponent = at_;
    if (Next('e') || Next('E')) {
      if (!Next('+')) Next('-');
      if (at_ < text_.size() && SageMakerDigit(text_[at_])) {
        SkipDigits();
        fraction = true;
      } else {
        at_ = before_exponent;
      }
    }
    const std::string number = text_.substr(start, at_ - start);
    if (!fraction) {
      if (number.size() - (number[0] == '-' ? 1 : 0) > kSageMakerMaxIntDigits) return false;
      value->kind = SageMakerKind::kInt;
      value->text = number == "-0" ? "0" : number;
      return true;
    }
    value->kind = SageMakerKind::kFloat;
    const auto result =
        std::from_chars(number.data(), number.data() + number.size(), value->number);
    if (result.ec == std::errc::result_out_of_range) value->number = SageMakerOutOfRange(number);
    return true;
  }

  bool ParseHex4(uint32_t* code) {
    if (at_ + 4 > text_.size()) return false;
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      const int digit = SageMakerDigit(c)        ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
      if (digit < 0) return false;
      *code = *code * 16 + static_cast<uint32_t>(digit);
    }
    return true;
  }

  // \uXXXX, a high surrogate joined with a low one that follows; a lone surrogate is kept.
  bool ParseUnicodeEscape(std::string* text) {
    uint32_t code = 0;
    if (!ParseHex4(&code)) return false;
    if (code >= 0xD800 && code <= 0xDBFF && text_.compare(at_, 2, "\\u") == 0) {
      const size_t mark = at_;
      at_ += 2;
      uint32_t low = 0;
      if (ParseHex4(&low) && low >= 0xDC00 && low <= 0xDFFF) {
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      } else {
        at_ = mark;
      }
    }
    AppendUtf8(code, text);
    return true;
  }

  bool ParseString(std::string* text) {
    ++at_;  // the opening quote
    text->clear();
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        text->push_back(c);
        continue;
      }
      if (at_ >= text_.size()) return false;
      const char escape = text_[at_++];
      static const std::string kFrom = "\"\\/bfnrt";
      static const std::string kTo = "\"\\/\b\f\n\r\t";
      const size_t known = kFrom.find(escape);
      if (known != std::string::npos) {
        text->push_back(kTo[known]);
      } else if (escape != 'u' || !ParseUnicodeEscape(text)) {
        return false;
      }
    }
    return false;
  }

  bool ParseArray(SageMakerJson* value, int depth) {
    ++at_;
    *value = SageMakerArray();
    SkipSpace();
    if (Next(']')) return true;
    for (;;) {
      SageMakerJson item;
      SkipSpace();
      if (!ParseValue(&item, depth + 1)) return false;
      value->items.push_back(std::move(item));
      SkipSpace();
      if (Next(']')) return true;
      if (!Next(',')) return false;
    }
  }

  bool ParseObject(SageMakerJson* value, int depth) {
    ++at_;
    *value = SageMakerObject();
    SkipSpace();
    if (Next('}')) return true;
    for (;;) {
      SkipSpace();
      std::string key;
      if (at_ >= text_.size() || text_[at_] != '"' || !ParseString(&key)) return false;
      SkipSpace();
      if (!Next(':')) return false;
      SkipSpace();
      SageMakerJson item;
      if (!ParseValue(&item, depth + 1)) return false;
      SageMakerSet(value, key, std::move(item));
      SkipSpace();
      if (Next('}')) return true;
      if (!Next(',')) return false;
    }
  }

  const std::string& text_;
  size_t at_ = 0;
};

// The toolkit's read_hyperparameters for one value: json.loads(text), or the text itself.
SageMakerJson SageMakerDecode(const std::string& text) {
  SageMakerJson value;
  if (SageMakerJsonParser(text).Parse(&value)) return value;
  return SageMakerString(text);
}

// The code point at text[*at] (UTF-8; surrogates as three bytes accepted), advancing *at; a
// malformed byte reads as U+FFFD.
uint32_t SageMakerNextCodePoint(const std::string& text, size_t* at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(*at);
  const size_t length = lead < 0x80           ? 1
                        : (lead >> 5) == 0x6  ? 2
                        : (lead >> 4) == 0xE  ? 3
                        : (lead >> 3) == 0x1E ? 4
                                              : 0;
  if (length == 0 || *at + length > text.size()) {
    ++*at;
    return lead < 0x80 ? lead : 0xFFFD;
  }
  uint32_t code = lead & (0xFF >> (length + 1));
  if (length == 1) code = lead;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(*at + i) & 0xC0) != 0x80) {
      ++*at;
      return 0xFFFD;
    }
    code = (code << 6) | (byte(*at + i) & 0x3F);
  }
  *at += length;
  return code;
}

size_t SageMakerCodePointCount(const std::string& text) {
  size_t count = 0;
  for (size_t at = 0; at < text.size(); ++count) SageMakerNextCodePoint(text, &at);
  return count;
}

void SageMakerAppendEscape(const char* format, uint32_t code, std::string* out) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), format, static_cast<unsigned>(code));
  out->append(buffer);
}

// json.dumps(text, ensure_ascii=True).
void SageMakerDumpString(const std::string& text, std::string* out) {
  out->push_back('"');
  for (size_t at = 0; at < text.size();) {
    const uint32_t code = SageMakerNextCodePoint(text, &at);
    static const std::string kFrom = "\"\\\b\f\n\r\t";
    static const std::string kTo = "\"\\bfnrt";
    const size_t known = code < 0x80 ? kFrom.find(static_cast<char>(code)) : std::string::npos;
    if (known != std::string::npos) {
      out->push_back('\\');
      out->push_back(kTo[known]);
    } else if (code >= 0x20 && code < 0x7F) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x10000) {
      SageMakerAppendEscape("\\u%04x", code, out);
    } else {
      SageMakerAppendEscape("\\u%04x", 0xD800 + ((code - 0x10000) >> 10), out);
      SageMakerAppendEscape("\\u%04x", 0xDC00 + ((code - 0x10000) & 0x3FF), out);
    }
  }
  out->push_back('"');
}

// Python's repr(float), which json.dumps also writes: the shortest digits that read back, fixed
// notation for decimal exponents -4..15 (with at least one fractional digit), else d.ddde+XX.
// `json` picks json.dumps' NaN and Infinity over repr's nan and inf.
std::string SageMakerFloatText(double number, bool json) {
  if (std::isnan(number)) return json ? "NaN" : "nan";
  if (std::isinf(number)) return std::string(number < 0 ? "-" : "") + (json ? "Infinity" : "inf");
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), number, std::chars_format::scientific);
  std::string scientific(buffer, result.ptr);  // "-1.5e-05"
  const std::string sign = scientific[0] == '-' ? "-" : "";
  const size_t e = scientific.find('e');
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  std::string digits = scientific.substr(sign.size(), e - sign.size());
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exponent < -4 || exponent >= 16) {
    std::string text = sign + digits.substr(0, 1);
    if (digits.size() > 1) text += "." + digits.substr(1);
    char tail[16];
    std::snprintf(tail, sizeof(tail), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return text + tail;
  }
  if (exponent < 0) return sign + "0." + std::string(-exponent - 1, '0') + digits;
  const size_t whole = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= whole) return sign + digits + std::string(whole - digits.size(), '0') + ".0";
  return sign + digits.substr(0, whole) + "." + digits.substr(whole);
}

// The object's member indices in Python's sorted() order of the keys (code points, which UTF-8's
// byte order keeps).
std::vector<size_t> SageMakerSortedMembers(const SageMakerJson& object) {
  std::vector<size_t> order(object.keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return object.keys[a] < object.keys[b]; });
  return order;
}

// json.dumps(value, separators=(",", ":"), ensure_ascii=True), keys sorted when `sort_keys`.
void SageMakerDump(const SageMakerJson& value, std::string* out, bool sort_keys = true) {
  switch (value.kind) {
    case SageMakerKind::kNull:
      out->append("null");
      return;
    case SageMakerKind::kBool:
      out->append(value.boolean ? "true" : "false");
      return;
    case SageMakerKind::kInt:
      out->append(value.text);
      return;
    case SageMakerKind::kFloat:
      out->append(SageMakerFloatText(value.number, true));
      return;
    case SageMakerKind::kString:
      SageMakerDumpString(value.text, out);
      return;
    case SageMakerKind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out->push_back(',');
        SageMakerDump(value.items[i], out, sort_keys);
      }
      out->push_back(']');
      return;
    case SageMakerKind::kObject: {
      std::vector<size_t> order = SageMakerSortedMembers(value);
      if (!sort_keys) std::sort(order.begin(), order.end());
      out->push_back('{');
      for (size_t i = 0; i < order.size(); ++i) {
        if (i > 0) out->push_back(',');
        SageMakerDumpString(value.keys[order[i]], out);
        out->push_back(':');
        SageMakerDump(value.items[order[i]], out, sort_keys);
      }
      out->push_back('}');
      return;
    }
  }
}

std::string SageMakerDumped(const SageMakerJson& value) {
  std::string out;
  SageMakerDump(value, &out);
  return out;
}

// str.isprintable() for one code point, close enough for hyperparameter values: the control,
// separator, format, surrogate and private-use ranges are not printable.
bool SageMakerPrintable(uint32_t code) {
  const auto in = [code](uint32_t first, uint32_t last) { return code >= first && code <= last; };
  return !(code < 0x20 || in(0x7F, 0xA0) || code == 0xAD || in(0x2000, 0x200F) ||
           in(0x2028, 0x202F) || in(0x205F, 0x206F) || code == 0x3000 || in(0xD800, 0xF8FF) ||
           code == 0xFEFF || in(0xFFF9, 0xFFFB) || in(0xFFFE, 0xFFFF) || code >= 0xF0000);
}

// Python's repr(text): single quotes unless the text holds one and no double quote.
void SageMakerReprString(const std::string& text, std::string* out) {
  const bool has_single = text.find('\'') != std::string::npos;
  const char quote = has_single && text.find('"') == std::string::npos ? '"' : '\'';
  out->push_back(quote);
  for (size_t at = 0; at < text.size();) {
    const size_t start = at;
    const uint32_t code = SageMakerNextCodePoint(text, &at);
    if (code == '\\' || code == static_cast<uint32_t>(quote)) {
      out->push_back('\\');
      out->push_back(static_cast<char>(code));
    } else if (code == '\t' || code == '\n' || code == '\r') {
      out->append(code == '\t' ? "\\t" : code == '\n' ? "\\n" : "\\r");
    } else if (SageMakerPrintable(code)) {
      if (code == 0xFFFD && text.compare(start, 3, "\xEF\xBF\xBD") != 0) {
        AppendUtf8(code, out);  // a malformed byte
      } else {
        out->append(text, start, at - start);
      }
    } else {
      SageMakerAppendEscape(code < 0x100     ? "\\x%02x"
                            : code < 0x10000 ? "\\u%04x"
                                             : "\\U%08x",
                            code, out);
    }
  }
  out->push_back(quote);
}

// Python's repr(value) of the value json.loads made (None, True, 1.0, 'a', [1, 'a'], {'k': 1}).
void SageMakerRepr(const SageMakerJson& value, std::string* out) {
  switch (value.kind) {
    case SageMakerKind::kNull:
      out->append("None");
      return;
    case SageMakerKind::kBool:
      out->append(value.boolean ? "True" : "False");
      return;
    case SageMakerKind::kInt:
      out->append(value.text);
      return;
    case SageMakerKind::kFloat:
      out->append(SageMakerFloatText(value.number, false));
      return;
    case SageMakerKind::kString:
      SageMakerReprString(value.text, out);
      return;
    case SageMakerKind::kArray:
    case SageMakerKind::kObject: {
      const bool object = value.kind == SageMakerKind::kObject;
      out->push_back(object ? '{' : '[');
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out->append(", ");
        if (object) {
          SageMakerReprString(value.keys[i], out);
          out->append(": ");
        }
        SageMakerRepr(value.items[i], out);
      }
      out->push_back(object ? '}' : ']');
      return;
    }
  }
}

// Python's str(value): a string as it is, anything else as repr.
std::string SageMakerStr(const SageMakerJson& value) {
  if (value.kind == SageMakerKind::kString) return value.text;
  std::string out;
  SageMakerRepr(value, &out);
  return out;
}

// mapping.to_env_vars' rendering of a value: None as "", a string as it is, else compact JSON.
std::string SageMakerEnvValue(const SageMakerJson& value) {
  if (value.kind == SageMakerKind::kNull) return "";
  if (value.kind == SageMakerKind::kString) return value.text;
  return SageMakerDumped(value);
}

// Python's truth value of a decoded JSON value.
bool SageMakerTruthy(const SageMakerJson& value) {
  switch (value.kind) {
    case SageMakerKind::kNull:
      return false;
    case SageMakerKind::kBool:
      return value.boolean;
    case SageMakerKind::kInt:
      return value.text != "0";
    case SageMakerKind::kFloat:
      return value.number != 0;
    case SageMakerKind::kString:
      return !value.text.empty();
    case SageMakerKind::kArray:
    case SageMakerKind::kObject:
      return !value.items.empty();
  }
  return false;
}

// Python's `text in value` for a list (an equal string element), a dict (a key) or a string (a
// substring); false for anything else (where Python would raise TypeError).
bool SageMakerContains(const SageMakerJson& value, const std::string& text) {
  if (value.kind == SageMakerKind::kString) return value.text.find(text) != std::string::npos;
  if (value.kind == SageMakerKind::kObject) return SageMakerFind(value, text) != nullptr;
  if (value.kind != SageMakerKind::kArray) return false;
  return std::any_of(value.items.begin(), value.items.end(), [&](const SageMakerJson& item) {
    return item.kind == SageMakerKind::kString && item.text == text;
  });
}

// params.SAGEMAKER_HYPERPARAMETERS and the "sagemaker_" prefix: the names split_by_criteria keeps
// out of the user's hyperparameters. `framework` (additional_framework_parameters): the
// prefixed names outside that list.
bool SageMakerOwnName(const std::string& name, bool* framework = nullptr) {
  static const char* const kNames[] = {"sagemaker_program",
                                       "sagemaker_submit_directory",
                                       "sagemaker_enable_cloudwatch_metrics",
                                       "sagemaker_region",
                                       "sagemaker_container_log_level",
                                       "sagemaker_job_name",
                                       "default_user_module_name",
                                       "_tuning_objective_metric",
                                       "sagemaker_s3_output"};
  const bool listed = std::any_of(std::begin(kNames), std::end(kNames),
                                  [&](const char* listed_name) { return name == listed_name; });
  if (framework != nullptr) *framework = !listed && name.rfind("sagemaker_", 0) == 0;
  return listed || name.rfind("sagemaker_", 0) == 0;
}

// The decoded hyperparameters of a hyperparameters.json object whose values are texts.
SageMakerJson SageMakerDecodeAll(const SageMakerJson& file) {
  SageMakerJson all = SageMakerObject();
  for (size_t i = 0; i < file.keys.size(); ++i) {
    SageMakerSet(&all, file.keys[i], SageMakerDecode(file.items[i].text));
  }
  return all;
}

// split_by_criteria's `excluded` (the user's hyperparameters) or, with `framework`, the
// additional framework parameters.
SageMakerJson SageMakerSplit(const SageMakerJson& all, bool framework) {
  SageMakerJson part = SageMakerObject();
  for (size_t i = 0; i < all.keys.size(); ++i) {
    bool is_framework = false;
    const bool own = SageMakerOwnName(all.keys[i], &is_framework);
    if (framework ? is_framework : !own) SageMakerSet(&part, all.keys[i], all.items[i]);
  }
  return part;
}

// mapping.to_cmd_args over the user's hyperparameters.
std::vector<std::string> SageMakerCommandArgs(const SageMakerJson& hyperparameters) {
  std::vector<std::string> args;
  for (size_t i : SageMakerSortedMembers(hyperparameters)) {
    const std::string& name = hyperparameters.keys[i];
    const SageMakerJson& value = hyperparameters.items[i];
    args.push_back(name.empty()                        ? ""
                   : SageMakerCodePointCount(name) > 1 ? "--" + name
                                                       : "-" + name);
    if (value.kind == SageMakerKind::kNull) {
      args.emplace_back();
    } else if (value.kind == SageMakerKind::kObject) {
      std::string joined;
      for (size_t j : SageMakerSortedMembers(value)) {
        if (!joined.empty()) joined += ",";
        joined += value.keys[j] + "=" + SageMakerStr(value.items[j]);
      }
      args.push_back(joined);
    } else {
      args.push_back(SageMakerStr(value));
    }
  }
  return args;
}

// The folders environment.py derives from the base folder.
struct SageMakerLayout {
  std::string base, model, input, input_config, input_data, output, output_data,
      output_intermediate, code;
};

SageMakerLayout SageMakerLayoutOf(const std::string& base_dir) {
  std::string base = fs::absolute(fs::path(base_dir)).lexically_normal().string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  SageMakerLayout layout;
  layout.base = base;
  layout.model = base + "/model";
  layout.input = base + "/input";
  layout.input_config = layout.input + "/config";
  layout.input_data = layout.input + "/data";
  layout.output = base + "/output";
  layout.output_data = layout.output + "/data";
  layout.output_intermediate = layout.output + "/intermediate";
  layout.code = base + "/code";
  return layout;
}

Status SageMakerMakeFolders(const SageMakerLayout& layout) {
  for (const std::string* folder :
       {&layout.base, &layout.model, &layout.input_config, &layout.input_data, &layout.output_data,
        &layout.output_intermediate, &layout.code}) {
    std::error_code error;
    fs::create_directories(*folder, error);
    if (error) return Status::Failure("creating " + *folder + ": " + error.message());
  }
  return Status::Ok();
}

// input/data/NAME -> the channel's folder, replacing a link an earlier attempt left.
Status SageMakerLinkChannels(const SageMakerLayout& layout,
                             const std::map<std::string, std::string>& channels) {
  for (const auto& [name, folder] : channels) {
    const std::string link = layout.input_data + "/" + name;
    const std::string target = fs::absolute(fs::path(folder)).lexically_normal().string();
    std::error_code error;
    if (fs::is_symlink(fs::symlink_status(link, error))) fs::remove(link, error);
    error.clear();
    fs::create_directory_symlink(target, link, error);
    if (error) {
      return Status::Failure("linking " + link + " to " + target + ": " + error.message());
    }
  }
  return Status::Ok();
}

Status SageMakerWriteJson(const std::string& path, const SageMakerJson& value) {
  std::string text;
  SageMakerDump(value, &text, /*sort_keys=*/false);
  text += "\n";
  return WriteFileAtomically(path, text.data(), text.size());
}

// hyperparameters.json: the training job's HyperParameters (texts), plus what the SageMaker Python
// SDK adds for script mode (JSON-encoded, as it writes them) where the job does not set it.
SageMakerJson SageMakerHyperparametersFile(const SageMakerTrialInput& input) {
  SageMakerJson file = SageMakerObject();
  for (const auto& [name, value] : input.hyperparameters) {
    SageMakerSet(&file, name, SageMakerString(value));
  }
  const fs::path program(input.program);
  const std::pair<const char*, SageMakerJson> defaults[] = {
      {"sagemaker_program", SageMakerString(program.filename().string())},
      {"sagemaker_submit_directory", SageMakerString(program.parent_path().string())},
      {"sagemaker_container_log_level", SageMakerInteger(20)},
      {"sagemaker_job_name", SageMakerString(input.job_name)}};
  for (const auto& [name, value] : defaults) {
    if (SageMakerFind(file, name) == nullptr) {
      SageMakerSet(&file, name, SageMakerString(SageMakerDumped(value)));
    }
  }
  return file;
}

SageMakerJson SageMakerResourceConfig(const SageMakerTrialInput& input,
                                      const std::vector<std::string>& hosts) {
  SageMakerJson group = SageMakerObject();
  SageMakerSet(&group, "instance_group_name", SageMakerString(kSageMakerGroup));
  SageMakerSet(&group, "instance_type", SageMakerString(kSageMakerInstanceType));
  SageMakerSet(&group, "hosts", SageMakerStringList(hosts));
  SageMakerJson config = SageMakerObject();
  SageMakerSet(&config, "current_host", SageMakerString(hosts[input.current_host]));
  SageMakerSet(&config, "current_instance_type", SageMakerString(kSageMakerInstanceType));
  SageMakerSet(&config, "current_group_name", SageMakerString(kSageMakerGroup));
  SageMakerSet(&config, "hosts", SageMakerStringList(hosts));
  SageMakerSet(&config, "instance_groups", SageMakerArray({group}));
  SageMakerSet(&config, "network_interface_name", SageMakerString(input.network_interface_name));
  return config;
}

SageMakerJson SageMakerInputDataConfig(const std::map<std::string, std::string>& channels) {
  SageMakerJson config = SageMakerObject();
  for (const auto& channel : channels) {
    SageMakerJson entry = SageMakerObject();
    SageMakerSet(&entry, "TrainingInputMode", SageMakerString("File"));
    SageMakerSet(&entry, "S3DistributionType", SageMakerString("FullyReplicated"));
    SageMakerSet(&entry, "RecordWrapperType", SageMakerString("None"));
    SageMakerSet(&config, channel.first, std::move(entry));
  }
  return config;
}

// What Environment.__init__ computes from the files, the toolkit's names in comments.
struct SageMakerFacts {
  SageMakerLayout layout;
  std::vector<std::string> hosts;
  std::string current_host;
  SageMakerJson resource_config, input_data_config;
  SageMakerJson hyperparameters;     // split_by_criteria(...).excluded
  SageMakerJson framework_params;    // additional_framework_parameters
  SageMakerJson channel_input_dirs;  // channel -> input/data/channel
  SageMakerJson user_entry_point;    // hyperparameter sagemaker_program
  SageMakerJson log_level;           // sagemaker_container_log_level, 20 (logging.INFO)
  std::string module_name, module_dir, job_name, sagemaker_job_name;
  SageMakerJson distribution_instance_groups;
  std::vector<std::string> distribution_hosts;
  std::string master_hostname;
  int num_gpus = 0, num_cpus = 1;
};

// distribution_instance_groups: the sagemaker_distribution_instance_groups parameter, else the
// group when one of the distribution flags is set
// (get_distribution_instance_groups_from_resource_config).
SageMakerJson SageMakerDistributionGroups(const SageMakerJson& framework_params) {
  if (const SageMakerJson* given =
          SageMakerFind(framework_params, "sagemaker_distribution_instance_groups")) {
    return *given;
  }
  static const char* const kFlags[] = {"sagemaker_mpi_enabled",
                                       "sagemaker_parameter_server_enabled",
                                       "sagemaker_distributed_dataparallel_enabled",
                                       "sagemaker_pytorch_ddp_enabled",
                                       "sagemaker_pytorch_xla_multi_worker_enabled",
                                       "sagemaker_multi_worker_mirrored_strategy_enabled",
                                       "sagemaker_torch_distributed_enabled"};
  for (const char* flag : kFlags) {
    const SageMakerJson* value = SageMakerFind(framework_params, flag);
    if (value != nullptr && SageMakerTruthy(*value)) return SageMakerStringList({kSageMakerGroup});
  }
  return SageMakerArray();
}

SageMakerFacts SageMakerFactsOf(const SageMakerTrialInput& input, const SageMakerLayout& layout,
                                const SageMakerJson& file, std::vector<std::string> hosts) {
  SageMakerFacts facts;
  facts.layout = layout;
  facts.current_host = hosts[input.current_host];
  facts.resource_config = SageMakerResourceConfig(input, hosts);
  facts.input_data_config = SageMakerInputDataConfig(input.channels);
  const SageMakerJson all = SageMakerDecodeAll(file);
  facts.hyperparameters = SageMakerSplit(all, false);
  facts.framework_params = SageMakerSplit(all, true);
  facts.channel_input_dirs = SageMakerObject();
  for (const auto& channel : input.channels) {
    SageMakerSet(&facts.channel_input_dirs, channel.first,
                 SageMakerString(layout.input_data + "/" + channel.first));
  }
  const SageMakerJson* program = SageMakerFind(all, "sagemaker_program");
  if (program != nullptr) facts.user_entry_point = *program;
  facts.module_name = program != nullptr ? SageMakerStr(*program) : "None";
  if (facts.module_name.size() >= 3 &&
      facts.module_name.compare(facts.module_name.size() - 3, 3, ".py") == 0) {
    facts.module_name.resize(facts.module_name.size() - 3);
  }
  const SageMakerJson* submit = SageMakerFind(all, "sagemaker_submit_directory");
  facts.module_dir = submit != nullptr ? SageMakerStr(*submit) : layout.code;
  const SageMakerJson* level = SageMakerFind(all, "sagemaker_container_log_level");
  facts.log_level = level != nullptr ? *level : SageMakerInteger(20);
  const SageMakerJson* job = SageMakerFind(all, "sagemaker_job_name");
  facts.sagemaker_job_name = job != nullptr ? SageMakerStr(*job) : "";
  facts.job_name = input.job_name;
  facts.distribution_instance_groups = SageMakerDistributionGroups(facts.framework_params);
  if (SageMakerContains(facts.distribution_instance_groups, kSageMakerGroup)) {
    facts.distribution_hosts = hosts;
  }
  facts.master_hostname =
      facts.distribution_hosts.empty() ? hosts.front() : facts.distribution_hosts.front();
  facts.num_gpus = input.num_gpus;
  facts.num_cpus = input.num_cpus;
  facts.hosts = std::move(hosts);
  return facts;
}

SageMakerJson SageMakerInstanceGroupsDict(const SageMakerFacts& facts) {
  SageMakerJson groups = SageMakerObject();
  SageMakerSet(&groups, kSageMakerGroup,
               SageMakerFind(facts.resource_config, "instance_groups")->items.front());
  return groups;
}

// dict(Environment()): every property, as SM_TRAINING_ENV holds it.
SageMakerJson SageMakerTrainingEnv(const SageMakerFacts& facts) {
  const SageMakerJson hosts = SageMakerStringList(facts.hosts);
  const SageMakerJson none;
  SageMakerJson env = SageMakerObject();
  const auto set = [&env](const char* key, SageMakerJson value) {
    SageMakerSet(&env, key, std::move(value));
  };
  set("additional_framework_parameters", facts.framework_params);
  set("channel_input_dirs", facts.channel_input_dirs);
  set("current_host", SageMakerString(facts.current_host));
  set("current_instance_group", SageMakerString(kSageMakerGroup));
  set("current_instance_group_hosts", hosts);
  set("current_instance_type", SageMakerString(kSageMakerInstanceType));
  set("distribution_hosts", SageMakerStringList(facts.distribution_hosts));
  set("distribution_instance_groups", facts.distribution_instance_groups);
  set("framework_module", none);  // SAGEMAKER_TRAINING_MODULE, unset
  set("hosts", hosts);
  set("hyperparameters", facts.hyperparameters);
  set("input_config_dir", SageMakerString(facts.layout.input_config));
  set("input_data_config", facts.input_data_config);
  set("input_dir", SageMakerString(facts.layout.input));
  set("instance_groups", SageMakerStringList({kSageMakerGroup}));
  set("instance_groups_dict", SageMakerInstanceGroupsDict(facts));
  set("is_hetero", SageMakerBoolean(false));
  set("is_master", SageMakerBoolean(facts.current_host == facts.master_hostname));
  set("is_modelparallel_enabled", none);  // SM_HP_MP_PARAMETERS unset in the toolkit's process
  set("is_smddpmprun_installed", SageMakerBoolean(false));
  set("is_smddprun_installed", SageMakerBoolean(false));
  set("job_name", SageMakerString(facts.job_name));
  set("log_level", facts.log_level);
  set("master_hostname", SageMakerString(facts.master_hostname));
  set("model_dir", SageMakerString(facts.layout.model));
  set("module_dir", SageMakerString(facts.module_dir));
  set("module_name", SageMakerString(facts.module_name));
  set("network_interface_name", *SageMakerFind(facts.resource_config, "network_interface_name"));
  set("num_cpus", SageMakerInteger(facts.num_cpus));
  set("num_gpus", SageMakerInteger(facts.num_gpus));
  set("num_neurons", SageMakerInteger(0));
  set("output_data_dir", SageMakerString(facts.layout.output_data));
  set("output_dir", SageMakerString(facts.layout.output));
  set("output_intermediate_dir", SageMakerString(facts.layout.output_intermediate));
  set("resource_config", facts.resource_config);
  set("topology", SageMakerArray());
  set("user_entry_point", facts.user_entry_point);
  return env;
}

// Environment.to_env_vars() through mapping.to_env_vars: "SM_" + KEY upper-cased, a later key
// replacing an earlier one that upper-cases the same.
std::map<std::string, std::string> SageMakerEnvVars(const SageMakerFacts& facts) {
  const SageMakerJson training_env = SageMakerTrainingEnv(facts);
  std::vector<std::string> channels = facts.channel_input_dirs.keys;
  std::sort(channels.begin(), channels.end());
  SageMakerJson env = SageMakerObject();
  const auto copy = [&](const char* key, const char* property) {
    SageMakerSet(&env, key, *SageMakerFind(training_env, property));
  };
  copy("hosts", "hosts");
  copy("network_interface_name", "network_interface_name");
  copy("hps", "hyperparameters");
  copy("user_entry_point", "user_entry_point");
  copy("framework_params", "additional_framework_parameters");
  for (const char* key : {"resource_config", "input_data_config", "output_data_dir"})
    copy(key, key);
  SageMakerSet(&env, "channels", SageMakerStringList(channels));
  for (const char* key : {"current_host", "current_instance_type", "current_instance_group",
                          "current_instance_group_hosts", "instance_groups", "instance_groups_dict",
                          "distribution_instance_groups", "is_hetero", "module_name", "log_level",
                          "framework_module", "input_dir", "input_config_dir", "output_dir",
                          "num_cpus", "num_gpus", "num_neurons", "model_dir", "module_dir"}) {
    copy(key, key);
  }
  SageMakerSet(&env, "training_env", training_env);
  SageMakerSet(&env, "user_args", SageMakerStringList(SageMakerCommandArgs(facts.hyperparameters)));
  copy("output_intermediate_dir", "output_intermediate_dir");
  for (size_t i = 0; i < facts.channel_input_dirs.keys.size(); ++i) {
    SageMakerSet(&env, "channel_" + facts.channel_input_dirs.keys[i],
                 facts.channel_input_dirs.items[i]);
  }
  for (size_t i = 0; i < facts.hyperparameters.keys.size(); ++i) {
    SageMakerSet(&env, "hp_" + facts.hyperparameters.keys[i], facts.hyperparameters.items[i]);
  }
  std::map<std::string, std::string> variables;
  for (size_t i = 0; i < env.keys.size(); ++i) {
    std::string name = "SM_" + env.keys[i];
    for (char& c : name) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    variables[name] = SageMakerEnvValue(env.items[i]);
  }
  return variables;
}

Status SageMakerCheckInput(const SageMakerTrialInput& input) {
  if (input.hosts < 1) {
    return Status::BadInput("SageMaker trial: hosts must be at least 1, not " +
                            std::to_string(input.hosts));
  }
  if (input.current_host < 0 || input.current_host >= input.hosts) {
    return Status::BadInput("SageMaker trial: current_host " + std::to_string(input.current_host) +
                            " is not one of the " + std::to_string(input.hosts) + " hosts");
  }
  for (const auto& channel : input.channels) {
    const std::string& name = channel.first;
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      return Status::BadInput("SageMaker trial: channel name \"" + name +
                              "\" is not a folder name");
    }
  }
  return Status::Ok();
}

}  // namespace

Status PrepareSageMakerTrial(const SageMakerTrialInput& input,
                             std::vector<std::pair<std::string, std::string>>* environment) {
  HPO_RETURN_IF_ERROR(SageMakerCheckInput(input));
  const SageMakerLayout layout = SageMakerLayoutOf(input.base_dir);
  HPO_RETURN_IF_ERROR(SageMakerMakeFolders(layout));
  HPO_RETURN_IF_ERROR(SageMakerLinkChannels(layout, input.channels));
  std::vector<std::string> hosts;
  for (int i = 1; i <= input.hosts; ++i) hosts.push_back("algo-" + std::to_string(i));
  const SageMakerJson file = SageMakerHyperparametersFile(input);
  const SageMakerFacts facts = SageMakerFactsOf(input, layout, file, hosts);
  HPO_RETURN_IF_ERROR(SageMakerWriteJson(layout.input_config + "/hyperparameters.json", file));
  HPO_RETURN_IF_ERROR(
      SageMakerWriteJson(layout.input_config + "/resourceconfig.json", facts.resource_config));
  HPO_RETURN_IF_ERROR(
      SageMakerWriteJson(layout.input_config + "/inputdataconfig.json", facts.input_data_config));
  std::map<std::string, std::string> variables = SageMakerEnvVars(facts);
  variables["SAGEMAKER_BASE_DIR"] = layout.base;
  variables["TRAINING_JOB_NAME"] = input.job_name;
  variables["CURRENT_HOST"] = facts.current_host;
  variables["SAGEMAKER_JOB_NAME"] = facts.sagemaker_job_name;
  for (const auto& [name, value] : variables) {
    if (value.find('\0') != std::string::npos) {
      return Status::BadInput("SageMaker trial: " + name +
                              " would hold a NUL character (from a hyperparameter's value), "
                              "which no environment variable can carry");
    }
  }
  environment->assign(variables.begin(), variables.end());
  return Status::Ok();
}

std::vector<std::string> SageMakerUserArgs(
    const std::vector<std::pair<std::string, std::string>>& hyperparameters) {
  SageMakerJson file = SageMakerObject();
  for (const auto& [name, value] : hyperparameters) {
    SageMakerSet(&file, name, SageMakerString(value));
  }
  return SageMakerCommandArgs(SageMakerSplit(SageMakerDecodeAll(file), false));
}

}  // namespace hpo
