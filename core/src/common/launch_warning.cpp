#include "common/launch_warning.hpp"

#include <cstring>

namespace hpo {

namespace {

// Open MPI's mpirun (its daemons) gives every rank the address of mpirun's own process.
constexpr const char kStartedByMpirunVariable[] = "OMPI_MCA_orte_hnp_uri";

bool IsSet(const EnvironmentLookup& environment, const char* name) {
  const char* value = environment(name);
  return value != nullptr && std::strlen(value) > 0;
}

}  // namespace

std::optional<std::string> PlainMpirunWarning(bool world_spans_hosts,
                                              const EnvironmentLookup& environment) {
  if (!world_spans_hosts || !IsSet(environment, kStartedByMpirunVariable) ||
      IsSet(environment, kWrappedVariable)) {
    return std::nullopt;
  }
  return std::string(
      "hpo: warning: this job spans several hosts under plain mpirun. If a host is cut off, hpo "
      "ends its ranks after peer_timeout_s (exit 4), but Open MPI's mpirun can then wait for "
      "many minutes on the lost host's daemon. Start multi-host jobs with scripts/hpo-mpirun "
      "(same arguments as mpirun), which ends such an mpirun and exits with hpo's code.");
}

}  // namespace hpo
