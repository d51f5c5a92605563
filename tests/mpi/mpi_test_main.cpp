// main() for the MPI gtest binary: every rank runs every test; the job fails if any rank failed.
// Only rank 0 prints gtest's progress; other ranks print their failures.
#include <gtest/gtest.h>

#include <memory>

#include "hpo/mpi/communicator.hpp"

namespace {

// Prints only failed assertions (with the rank), for ranks other than 0.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name(), result.line_number(),
                   result.summary());
    }
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<hpo::MpiSession> session;
  hpo::Status started = hpo::MpiSession::Start(&argc, &argv, &session);
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.message().c_str());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = hpo::Communicator::World().rank();
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
