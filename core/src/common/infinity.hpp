// Private to hpo_core: positive infinity as a named constant, shared so that files built together
// (unity builds) do not each define their own.
#pragma once

#include <limits>

namespace hpo {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace hpo
