#include "yaml_fields.hpp"
#include <algorithm>

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>

#include "hpo/param.hpp"

namespace hpo::config_internal {

namespace {

constexpr const char* kStringTag = "tag:yaml.org,2002:str";

bool IsOneOf(std::string_view text, std::initializer_list<std::string_view> options) {
  for (std::string_view option : options) {
    if (text == option) return true;
  }
  return false;
}

bool AllOf(std::string_view text, bool (*predicate)(char)) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!predicate(c)) return false;
  }
  return true;
}

bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }
bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }
bool IsHexDigit(char c) {
  return IsDecimalDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Matches the YAML 1.2 core schema float pattern
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? (integers included).
bool IsDecimalNumber(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t integer_digits = 0;
  while (i < text.size() && IsDecimalDigit(text[i])) ++i, ++integer_digits;
  size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDecimalDigit(text[i])) ++i, ++fraction_digits;
  }
  if (integer_digits == 0 && fraction_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exponent_digits = 0;
    while (i < text.size() && IsDecimalDigit(text[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == text.size();
}

bool IsSpecialFloat(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) text.remove_prefix(1);
  return IsOneOf(text, {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"});
}

// Splits an integer literal into sign, base and digits; false when `text` is not one
// ([-+]?[0-9]+, 0x[0-9a-fA-F]+, 0o[0-7]+).
bool SplitInteger(std::string_view text, bool* negative, int* base, std::string_view* digits) {
  *negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    *negative = text[0] == '-';
    text.remove_prefix(1);
  }
  *base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'o')) {
    *base = text[1] == 'x' ? 16 : 8;
    text.remove_prefix(2);
  }
  *digits = text;
  return *base == 16  ? AllOf(text, IsHexDigit)
         : *base == 8 ? AllOf(text, IsOctalDigit)
                      : AllOf(text, IsDecimalDigit);
}

bool IsIntegerSyntax(std::string_view text) {
  bool negative = false;
  int base = 10;
  std::string_view digits;
  return SplitInteger(text, &negative, &base, &digits);
}

}  // namespace

bool ParseIntegerScalar(const std::string& text, int64_t* value) {
  bool negative = false;
  int base = 10;
  std::string_view digits;
  if (!SplitInteger(text, &negative, &base, &digits)) return false;
  uint64_t magnitude = 0;
  auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (error != std::errc() || end != digits.data() + digits.size()) return false;
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > limit + (negative ? 1 : 0)) return false;
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool ParseNumberScalar(const std::string& text, double* value) {
  int64_t integer = 0;
  if (ParseIntegerScalar(text, &integer)) {
    *value = static_cast<double>(integer);
    return true;
  }
  if (IsSpecialFloat(text)) {
    const bool negative = text[0] == '-';
    if (text.find_first_of("nN") != std::string::npos) {
      *value = std::numeric_limits<double>::quiet_NaN();
    } else {
      *value = negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    }
    return true;
  }
  if (!IsDecimalNumber(text)) return false;
  std::string_view number = text;
  if (number[0] == '+') number.remove_prefix(1);
  // from_chars is locale-independent, unlike strtod; it fails on overflow and underflow.
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), *value);
  return error == std::errc() && end == number.data() + number.size();
}

ScalarKind ResolveScalar(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == kStringTag) return ScalarKind::kString;
  const std::string& text = node.Scalar();
  if (IsOneOf(text, {"", "~", "null", "Null", "NULL"})) return ScalarKind::kNull;
  if (IsOneOf(text, {"true", "True", "TRUE", "false", "False", "FALSE"})) return ScalarKind::kBool;
  if (IsIntegerSyntax(text)) return ScalarKind::kInt;
  if (IsSpecialFloat(text) || IsDecimalNumber(text)) return ScalarKind::kFloat;
  return ScalarKind::kString;
}

int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

Status ErrorFormatter::At(int line, const std::string& path, const std::string& what) const {
  std::string message = file_ + ":" + std::to_string(line) + ": ";
  message += path.empty() ? std::string("(top level)") : path;
  message += ": " + what;
  return Status::BadInput(std::move(message));
}

Status MappingFields::Read(const ErrorFormatter& errors, const Field& owner,
                           MappingFields* fields) {
  fields->errors_ = &errors;
  fields->owner_ = owner;
  fields->fields_.clear();
  if (!owner.value.IsMap()) return errors.At(owner, "must be a mapping of keys to values");
  std::set<std::string> seen;
  for (auto it = owner.value.begin(); it != owner.value.end(); ++it) {
    Field field;
    field.line = LineOf(it->first);
    if (!it->first.IsScalar()) {
      return errors.At(field.line, owner.path, "keys must be plain strings");
    }
    field.key = it->first.Scalar();
    field.path = fields->PathOf(field.key);
    field.value = it->second;
    if (!seen.insert(field.key).second) return errors.At(field, "duplicate key");
    fields->fields_.push_back(std::move(field));
  }
  return Status::Ok();
}

const Field* MappingFields::Find(const std::string& key) const {
  for (const Field& field : fields_) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

std::string MappingFields::PathOf(const std::string& key) const {
  return owner_.path.empty() ? key : owner_.path + "." + key;
}

Status MappingFields::Missing(const std::string& key, const std::string& why) const {
  return errors_->At(owner_.line, PathOf(key),
                     "missing required key" + (why.empty() ? std::string() : " (" + why + ")"));
}

Status MappingFields::CheckKeys(const std::vector<std::string>& known,
                                const std::vector<std::string>& unsupported) const {
  auto contains = [](const std::vector<std::string>& keys, const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  for (const Field& field : fields_) {
    if (contains(known, field.key)) continue;
    if (contains(unsupported, field.key)) return errors_->At(field, "not supported yet");
    std::string accepted;
    for (const std::string& candidate : known) {
      accepted += accepted.empty() ? "" : ", ";
      accepted += candidate;
    }
    return errors_->At(field, "unknown key (accepted keys: " + accepted + ")");
  }
  return Status::Ok();
}

std::string DescribeValue(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

Status ReadString(const ErrorFormatter& errors, const Field& field, std::string* value) {
  if (!field.value.IsScalar() || ResolveScalar(field.value) == ScalarKind::kNull) {
    const bool null = field.value.IsScalar() || field.value.IsNull();
    return errors.At(field, "must be a string, got " +
                                (null ? std::string("nothing") : DescribeValue(field.value)));
  }
  *value = field.value.Scalar();
  return Status::Ok();
}

Status ReadInteger(const ErrorFormatter& errors, const Field& field, int64_t minimum,
                   int64_t maximum, int64_t* value) {
  if (!field.value.IsScalar()) {
    return errors.At(field, "must be an integer, got " + DescribeValue(field.value));
  }
  const std::string& text = field.value.Scalar();
  if (ResolveScalar(field.value) != ScalarKind::kInt) {
    return errors.At(field, "must be an integer, got '" + text + "'");
  }
  if (!ParseIntegerScalar(text, value)) {
    return errors.At(field, "'" + text + "' is out of range for a 64-bit integer");
  }
  if (*value < minimum || *value > maximum) {
    std::string range;
    if (maximum == std::numeric_limits<int64_t>::max()) {
      range = "must be >= " + std::to_string(minimum);
    } else {
      range = "must be in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
    }
    return errors.At(field, range + ", got " + std::to_string(*value));
  }
  return Status::Ok();
}

Status ReadFiniteNumber(const ErrorFormatter& errors, const Field& field, double* value,
                        bool* is_integer) {
  if (!field.value.IsScalar()) {
    return errors.At(field, "must be a number, got " + DescribeValue(field.value));
  }
  const std::string& text = field.value.Scalar();
  const ScalarKind kind = ResolveScalar(field.value);
  if (kind != ScalarKind::kInt && kind != ScalarKind::kFloat) {
    return errors.At(field, "must be a number, got '" + text + "'");
  }
  if (!ParseNumberScalar(text, value)) {
    return errors.At(field, "'" + text + "' is out of range for a 64-bit float");
  }
  if (!std::isfinite(*value))
    return errors.At(field, "must be a finite number, got '" + text + "'");
  if (is_integer != nullptr) *is_integer = kind == ScalarKind::kInt;
  return Status::Ok();
}

std::string FormatNumber(double value) { return FormatParamValueExact(ParamValue(value)); }

}  // namespace hpo::config_internal
