#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/list_text.hpp"
#include "config/yaml_fields.hpp"
#include "hpo/config.hpp"

namespace hpo {

const TaskOption* TaskOptions::Find(const std::string& key) const {
  const auto found = values.find(key);
  return found == values.end() ? nullptr : &found->second;
}

std::string TaskOptions::Get(const std::string& key, const std::string& fallback) const {
  const TaskOption* option = Find(key);
  return option != nullptr ? option->value : fallback;
}

Status TaskOptions::Error(const std::string& key, const std::string& message) const {
  const TaskOption* option = Find(key);
  const std::string where =
      option != nullptr && option->line > 0 ? file + ":" + std::to_string(option->line) : file;
  return Status::BadInput(where + ": " + key + ": " + message);
}

Status TaskOptions::GetInteger(const std::string& key, int64_t minimum, int64_t maximum,
                               int64_t fallback, int64_t* value) const {
  const TaskOption* option = Find(key);
  if (option == nullptr) {
    *value = fallback;
    return Status::Ok();
  }
  if (!config_internal::ParseIntegerScalar(option->value, value)) {
    return Error(key, "must be an integer, got '" + option->value + "'");
  }
  if (*value < minimum || *value > maximum) {
    const std::string range =
        maximum == std::numeric_limits<int64_t>::max()
            ? "must be >= " + std::to_string(minimum)
            : "must be in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
    return Error(key, range + ", got " + std::to_string(*value));
  }
  return Status::Ok();
}

Status TaskOptions::GetNumber(const std::string& key, double minimum, double fallback,
                              double* value) const {
  const TaskOption* option = Find(key);
  if (option == nullptr) {
    *value = fallback;
    return Status::Ok();
  }
  if (!config_internal::ParseNumberScalar(option->value, value) || !std::isfinite(*value)) {
    return Error(key, "must be a finite number, got '" + option->value + "'");
  }
  if (*value < minimum) {
    return Error(key, "must be >= " + config_internal::FormatNumber(minimum) + ", got " +
                          config_internal::FormatNumber(*value));
  }
  return Status::Ok();
}

Status TaskOptions::CheckSection(const std::string& section,
                                 const std::vector<std::string>& accepted) const {
  const std::string listed = Join(accepted);
  if (Find(section) != nullptr) return Error(section, "must be a mapping of " + listed);
  const std::string prefix = section + ".";
  for (const auto& [key, option] : values) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string name = key.substr(prefix.size());
    if (std::find(accepted.begin(), accepted.end(), name) == accepted.end())
      return Error(key, "unknown key (accepted: " + listed + ")");
  }
  return Status::Ok();
}

}  // namespace hpo
