// Private to hpo_core: counts as people read them in progress lines ("1 trial", "3 trials").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hpo {

// The noun is given in the singular and takes an "s" for any count but 1.
inline std::string CountOf(size_t count, std::string_view noun) {
  std::string text = std::to_string(count) + ' ';
  text += noun;
  if (count != 1) text += 's';
  return text;
}

// The trials that go on from their checkpoints on resume: "1 to continue from its checkpoint",
// "3 to continue from their checkpoints".
inline std::string ToContinueFromCheckpoints(size_t count) {
  return std::to_string(count) +
         (count == 1 ? " to continue from its checkpoint" : " to continue from their checkpoints");
}

}  // namespace hpo
