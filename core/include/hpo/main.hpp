// The `hpo` command line as a library function, for a program of its own that runs a user's tasks
// beside (or instead of) the built-in ones:
//   int main(int argc, char** argv) {
//     hpo::TaskRegistry registry = hpo::BuiltinTaskRegistry();  // a copy, to add to
//     hpo::AddModelTask(&registry, description, factory);        // hpo/model_task.hpp
//     return hpo::Main(argc, argv, registry);
//   }
// started like `hpo` itself: `mpirun -np N PROGRAM sweep --config FILE`, `PROGRAM report STUDY.h5`,
// `PROGRAM render mpijob|sbatch --config FILE`. apps/examples/custom_task is a complete example.
#pragma once

#include "hpo/task_runner.hpp"

namespace hpo {

// Runs the `hpo` command line (sweep, report, render; --help, --version) on `argc`/`argv` as main
// receives them, with the kinds of task in `registry`: a config's `task:` is checked against it
// and a sweep runs its factories. Call it once, from main, on every rank of the MPI job; `sweep`
// starts and ends MPI itself (the program must not). Returns the documented exit code for main to
// return: 0 done, 1 failure, 2 bad input (config, arguments, data, study file), 3 interrupted but
// saved, 4 a rank's host lost (the study saved).
int Main(int argc, char** argv, const TaskRegistry& registry);

}  // namespace hpo
