#include "train/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace hpo {

double WarmupLinearDecayFactor(int64_t step, int64_t total_steps, double warmup_ratio) {
  const auto warmup =
      static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
  if (step < warmup) {
    return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
  }
  return std::max(0.0, static_cast<double>(total_steps - step) /
                           static_cast<double>(std::max<int64_t>(1, total_steps - warmup)));
}

}  // namespace hpo
