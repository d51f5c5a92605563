// Private to hpo_core: compiles a regular expression a user wrote (a metric definition's regex, a
// metrics file's filter) as std::regex ECMAScript, refusing the ones std::regex cannot take safely.
// No MPI, no torch.
#pragma once

#include <regex>
#include <string>

#include "hpo/status.hpp"

namespace hpo {

// The largest number a repetition ({N}, {N,}, {N,M}) or a backreference (\N) may name. libstdc++
// copies the repeated atom once per count when it compiles, so a count in the millions takes the
// whole machine's memory, and its counter overflows on a number near 2^63. Metric formats never
// need more than a few.
inline constexpr long kMaxRegexNumber = 1000;

// Compiles `pattern` into `compiled`. BadInput, its message to follow the pattern as the caller
// quotes it: "is not a regular expression: WHAT" (std::regex's own reason, or a repetition count or
// backreference over kMaxRegexNumber).
Status CompileUserRegex(const std::string& pattern, std::regex* compiled);

}  // namespace hpo
