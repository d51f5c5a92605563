// Names and checks shared by the MPIJob and sbatch renderers: DNS labels, default job names, the
// instance-type table, the rank-count check against ranks_per_trial and the ranks per node from its
// GPUs and trials_per_gpu.
#include "render_names.hpp"

#include <cctype>
#include <filesystem>
#include <limits>

#include "render/render.hpp"

namespace hpo {

const std::vector<InstanceType>& KnownInstanceTypes() {
  // GPUs, EFA interfaces (and whether they do RDMA), vCPUs and memory per node, from the EC2
  // instance type pages.
  static const std::vector<InstanceType> kTypes = {
      {"p4d.24xlarge", 8, 4, true, 96, 1152},
      {"p4de.24xlarge", 8, 4, true, 96, 1152},
      {"p5.48xlarge", 8, 32, true, 192, 2048},
      {"g5.48xlarge", 8, 1, false, 192, 768},
  };
  return kTypes;
}

const InstanceType* FindInstanceType(const std::string& name) {
  for (const InstanceType& type : KnownInstanceTypes()) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

bool IsDns1035Label(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  if (!std::islower(static_cast<unsigned char>(name.front()))) return false;
  const char last = name.back();
  if (!std::islower(static_cast<unsigned char>(last)) &&
      !std::isdigit(static_cast<unsigned char>(last))) {
    return false;
  }
  for (const char c : name) {
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
  }
  return true;
}

namespace render_internal {

std::string DefaultJobName(const SweepConfig& config) {
  std::string base = config.sweep.name;
  if (base.empty()) base = std::filesystem::path(config.path).stem().string();
  std::string name = "hpo-";
  for (const char c : base) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      name += static_cast<char>(std::tolower(u));
    } else if (name.back() != '-') {
      name += '-';
    }
  }
  while (name.back() == '-') name.pop_back();
  return name;
}

bool IsDns1123Name(const std::string& name, size_t max_length) {
  const auto alphanumeric = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  };
  if (name.empty() || name.size() > max_length) return false;
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) return false;
  const bool dots = max_length > 63;
  for (const char c : name) {
    if (!alphanumeric(c) && c != '-' && !(dots && c == '.')) return false;
  }
  return true;
}

Status CheckRankCount(const SweepConfig& config, int64_t ranks, const std::string& how) {
  const int64_t per_trial = config.execution.ranks_per_trial;
  if (ranks % per_trial != 0) {
    return Status::BadInput(how + " = " + std::to_string(ranks) +
                            " ranks, not a multiple of ranks_per_trial " +
                            std::to_string(per_trial) + " in " + config.path +
                            " (every rank must belong to one trial group)");
  }
  return Status::Ok();
}

Status CheckPositive(const std::string& option, int64_t value) {
  if (value < 1) {
    return Status::BadInput(option + " must be at least 1, not " + std::to_string(value));
  }
  return Status::Ok();
}

Status ResolveRanksPerNode(const SweepConfig& config, int64_t requested, int64_t gpus,
                           const NodeOptionNames& names, int64_t* ranks) {
  const int64_t trials_per_gpu = config.execution.trials_per_gpu;
  const std::string gpus_text = std::string(names.gpus_option) + " " + std::to_string(gpus);
  if (gpus > 0 && trials_per_gpu > std::numeric_limits<int64_t>::max() / gpus) {
    return Status::BadInput(gpus_text + " x trials_per_gpu " + std::to_string(trials_per_gpu) +
                            " in " + config.path + " is too many ranks for one " + names.node);
  }
  const int64_t resolved =
      requested > 0 ? requested
                    : (gpus > 0 ? gpus * trials_per_gpu : config.execution.ranks_per_trial);
  const std::string ranks_text = std::string(names.ranks_option) + " " + std::to_string(resolved);
  if (gpus > 0 && trials_per_gpu == 1 && resolved % gpus != 0) {
    return Status::BadInput(ranks_text + " is not a multiple of " + gpus_text +
                            " (ranks are spread evenly over a " + names.node + "'s GPUs)");
  }
  if (gpus > 0 && trials_per_gpu == 1 && resolved > gpus) {
    return Status::BadInput(ranks_text + " needs " + std::to_string(resolved) +
                            " GPUs (one per rank; set trials_per_gpu in " + config.path +
                            " to share them), but the " + names.node + " has " + gpus_text);
  }
  if (gpus > 0 && trials_per_gpu > 1) {
    const std::string k = std::to_string(trials_per_gpu);
    const std::string most = std::to_string(gpus * trials_per_gpu);
    const std::string sharing = "trials_per_gpu " + k + " in " + config.path +
                                " (node-local ranks " + k + "*g .. " + k + "*g+" +
                                std::to_string(trials_per_gpu - 1) + " share GPU g)";
    if (resolved > gpus * trials_per_gpu) {
      const int64_t needed = (resolved + trials_per_gpu - 1) / trials_per_gpu;
      return Status::BadInput(ranks_text + " needs " + std::to_string(needed) + " GPUs with " +
                              sharing + ", but the " + names.node + " has too few GPUs: with " +
                              gpus_text + " it runs at most " + std::to_string(gpus) + " x " + k +
                              " = " + most + " ranks");
    }
    if (resolved % trials_per_gpu != 0) {
      return Status::BadInput(ranks_text + " is not a multiple of " + sharing + ": with " +
                              gpus_text + ", a multiple of " + k + " up to " + most +
                              " gives every GPU in use exactly " + k + " trials");
    }
  }
  *ranks = resolved;
  return Status::Ok();
}

}  // namespace render_internal
}  // namespace hpo
