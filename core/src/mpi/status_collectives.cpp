#include "mpi/status_collectives.hpp"

#include <climits>
#include <cstdint>
#include <string>

namespace hpo {

namespace {

// Every rank returns `root`'s status.
Status BroadcastStatusFrom(const Communicator& comm, int root, const Status& status) {
  int code = static_cast<int>(status.code());
  HPO_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, root, comm.get()));
  const bool is_root = comm.rank() == root;
  uint64_t length = is_root ? status.message().size() : 0;
  HPO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_UINT64_T, root, comm.get()));
  std::string message = is_root ? status.message() : std::string(length, '\0');
  HPO_MPI_CHECK(MPI_Bcast(message.data(), static_cast<int>(length), MPI_CHAR, root, comm.get()));
  switch (static_cast<Status::Code>(code)) {
    case Status::Code::kOk:
      return Status::Ok();
    case Status::Code::kBadInput:
      return Status::BadInput(message);
    case Status::Code::kInterrupted:
      return Status::Interrupted(message);
    case Status::Code::kFailure:
      break;
  }
  return Status::Failure(message);
}

}  // namespace

Status BroadcastStatus(const Communicator& comm, const Status& status) {
  return BroadcastStatusFrom(comm, 0, status);
}

Status AgreeOnStatus(const Communicator& comm, const Status& local) {
  int first_failed = local.ok() ? INT_MAX : comm.rank();
  HPO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm.get()));
  if (first_failed == INT_MAX) return Status::Ok();
  return BroadcastStatusFrom(comm, first_failed, local);
}

}  // namespace hpo
