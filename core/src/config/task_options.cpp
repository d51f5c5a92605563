#include <string>

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

}  // namespace hpo
