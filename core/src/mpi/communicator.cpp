#include "hpo/mpi/communicator.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "common/job_end_line.hpp"

namespace hpo {

namespace {

// How long AbortJob waits for MPI_Abort before the process exits by itself.
constexpr int kAbortFallbackSeconds = 10;

}  // namespace

void FailCollectiveCall(const char* library, const char* call, const char* file, int line,
                        const std::string& error) {
  AbortJob(ExitCode::kFailure, std::string(library) + " call " + call + " failed at " + file + ":" +
                                   std::to_string(line) + ": " + error);
}

void FailMpiCall(int error_code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(error_code, text, &length);
  FailCollectiveCall("MPI", call, file, line, text);
}

void AbortJob(ExitCode code, const std::string& message) {
  int world_size = 1;
  int world_rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_size > 1) {
    std::fprintf(stderr, "hpo: error on rank %d: %s\n", world_rank, message.c_str());
  } else {
    std::fprintf(stderr, "hpo: error: %s\n", message.c_str());
  }
  // For scripts/hpo-mpirun, which ends an mpirun that cannot finish the abort (a lost host).
  std::fprintf(stderr, "%s\n", JobEndLine(static_cast<int>(code)).c_str());
  std::fflush(stderr);
  // MPI_Abort asks mpirun to end every rank; where mpirun cannot be reached (this rank's host is
  // cut off from it) the call may never return, so the process ends on its own after a while.
  std::thread([code] {
    std::this_thread::sleep_for(std::chrono::seconds(kAbortFallbackSeconds));
    std::_Exit(static_cast<int>(code));
  }).detach();
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(code));
  std::_Exit(static_cast<int>(code));
}

Status MpiSession::Start(int* argc, char*** argv, std::unique_ptr<MpiSession>* session) {
  // Open MPI's libnbc runs every in-place MPI_Iallreduce (the overlapped gradient buckets) as a
  // binomial reduce + broadcast, about half the speed of the blocking MPI_Allreduce for large
  // buffers; Rabenseifner's reduce-scatter + allgather (falling back to a ring for tiny counts)
  // matches it (bench/RESULTS.md). Read at MPI_Init; a value from mpirun --mca or the environment
  // wins. Other MPI libraries ignore the variable.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", /*overwrite=*/0);
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    return Status::Failure("MPI_Init_thread failed");
  }
  session->reset(new MpiSession());
  if (provided < MPI_THREAD_MULTIPLE) {
    return Status::Failure(
        "the MPI library does not provide MPI_THREAD_MULTIPLE (rank 0 runs the coordinator on "
        "its own thread); use an MPI built with thread support");
  }
  HPO_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  return Status::Ok();
}

MpiSession::~MpiSession() { MPI_Finalize(); }

Communicator Communicator::World() { return Communicator(MPI_COMM_WORLD, false); }

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      owned_(std::exchange(other.owned_, false)) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    Release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

Communicator::~Communicator() { Release(); }

void Communicator::Release() {
  if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
  owned_ = false;
}

Communicator Communicator::Split(int color, int key) const {
  MPI_Comm result = MPI_COMM_NULL;
  HPO_MPI_CHECK(MPI_Comm_split(comm_, color, key, &result));
  return Communicator(result, true);
}

Communicator Communicator::Duplicate() const {
  MPI_Comm result = MPI_COMM_NULL;
  HPO_MPI_CHECK(MPI_Comm_dup(comm_, &result));
  return Communicator(result, true);
}

Communicator Communicator::SplitShared() const {
  MPI_Comm result = MPI_COMM_NULL;
  HPO_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &result));
  return Communicator(result, true);
}

int Communicator::rank() const {
  int value = 0;
  HPO_MPI_CHECK(MPI_Comm_rank(comm_, &value));
  return value;
}

int Communicator::size() const {
  int value = 0;
  HPO_MPI_CHECK(MPI_Comm_size(comm_, &value));
  return value;
}

}  // namespace hpo
