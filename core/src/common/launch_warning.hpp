// The start-up warning about a job that spans hosts under plain Open MPI `mpirun`.
//
// When a host's link goes down, hpo ends its ranks after peer_timeout_s (exit 4), but Open MPI
// 4.1's `mpirun` can then wait for many minutes on its TCP connection to the cut host's daemon.
// scripts/hpo-mpirun kills such an mpirun and exits with hpo's code; it sets HPO_MPIRUN_WRAPPED=1
// for every rank, so that rank 0 can tell. Ranks that srun started (no mpirun: no
// OMPI_MCA_orte_hnp_uri) are not warned.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace hpo {

// The name of the variable scripts/hpo-mpirun sets (to 1) for the ranks it starts.
inline constexpr const char kWrappedVariable[] = "HPO_MPIRUN_WRAPPED";

// Looks up an environment variable: nullptr when it is not set (std::getenv in the program).
using EnvironmentLookup = std::function<const char*(const char*)>;

// The warning rank 0 prints once when the world spans more than one host, the ranks were started
// by Open MPI's mpirun and not through scripts/hpo-mpirun; nullopt otherwise.
std::optional<std::string> PlainMpirunWarning(bool world_spans_hosts,
                                              const EnvironmentLookup& environment);

}  // namespace hpo
