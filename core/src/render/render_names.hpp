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

// How one renderer names the ranks and GPUs of a node (an MPIJob worker pod, a Slurm node).
struct NodeOptionNames {
  const char* ranks_option;  // "--slots-per-worker"
  const char* gpus_option;   // "--gpus-per-worker"
  const char* node;          // "worker"
};

// The ranks one node runs, on `gpus` GPUs: `requested` when > 0, else gpus x trials_per_gpu, or
// ranks_per_trial without GPUs. With GPUs, BadInput naming both options unless the ranks use the
// GPUs as AssignGpu places them (the rule in render/render.hpp); *ranks is then unchanged.
Status ResolveRanksPerNode(const SweepConfig& config, int64_t requested, int64_t gpus,
                           const NodeOptionNames& names, int64_t* ranks);

}  // namespace hpo::render_internal

namespace hpo::render_internal {

// The job body every rendered sbatch script ends with: core/src/render/templates/sbatch_body.sh,
// compiled in by CMake (sbatch_body.cpp.in).
extern const char kSbatchBody[];

}  // namespace hpo::render_internal
