// Private to hpo_core: lists as messages show them ("a, b, c").
#pragma once

#include <string>
#include <vector>

namespace hpo {

// ITEMS separated by ", "; empty for none.
inline std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

}  // namespace hpo
