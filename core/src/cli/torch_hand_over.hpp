// Private to hpo_cli: what lets `hpo` itself load no libtorch (docs/design.md, "Two executables").
// `hpo` runs command sweeps, `render`, `report`, `status` and `--version` with the tasks of
// TorchFreeTaskRegistry(); a sweep of a libtorch task (fashion_mnist, synthetic, torchscript,
// text_classification) is handed to `hpo-torch`, the same command line built with every built-in
// task, by replacing the process image (execv) before MPI starts: mpirun, srun and the MPI
// operator keep the same process, its arguments and environment.
#pragma once

#include <string>

#include "hpo/task_runner.hpp"
#include "runtime/sweep.hpp"

namespace hpo {

// The executable `hpo` hands libtorch sweeps to, in the folder of the running `hpo`.
inline constexpr const char* kTorchExecutableName = "hpo-torch";

// Every built-in task's description (so configs, reports and statuses of every task read as in
// hpo-torch) with a runner only for the tasks that need no libtorch (command trials). The others'
// factory fails, naming hpo-torch: it runs only when a rank could not hand over (it could not read
// the config that rank 0 read).
const TaskRegistry& TorchFreeTaskRegistry();

// Called by `hpo sweep` on every rank that read and parsed the sweep's config before MPI starts.
// When the config's task is not command trials (the only built-in task without libtorch),
// replaces this process with hpo-torch beside the running executable, with the same `argv`;
// returns only when it does not hand over. A config that cannot be read or does not parse stays
// here, where rank 0 reports it after MPI starts exactly as hpo-torch would. When hpo-torch cannot
// be started, exits with code 1 (a broken installation), saying why: rank 0 (as the launcher
// numbers it) at once, another rank 10 s later, which the launcher ending the job after rank 0's
// exit usually cuts short, so one line is printed for the job.
void HandOverTorchSweep(const SweepConfig& config, char** argv, const std::string& rank);

// The torch-free `hpo` (apps/hpo_main.cpp): hpo::Main with TorchFreeTaskRegistry() whose `sweep`
// calls HandOverTorchSweep before MPI starts. Defined in cli/main.cpp.
int TorchFreeMain(int argc, char** argv);

}  // namespace hpo
