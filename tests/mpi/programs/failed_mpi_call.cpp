// failed_mpi_call: the failure policy for a failed MPI call (FailCollectiveCall in
// hpo/mpi/communicator.hpp), as a program that test_failed_call.py runs under mpirun -np 2. Rank 1
// sends to a rank that does not exist, through HPO_MPI_CHECK, over a communicator duplicated from
// the world (as the control plane's is, so it inherits MpiSession's MPI_ERRORS_RETURN), while rank
// 0 waits in a barrier. The policy ends the whole job: exit code 1 and one message naming the call.
#include <memory>

#include "hpo/mpi/communicator.hpp"

int main(int argc, char** argv) {
  std::unique_ptr<hpo::MpiSession> session;
  if (!hpo::MpiSession::Start(&argc, &argv, &session).ok()) return 1;
  const hpo::Communicator world = hpo::Communicator::World();
  const hpo::Communicator duplicate = world.Duplicate();
  if (world.rank() == 1) {
    int payload = 0;
    HPO_MPI_CHECK(MPI_Send(&payload, 1, MPI_INT, world.size(), 0, duplicate.get()));
  }
  HPO_MPI_CHECK(MPI_Barrier(world.get()));
  return 0;
}
