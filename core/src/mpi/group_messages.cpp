#include "mpi/group_messages.hpp"

#include "mpi/control_plane.hpp"

namespace hpo {

void SendText(const Communicator& group, int destination, GroupMessage kind,
              const std::string& text) {
  HPO_MPI_CHECK(MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, destination,
                         static_cast<int>(kind), group.get()));
}

std::string ReceiveText(const Communicator& group, int source, GroupMessage kind) {
  const int tag = static_cast<int>(kind);
  MPI_Status status;
  HPO_MPI_CHECK(MPI_Probe(source, tag, group.get(), &status));
  int count = 0;
  HPO_MPI_CHECK(MPI_Get_count(&status, MPI_CHAR, &count));
  std::string text(static_cast<size_t>(count), '\0');
  HPO_MPI_CHECK(MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, tag, group.get(),
                         MPI_STATUS_IGNORE));
  return text;
}

std::optional<std::string> TryReceiveText(const Communicator& group, GroupMessage kind,
                                          int* source) {
  int waiting = 0;
  MPI_Status status;
  HPO_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, static_cast<int>(kind), group.get(), &waiting, &status));
  if (!waiting) return std::nullopt;
  *source = status.MPI_SOURCE;
  return ReceiveText(group, status.MPI_SOURCE, kind);
}

bool MessageWaiting(const Communicator& group, int source, GroupMessage kind) {
  int waiting = 0;
  HPO_MPI_CHECK(
      MPI_Iprobe(source, static_cast<int>(kind), group.get(), &waiting, MPI_STATUS_IGNORE));
  return waiting != 0;
}

int BroadcastFromLeader(const Communicator& group, int value) {
  BroadcastNapping(&value, 1, MPI_INT, 0, group);
  return value;
}

std::vector<int> GatherFromEveryRank(const Communicator& group, int value) {
  std::vector<int> values(static_cast<size_t>(group.size()));
  HPO_MPI_CHECK(MPI_Allgather(&value, 1, MPI_INT, values.data(), 1, MPI_INT, group.get()));
  return values;
}

}  // namespace hpo
