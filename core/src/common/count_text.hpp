// Private to hpo_core: a count and its noun as people read them in progress lines ("1 trial",
// "3 trials"): the noun is given in the singular and takes an "s" for any count but 1.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hpo {

inline std::string CountOf(size_t count, std::string_view noun) {
  std::string text = std::to_string(count) + ' ';
  text += noun;
  if (count != 1) text += 's';
  return text;
}

}  // namespace hpo
