#include "hpo/param.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace hpo {

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kInt:
      return "int";
    case ParamType::kFloat:
      return "float";
    case ParamType::kString:
      return "string";
  }
  return "unknown";
}

namespace {

std::string FormatDouble(double value, int precision) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
  return buffer;
}

}  // namespace

std::string FormatParamValue(const ParamValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return FormatDouble(*d, 6);
  return std::get<std::string>(value);
}

std::string FormatParamValueExact(const ParamValue& value) {
  const auto* d = std::get_if<double>(&value);
  if (d == nullptr) return FormatParamValue(value);
  for (int precision = 6; precision < 17; ++precision) {
    std::string text = FormatDouble(*d, precision);
    if (std::strtod(text.c_str(), nullptr) == *d) return text;
  }
  return FormatDouble(*d, 17);
}

const ParamValue* FindParam(const Assignment& assignment, std::string_view name) {
  for (const NamedValue& entry : assignment) {
    if (entry.name == name) return &entry.value;
  }
  return nullptr;
}

double ParamAsDouble(const ParamValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace hpo
