// Learning-rate schedules as factors of the base learning rate. Torch-free.
#pragma once

#include <cstdint>

namespace hpo {

// HuggingFace's get_linear_schedule_with_warmup with TrainingArguments' warm-up from a ratio:
// warmup = ceil(warmup_ratio * total_steps) (ceil of the double product, as Python computes it),
//   factor = step / max(1, warmup)                                  while step < warmup,
//   factor = max(0, (total_steps - step) / max(1, total_steps - warmup))  otherwise.
// `step` counts the optimizer steps already taken: the first update uses step 0 (factor 0 when
// warmup > 0, as in HuggingFace), the last of total_steps updates uses step total_steps - 1.
// Preconditions: step >= 0, total_steps >= 0, 0 <= warmup_ratio <= 1.
double WarmupLinearDecayFactor(int64_t step, int64_t total_steps, double warmup_ratio);

}  // namespace hpo
