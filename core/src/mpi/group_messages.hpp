// Point-to-point text messages between the ranks of one trial group, each kind on an MPI tag of
// its own, and an int broadcast from the leader or gathered from every rank: what the command
// task's runner (tasks/command/runtime/runner.cpp) says between a group's leader and its other
// ranks as their programs end. Every call ends the job on a failed MPI call (HPO_MPI_CHECK). Not
// thread-safe: one thread per communicator.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hpo/mpi/communicator.hpp"

namespace hpo {

// The kinds of message, as tags (apart from every other tag hpo uses on a group communicator).
enum class GroupMessage : int {
  kProgramEnded = 0x4801,  // rank -> leader: its program ended before the trial did
  kInterrupted = 0x4802,   // rank -> leader: it saw a preemption signal
  kFinish = 0x4803,        // leader -> rank: the trial is over, stop your program
  kFinal = 0x4804,         // rank -> leader: its program is gone
};

void SendText(const Communicator& group, int destination, GroupMessage kind,
              const std::string& text);

// Receives a message of `kind` from `source`, blocking until one is there.
std::string ReceiveText(const Communicator& group, int source, GroupMessage kind);

// The next waiting message of `kind` from any rank (its rank in *source), if one is there.
std::optional<std::string> TryReceiveText(const Communicator& group, GroupMessage kind,
                                          int* source);

// Whether a message of `kind` from `source` is waiting.
bool MessageWaiting(const Communicator& group, int source, GroupMessage kind);

// The leader's (rank 0's) `value` on every rank; the others' is ignored. Collective over `group`;
// waiting ranks nap (BroadcastNapping, mpi/control_plane.hpp).
int BroadcastFromLeader(const Communicator& group, int value);

// Every rank's `value`, by rank. Collective over `group`.
std::vector<int> GatherFromEveryRank(const Communicator& group, int value);

}  // namespace hpo
