#include "program/user_regex.hpp"

#include <algorithm>
#include <cctype>

namespace hpo {
namespace {

// The number written as the digits starting at `at` (at most kMaxRegexNumber + 1: a larger one
// is not read on), and `*end` past them.
long ReadNumber(const std::string& pattern, size_t at, size_t* end) {
  long number = 0;
  for (*end = at; *end < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[*end]));
       ++*end) {
    if (number <= kMaxRegexNumber) number = number * 10 + (pattern[*end] - '0');
  }
  return number;
}

// Whether `pattern` names a repetition count ({N}, {N,}, {N,M}) or a backreference (\N) above
// kMaxRegexNumber. Bracket expressions ([...], where a brace is literal) are skipped.
bool HasOversizedNumber(const std::string& pattern) {
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    size_t end = i;
    if (c == '\\') {
      if (ReadNumber(pattern, i + 1, &end) > kMaxRegexNumber) return true;
      i = std::max(i + 1, end - 1);
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
    } else if (c == '{') {
      if (ReadNumber(pattern, i + 1, &end) > kMaxRegexNumber) return true;
      if (end < pattern.size() && pattern[end] == ',' &&
          ReadNumber(pattern, end + 1, &end) > kMaxRegexNumber) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Status CompileUserRegex(const std::string& pattern, std::regex* compiled) {
  if (HasOversizedNumber(pattern)) {
    return Status::BadInput(
        "is not a regular expression: a repetition count or backreference is over " +
        std::to_string(kMaxRegexNumber));
  }
  try {
    compiled->assign(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return Status::BadInput(std::string("is not a regular expression: ") + error.what());
  }
  return Status::Ok();
}

}  // namespace hpo
