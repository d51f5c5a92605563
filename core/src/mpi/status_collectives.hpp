// Agreeing on one Status across the ranks of a communicator, so that a failure found on some ranks
// ends every rank the same way and is reported once (by rank 0). Both functions are collective
// over `comm`: every rank calls them in the same order.
#pragma once

#include "hpo/mpi/communicator.hpp"
#include "hpo/status.hpp"

namespace hpo {

// Every rank returns rank 0's `status` (the others' is ignored).
Status BroadcastStatus(const Communicator& comm, const Status& status);

// Every rank returns the `local` status of the lowest rank whose status is not ok, or Ok when
// every rank's is.
Status AgreeOnStatus(const Communicator& comm, const Status& local);

}  // namespace hpo
