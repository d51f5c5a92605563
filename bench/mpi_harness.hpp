// What the MPI benchmarks in bench/ share: a time and a check agreed on by every rank of a
// communicator. Each call is collective: every rank of `comm` makes it, whatever its own outcome,
// so no rank waits alone. Header-only; MPI, no torch.
#pragma once

#include <mpi.h>

#include "harness.hpp"

namespace hpo::bench {

// The largest of the ranks' `seconds`.
inline double SlowestRank(MPI_Comm comm, double seconds) {
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
  return seconds;
}

// Whether every rank's `ok` holds.
inline bool OnEveryRank(MPI_Comm comm, bool ok) {
  int value = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MIN, comm);
  return value != 0;
}

// The slowest rank's mean seconds per call of `run`, over `iters` calls started together after a
// barrier; `finish` waits for work the calls queued (a device's), before the start and at the end.
template <typename Run, typename Finish>
double SlowestMeanSeconds(MPI_Comm comm, int iters, Run run, Finish finish) {
  finish();
  MPI_Barrier(comm);
  const double start = NowSeconds();
  for (int i = 0; i < iters; ++i) run();
  finish();
  return SlowestRank(comm, (NowSeconds() - start) / iters);
}

// The same for calls that are done when they return.
template <typename Run>
double SlowestMeanSeconds(MPI_Comm comm, int iters, Run run) {
  return SlowestMeanSeconds(comm, iters, run, [] {});
}

}  // namespace hpo::bench
