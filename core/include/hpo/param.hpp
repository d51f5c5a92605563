// Hyperparameter values and assignments: the torch-free vocabulary shared by the config, the
// searchers, the coordinator, the study file and the trainers. Plain value types; thread-safe as
// values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hpo {

// The type of a hyperparameter's values, fixed per parameter when the config is parsed.
enum class ParamType { kInt, kFloat, kString };

// One hyperparameter value. The alternative held always matches the parameter's ParamType.
using ParamValue = std::variant<int64_t, double, std::string>;

struct NamedValue {
  std::string name;
  ParamValue value;
};

// The hyperparameters of one trial, in the order the config lists them.
using Assignment = std::vector<NamedValue>;

const char* ParamTypeName(ParamType type);

// Human and CSV friendly text: integers as integers, floats with up to 6 significant digits
// (shortest round trip form via FormatParamValueExact), strings verbatim.
std::string FormatParamValue(const ParamValue& value);
// Shortest text that parses back to the same double (for CSV/JSON output and messages).
std::string FormatParamValueExact(const ParamValue& value);

// Returns the value named `name`, or nullptr when the assignment has none.
const ParamValue* FindParam(const Assignment& assignment, std::string_view name);

// Numeric view of a value: int64 and double as double; nullptr-like NaN for strings.
double ParamAsDouble(const ParamValue& value);

}  // namespace hpo
