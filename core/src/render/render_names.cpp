// Names and checks shared by the MPIJob and sbatch renderers: DNS labels, default job names, the
// instance-type table and the rank-count check against ranks_per_trial.
#include "render_names.hpp"

#include <cctype>
#include <filesystem>

#include "hpo/render.hpp"

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

}  // namespace render_internal
}  // namespace hpo
