// Private to hpo_runtime: the two waits of a sweep's MPI job that no PeerWatch covers. In MPI_Init
// and in MPI_Finalize every rank waits for the last one to arrive, so one rank frozen there (or
// whose host is lost) would hold the others forever. While a job deadline is armed, a thread ends
// this process `seconds` after it was armed: it writes `message` and the line scripts/hpo-mpirun
// reads ("hpo: ending the job with exit code N") to stderr and exits with `code`; mpirun then ends
// the ranks that still wait. `hpo sweep` arms it before MPI_Init (exit 4), RunSweep disarms it once
// its peer watch runs, and `hpo sweep` arms it again, with the sweep's own exit code, before
// MPI_Finalize; a process that exits first ends the deadline with it. One per process; the thread
// starts with the first ArmJobDeadline and naps while nothing is armed.
#pragma once

#include <string>

#include "hpo/status.hpp"

namespace hpo {

// Arms (or re-arms, replacing what was armed) the process's deadline.
void ArmJobDeadline(double seconds, ExitCode code, const std::string& message);

// Disarms it; nothing happens until it is armed again.
void DisarmJobDeadline();

}  // namespace hpo
