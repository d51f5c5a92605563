#include "mpi/control_plane.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace hpo {

namespace {

constexpr int kToCoordinatorTag = 101;
constexpr int kFromCoordinatorTag = 102;

void SendBytes(const std::vector<uint8_t>& bytes, int destination, int tag,
               const Communicator& comm) {
  HPO_MPI_CHECK(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, destination, tag,
                         comm.get()));
}

std::vector<uint8_t> ReceiveMatched(MPI_Message* handle, const MPI_Status& status) {
  int count = 0;
  HPO_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
  std::vector<uint8_t> bytes(static_cast<size_t>(count));
  HPO_MPI_CHECK(MPI_Mrecv(bytes.data(), count, MPI_BYTE, handle, MPI_STATUS_IGNORE));
  return bytes;
}

// Waits between trials and epochs are not on the training path: a waiting rank naps between
// tests instead of spinning in MPI, so that it leaves the core to its group's programs, the
// coordinator and the leader it waits for (on a 2-core machine a spinning follower doubled the
// gap between command trials; bench/RESULTS.md). The nap grows from 10 us to at most 250 us.
class PoliteWait {
 public:
  void Nap() {
    std::this_thread::sleep_for(nap_);
    nap_ = std::min(nap_ * 2, std::chrono::microseconds(250));
  }

 private:
  std::chrono::microseconds nap_{10};
};

void WaitPolitely(MPI_Request* request) {
  PoliteWait wait;
  for (;;) {
    int done = 0;
    HPO_MPI_CHECK(MPI_Test(request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    wait.Nap();
  }
}

ControlMessage DecodeOrAbort(const std::vector<uint8_t>& bytes) {
  ControlMessage message;
  Status status = DecodeMessage(bytes, &message);
  if (!status.ok()) AbortJob(ExitCode::kFailure, "control plane: " + status.message());
  return message;
}

}  // namespace

void ServeCoordinator(Coordinator& coordinator, const Communicator& control,
                      const std::vector<int>& group_of_world_rank,
                      const std::function<void()>& poll) {
  using Micros = std::chrono::microseconds;
  const Micros kShortestNap(20);
  const Micros kLongestNap(1000);
  const auto publish = [](const Status& published) {
    if (!published.ok()) AbortJob(published.exit_code(), published.message());
  };
  Micros nap = kShortestNap;
  int empty_probes = 0;
  std::vector<int> leader_of_group(group_of_world_rank.size(), -1);
  const auto send_later_replies = [&] {
    for (const auto& [group, reply] : coordinator.TakeReplies()) {
      SendBytes(EncodeMessage(reply), leader_of_group[group], kFromCoordinatorTag, control);
    }
  };
  while (!coordinator.Finished()) {
    poll();
    send_later_replies();
    int found = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    MPI_Status status;
    HPO_MPI_CHECK(
        MPI_Improbe(MPI_ANY_SOURCE, kToCoordinatorTag, control.get(), &found, &handle, &status));
    if (!found) {
      // Idle after a nap with no message: a leader's request that follows its result has had
      // time to arrive, so publishing now delays nobody.
      if (++empty_probes >= 2) publish(coordinator.PublishIfDue(/*idle=*/true));
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, kLongestNap);
      continue;
    }
    nap = kShortestNap;
    empty_probes = 0;
    const int source = status.MPI_SOURCE;
    const int group = group_of_world_rank[source];
    leader_of_group[group] = source;
    const ControlMessage message = DecodeOrAbort(ReceiveMatched(&handle, status));
    std::optional<ControlMessage> reply;
    Status handled = coordinator.Handle(group, message, &reply);
    if (!handled.ok()) AbortJob(handled.exit_code(), handled.message());
    if (reply) SendBytes(EncodeMessage(*reply), source, kFromCoordinatorTag, control);
    publish(coordinator.PublishIfDue(/*idle=*/false));
  }
  publish(coordinator.Publish());
}

void LeaderChannel::Send(const ControlMessage& message) {
  SendBytes(EncodeMessage(message), 0, kToCoordinatorTag, control_);
}

ControlMessage LeaderChannel::Exchange(const ControlMessage& message) {
  Send(message);
  MPI_Message handle = MPI_MESSAGE_NULL;
  MPI_Status status;
  PoliteWait wait;
  for (;;) {
    int found = 0;
    HPO_MPI_CHECK(MPI_Improbe(0, kFromCoordinatorTag, control_.get(), &found, &handle, &status));
    if (found) break;
    wait.Nap();
  }
  return DecodeOrAbort(ReceiveMatched(&handle, status));
}

void BroadcastNapping(void* data, int count, MPI_Datatype type, int root,
                      const Communicator& group) {
  MPI_Request request = MPI_REQUEST_NULL;
  HPO_MPI_CHECK(MPI_Ibcast(data, count, type, root, group.get(), &request));
  WaitPolitely(&request);
}

std::string BroadcastString(const Communicator& comm, std::string text) {
  uint64_t size = text.size();
  HPO_MPI_CHECK(MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm.get()));
  text.resize(size);
  HPO_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm.get()));
  return text;
}

void BroadcastMessage(const Communicator& group, int root, ControlMessage* message) {
  if (group.size() == 1) return;
  std::vector<uint8_t> bytes;
  if (group.rank() == root) bytes = EncodeMessage(*message);
  uint64_t size = bytes.size();
  BroadcastNapping(&size, 1, MPI_UINT64_T, root, group);
  bytes.resize(size);
  BroadcastNapping(bytes.data(), static_cast<int>(size), MPI_BYTE, root, group);
  if (group.rank() != root) *message = DecodeOrAbort(bytes);
}

}  // namespace hpo
