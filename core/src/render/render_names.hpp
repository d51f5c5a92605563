// Helpers shared by the renderers (mpijob_render.cpp, sbatch_render.cpp); not public API.
#pragma once

#include <cstdint>
#include <string>

#include "hpo/config.hpp"
#include "hpo/status.hpp"

namespace hpo::render_internal {

// "hpo-" + the sweep's name (or the config file's stem), lower-cased, runs of other characters
// turned into one '-'. Not necessarily a valid label; callers check.
std::string DefaultJobName(const SweepConfig& config);

// BadInput unless `ranks` is a multiple of the config's ranks_per_trial; `how` says how the count
// came about ("--workers 3 x 8 slots per worker").
Status CheckRankCount(const SweepConfig& config, int64_t ranks, const std::string& how);

// Whether `name` is a DNS-1123 name of at most `max_length` characters: lower-case letters, digits,
// '-' and (for subdomains, max_length 253) '.', starting and ending with a letter or digit.
bool IsDns1123Name(const std::string& name, size_t max_length);

// BadInput "OPTION must be at least 1, not V" when value < 1.
Status CheckPositive(const std::string& option, int64_t value);

}  // namespace hpo::render_internal

namespace hpo::render_internal {

// The job body every rendered sbatch script ends with: core/src/render/templates/sbatch_body.sh,
// compiled in by CMake (sbatch_body.cpp.in).
extern const char kSbatchBody[];

}  // namespace hpo::render_internal
