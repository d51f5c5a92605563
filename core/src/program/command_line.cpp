#include "program/command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace hpo {

namespace {

enum class Macro {
  kEnv,
  kInterpreter,
  kProgram,
  kArgs,
  kArgsNoHyphens,
  kArgsNoEquals,
  kArgsNoBooleanFlags,
  kArgsJson,
  kArgsJsonFile,
};

struct MacroName {
  std::string_view name;
  Macro macro;
};

// In the order the error message lists them.
constexpr MacroName kMacros[] = {
    {"env", Macro::kEnv},
    {"interpreter", Macro::kInterpreter},
    {"program", Macro::kProgram},
    {"args", Macro::kArgs},
    {"args_no_hyphens", Macro::kArgsNoHyphens},
    {"args_no_equals", Macro::kArgsNoEquals},
    {"args_no_boolean_flags", Macro::kArgsNoBooleanFlags},
    {"args_json", Macro::kArgsJson},
    {"args_json_file", Macro::kArgsJsonFile},
};

constexpr std::string_view kEnvVarPrefix = "${envvar:";
constexpr std::string_view kParamPrefix = "${param:";

// W&B's test for a whole-element macro: c.startswith("${") and c.endswith("}").
bool IsMacroElement(std::string_view element) {
  return element.size() >= 3 && element.substr(0, 2) == "${" && element.back() == '}';
}

// The macro that the whole-element macro `element` names; nullopt when unknown. Precondition:
// IsMacroElement(element).
std::optional<Macro> FindMacro(std::string_view element) {
  const std::string_view name = element.substr(2, element.size() - 3);
  for (const MacroName& entry : kMacros) {
    if (entry.name == name) return entry.macro;
  }
  return std::nullopt;
}

// [A-Z0-9_]: the characters of a NAME in ${envvar:NAME}.
bool IsEnvVarNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The length of the match of \$\{envvar\:([A-Z0-9_]*)\} at `pos`, or 0 when there is none.
size_t EnvVarReferenceLength(std::string_view text, size_t pos) {
  if (text.substr(pos, kEnvVarPrefix.size()) != kEnvVarPrefix) return 0;
  size_t end = pos + kEnvVarPrefix.size();
  while (end < text.size() && IsEnvVarNameChar(text[end])) ++end;
  if (end == text.size() || text[end] != '}') return 0;
  return end + 1 - pos;
}

// Whether `text` contains a ${envvar:NAME} reference.
bool HasEnvVarReference(std::string_view text) {
  for (size_t pos = text.find(kEnvVarPrefix); pos != std::string_view::npos;
       pos = text.find(kEnvVarPrefix, pos + 1)) {
    if (EnvVarReferenceLength(text, pos) > 0) return true;
  }
  return false;
}

// The length of a ${param:NAME} reference at `pos` (NAME: any characters but '}'), or 0.
size_t ParamReferenceLength(std::string_view text, size_t pos) {
  if (text.substr(pos, kParamPrefix.size()) != kParamPrefix) return 0;
  const size_t end = text.find('}', pos + kParamPrefix.size());
  if (end == std::string_view::npos || end == pos + kParamPrefix.size()) return 0;
  return end + 1 - pos;
}

bool HasParamReference(std::string_view text) {
  for (size_t pos = text.find(kParamPrefix); pos != std::string_view::npos;
       pos = text.find(kParamPrefix, pos + 1)) {
    if (ParamReferenceLength(text, pos) > 0) return true;
  }
  return false;
}

// Whether `element` holds a ${param:NAME} whose NAME is one of `names`.
bool ReferencesAnyParam(std::string_view element, const std::set<std::string>& names) {
  for (size_t pos = element.find(kParamPrefix); pos != std::string_view::npos;
       pos = element.find(kParamPrefix, pos + 1)) {
    const size_t length = ParamReferenceLength(element, pos);
    if (length > 0 && names.count(std::string(element.substr(
                          pos + kParamPrefix.size(), length - kParamPrefix.size() - 1))) != 0) {
      return true;
    }
  }
  return false;
}

// Every ${param:NAME} whose NAME is one of `args` becomes PythonStr of its value; others stay.
std::string SubstituteParams(const std::string& element, const std::vector<CommandArg>& args) {
  std::string result;
  size_t copied = 0;
  for (size_t pos = element.find(kParamPrefix); pos != std::string::npos;
       pos = element.find(kParamPrefix, pos)) {
    const size_t length = ParamReferenceLength(element, pos);
    const std::string name =
        length == 0 ? std::string()
                    : element.substr(pos + kParamPrefix.size(), length - kParamPrefix.size() - 1);
    const auto arg = std::find_if(args.begin(), args.end(),
                                  [&name](const CommandArg& a) { return a.name == name; });
    if (length == 0 || arg == args.end()) {
      ++pos;
      continue;
    }
    result.append(element, copied, pos - copied);
    result += PythonStr(*arg);
    pos += length;
    copied = pos;
  }
  result.append(element, copied, std::string::npos);
  return result;
}

// std::getenv in CommandContext::getenv's shape.
std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// W&B's create_sweep_command for one element: every reference becomes the variable's value, or
// its name when unset; the values are not scanned again.
std::string SubstituteEnvVars(const std::string& element, const CommandContext& context) {
  std::string result;
  size_t copied = 0;
  for (size_t pos = element.find(kEnvVarPrefix); pos != std::string::npos;
       pos = element.find(kEnvVarPrefix, pos)) {
    const size_t length = EnvVarReferenceLength(element, pos);
    if (length == 0) {
      ++pos;
      continue;
    }
    const std::string name =
        element.substr(pos + kEnvVarPrefix.size(), length - kEnvVarPrefix.size() - 1);
    const std::optional<std::string> value =
        context.getenv ? context.getenv(name) : ProcessEnv(name);
    result.append(element, copied, pos - copied);
    result += value.value_or(name);
    pos += length;
    copied = pos;
  }
  result.append(element, copied, std::string::npos);
  return result;
}

// Whether the boolean `arg` is true: it holds the string "true".
bool IsTrue(const CommandArg& arg) {
  const auto* text = std::get_if<std::string>(&arg.value);
  return text != nullptr && *text == "true";
}

// Appends the JSON escape \uxxxx (lowercase hex) of a UTF-16 code unit.
void AppendHex4(uint32_t unit, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) *out += kHex[(unit >> shift) & 0xF];
}

// Decodes the UTF-8 sequence at `pos` into `code_point` and returns its length. An invalid
// sequence is U+FFFD and consumes what Python's errors="replace" does: the longest prefix of a
// valid sequence there, at least one byte.
size_t DecodeUtf8(std::string_view text, size_t pos, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  size_t length;
  uint32_t value;
  unsigned char second_low = 0x80;   // the second byte's range excludes overlong forms,
  unsigned char second_high = 0xBF;  // surrogates and code points above U+10FFFF
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0F;
    if (lead == 0xE0) second_low = 0xA0;
    if (lead == 0xED) second_high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07;
    if (lead == 0xF0) second_low = 0x90;
    if (lead == 0xF4) second_high = 0x8F;
  } else {
    *code_point = 0xFFFD;
    return 1;
  }
  for (size_t i = 1; i < length; ++i) {
    const unsigned char low = i == 1 ? second_low : 0x80;
    const unsigned char high = i == 1 ? second_high : 0xBF;
    if (pos + i == text.size() || byte(pos + i) < low || byte(pos + i) > high) {
      *code_point = 0xFFFD;
      return i;
    }
    value = (value << 6) | (byte(pos + i) & 0x3F);
  }
  *code_point = value;
  return length;
}

// json.dumps of a str with ensure_ascii (Python's py_encode_basestring_ascii).
void AppendJsonString(std::string_view text, std::string* out) {
  *out += '"';
  for (size_t pos = 0; pos < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) {
      ++pos;
      switch (c) {
        case '"':
          *out += "\\\"";
          break;
        case '\\':
          *out += "\\\\";
          break;
        case '\n':
          *out += "\\n";
          break;
        case '\r':
          *out += "\\r";
          break;
        case '\t':
          *out += "\\t";
          break;
        case '\b':
          *out += "\\b";
          break;
        case '\f':
          *out += "\\f";
          break;
        default:
          if (c >= ' ' && c <= '~') {
            *out += static_cast<char>(c);
          } else {
            AppendHex4(c, out);
          }
      }
      continue;
    }
    uint32_t code_point;
    pos += DecodeUtf8(text, pos, &code_point);
    if (code_point < 0x10000) {
      AppendHex4(code_point, out);
    } else {
      const uint32_t offset = code_point - 0x10000;
      AppendHex4(0xD800 | (offset >> 10), out);
      AppendHex4(0xDC00 | (offset & 0x3FF), out);
    }
  }
  *out += '"';
}

// json.dumps of the value: Python's JSON spelling of int, float, bool and str.
void AppendJsonValue(const CommandArg& arg, std::string* out) {
  if (arg.boolean) {
    *out += IsTrue(arg) ? "true" : "false";
  } else if (const auto* i = std::get_if<int64_t>(&arg.value)) {
    *out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&arg.value)) {
    if (std::isnan(*d)) {
      *out += "NaN";
    } else if (std::isinf(*d)) {
      *out += *d < 0 ? "-Infinity" : "Infinity";
    } else {
      *out += PythonFloatRepr(*d);
    }
  } else {
    AppendJsonString(std::get<std::string>(arg.value), out);
  }
}

// Appends the elements that `macro` becomes for a trial with `args`.
void AppendMacro(Macro macro, const std::vector<CommandArg>& args, const CommandContext& context,
                 std::vector<std::string>* out) {
  switch (macro) {
    case Macro::kEnv:
      out->push_back("/usr/bin/env");
      return;
    case Macro::kInterpreter:
      out->push_back(context.interpreter);
      return;
    case Macro::kProgram:
      out->push_back(context.program);
      return;
    case Macro::kArgs:
      for (const CommandArg& arg : args) out->push_back("--" + arg.name + "=" + PythonStr(arg));
      return;
    case Macro::kArgsNoHyphens:
      for (const CommandArg& arg : args) out->push_back(arg.name + "=" + PythonStr(arg));
      return;
    case Macro::kArgsNoEquals:
      for (const CommandArg& arg : args) {
        out->push_back("--" + arg.name);
        out->push_back(PythonStr(arg));
      }
      return;
    case Macro::kArgsNoBooleanFlags:
      for (const CommandArg& arg : args) {
        if (!arg.boolean) {
          out->push_back("--" + arg.name + "=" + PythonStr(arg));
        } else if (IsTrue(arg)) {
          out->push_back("--" + arg.name);
        }
      }
      return;
    case Macro::kArgsJson:
      out->push_back(PythonJsonDumps(args));
      return;
    case Macro::kArgsJsonFile:
      out->push_back(context.args_json_file);
      return;
  }
}

// W&B's `command or DEFAULT_SWEEP_COMMAND`.
const std::vector<std::string>& TemplateOrDefault(const std::vector<std::string>& command) {
  return command.empty() ? DefaultCommandTemplate() : command;
}

}  // namespace

std::string PythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest round-trip digits as [-]d[.ddd]e(+|-)xx.
  char buffer[64];
  const std::to_chars_result converted =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string_view text(buffer, converted.ptr - buffer);
  std::string result;
  if (text.front() == '-') {
    result += '-';
    text.remove_prefix(1);
  }
  const size_t e = text.find('e');
  std::string digits(1, text[0]);
  if (e > 1) digits.append(text.substr(2, e - 2));
  int exponent = 0;
  std::from_chars(text.data() + e + 2, text.data() + text.size(), exponent);
  if (text[e + 1] == '-') exponent = -exponent;

  if (exponent < -4 || exponent >= 16) {
    result += digits[0];
    if (digits.size() > 1) result.append(".").append(digits, 1, std::string::npos);
    result += exponent < 0 ? "e-" : "e+";
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) result += '0';
    result += std::to_string(magnitude);
  } else if (exponent < 0) {
    result.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
  } else {
    const size_t integer_digits = static_cast<size_t>(exponent) + 1;
    if (digits.size() > integer_digits) {
      result.append(digits, 0, integer_digits).append(".").append(digits, integer_digits);
    } else {
      result.append(digits).append(integer_digits - digits.size(), '0').append(".0");
    }
  }
  return result;
}

std::string PythonStr(const CommandArg& arg) {
  if (arg.boolean) return IsTrue(arg) ? "True" : "False";
  if (const auto* i = std::get_if<int64_t>(&arg.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&arg.value)) return PythonFloatRepr(*d);
  return std::get<std::string>(arg.value);
}

std::string ExpandParamReferences(const std::string& text, const std::vector<CommandArg>& args) {
  return SubstituteParams(text, args);
}

std::string PythonJsonValue(const CommandArg& arg) {
  std::string out;
  AppendJsonValue(arg, &out);
  return out;
}

std::string PythonJsonString(std::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

std::string PythonJsonDumps(const std::vector<CommandArg>& args) {
  std::string out = "{";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ", ";
    AppendJsonString(args[i].name, &out);
    out += ": ";
    AppendJsonValue(args[i], &out);
  }
  out += '}';
  return out;
}

const std::vector<std::string>& DefaultCommandTemplate() {
  static const std::vector<std::string> kDefault = {"${env}", "${interpreter}", "${program}",
                                                    "${args}"};
  return kDefault;
}

Status CheckCommandTemplate(const std::vector<std::string>& command) {
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& element = command[i];
    if (!IsMacroElement(element) || HasEnvVarReference(element) || HasParamReference(element) ||
        FindMacro(element)) {
      continue;
    }
    std::string known;
    for (const MacroName& entry : kMacros) {
      known.append("${").append(entry.name).append("}, ");
    }
    known += "${envvar:NAME}, ${param:NAME}";
    return Status::BadInput("command[" + std::to_string(i) + "]: unknown macro '" + element +
                            "' (known: " + known + ")");
  }
  return Status::Ok();
}

std::vector<std::string> ExpandCommand(const std::vector<std::string>& command,
                                       const std::vector<CommandArg>& args,
                                       const CommandContext& context) {
  std::vector<std::string> argv;
  for (const std::string& element : TemplateOrDefault(command)) {
    const bool has_params = HasParamReference(element);
    if (has_params && ReferencesAnyParam(element, context.absent_parameters)) continue;
    std::string text = SubstituteEnvVars(element, context);
    if (has_params) text = SubstituteParams(text, args);
    if (has_params || !IsMacroElement(text)) {
      argv.push_back(std::move(text));
    } else if (const std::optional<Macro> macro = FindMacro(text)) {
      AppendMacro(*macro, args, context, &argv);
    }
  }
  return argv;
}

bool UsesArgsJsonFile(const std::vector<std::string>& command) {
  for (const std::string& element : command) {
    if (element == "${args_json_file}") return true;
  }
  return false;
}

}  // namespace hpo
