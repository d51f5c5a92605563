// RAII ownership of MPI state: MpiSession (MPI_Init_thread / MPI_Finalize) and Communicator (a
// move-only owner of an MPI_Comm that frees it). Creating communicators (Split, Duplicate,
// SplitShared) is collective over the parent. Every MPI call goes through HPO_MPI_CHECK, which
// turns a failing call into one message naming the call, file and line, then ends the job
// (FailCollectiveCall: the failure policy of every MPI and NCCL call).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "hpo/status.hpp"

namespace hpo {

// The one failure policy for a failed MPI or NCCL call (and the CUDA calls of the NCCL data
// plane, gpu/nccl_collectives.cpp): the job ends, through AbortJob with ExitCode::kFailure and the
// message "LIBRARY call CALL failed at FILE:LINE: ERROR". Never an exception: a failed call leaves
// its communicator unusable, so the group could not even agree that it failed, and the trainer
// catches what a training step throws (a gradient hook's allreduce included) as the trial's own
// failure: the sweep would go on and fail every later trial of the group the same way. Callable
// from any thread once MPI is initialised. Never returns.
[[noreturn]] void FailCollectiveCall(const char* library, const char* call, const char* file,
                                     int line, const std::string& error);

// FailCollectiveCall for an MPI call that returned `error_code`, with MPI's error string.
[[noreturn]] void FailMpiCall(int error_code, const char* call, const char* file, int line);

#define HPO_MPI_CHECK(call)                                       \
  do {                                                            \
    int hpo_mpi_rc_ = (call);                                     \
    if (hpo_mpi_rc_ != MPI_SUCCESS) {                             \
      ::hpo::FailMpiCall(hpo_mpi_rc_, #call, __FILE__, __LINE__); \
    }                                                             \
  } while (false)

// Ends the whole job after a fatal error on this rank: prints `message` to stderr (prefixed with
// the world rank when the world has more than one rank), then "hpo: ending the job with exit
// code N" (scripts/hpo-mpirun reads it), and calls MPI_Abort with `code`, which
// mpirun passes on as its exit status. Callable from any thread once MPI is initialised. Where
// MPI_Abort does not end the process within 10 s (mpirun cut off), the process exits by itself.
[[noreturn]] void AbortJob(ExitCode code, const std::string& message);

// The process's MPI lifetime. Exactly one per process, created first on the main thread.
// Requests MPI_THREAD_MULTIPLE (rank 0's coordinator runs on its own thread) and sets
// MPI_ERRORS_RETURN on MPI_COMM_WORLD (which every communicator made from it inherits), so that a
// failed call returns to HPO_MPI_CHECK and its policy instead of MPI's default handler. Unless set
// already, selects Open MPI's Rabenseifner algorithm for MPI_Iallreduce
// (coll_libnbc_iallreduce_algorithm 3).
class MpiSession {
 public:
  // Initialises MPI; Failure when the library cannot provide MPI_THREAD_MULTIPLE.
  static Status Start(int* argc, char*** argv, std::unique_ptr<MpiSession>* session);
  ~MpiSession();  // MPI_Finalize

  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  MpiSession() = default;
};

class Communicator {
 public:
  // A non-owning handle to MPI_COMM_WORLD.
  static Communicator World();

  Communicator() = default;
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();  // MPI_Comm_free for owned communicators

  // Collective: ranks with the same color form a new communicator, ordered by key.
  Communicator Split(int color, int key) const;
  // Collective: the same group in a new communication context (messages never cross over).
  Communicator Duplicate() const;
  // Collective: the ranks that share this rank's node (MPI_COMM_TYPE_SHARED).
  Communicator SplitShared() const;

  bool valid() const { return comm_ != MPI_COMM_NULL; }
  int rank() const;
  int size() const;
  MPI_Comm get() const { return comm_; }

 private:
  Communicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {}
  void Release();

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

}  // namespace hpo
