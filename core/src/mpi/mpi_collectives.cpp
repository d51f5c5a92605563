#include "hpo/mpi/mpi_collectives.hpp"

#include <algorithm>
#include <climits>

namespace hpo {

namespace {

// MPI counts are int; large buffers go in pieces of at most INT_MAX elements.
template <typename T>
void AllreduceInPieces(T* data, size_t count, MPI_Datatype type, MPI_Comm comm) {
  constexpr size_t kMaxPiece = static_cast<size_t>(INT_MAX);
  for (size_t offset = 0; offset < count; offset += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, count - offset));
    HPO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data + offset, piece, type, MPI_SUM, comm));
  }
}

}  // namespace

void MpiGroupCollectives::AllreduceSum(float* data, size_t count) {
  AllreduceInPieces(data, count, MPI_FLOAT, group_.get());
}

void MpiGroupCollectives::AllreduceSum(double* data, size_t count) {
  AllreduceInPieces(data, count, MPI_DOUBLE, group_.get());
}

void MpiGroupCollectives::Broadcast(void* data, size_t bytes, int root) {
  constexpr size_t kMaxPiece = static_cast<size_t>(INT_MAX);
  auto* cursor = static_cast<char*>(data);
  for (size_t offset = 0; offset < bytes; offset += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, bytes - offset));
    HPO_MPI_CHECK(MPI_Bcast(cursor + offset, piece, MPI_BYTE, root, group_.get()));
  }
}

}  // namespace hpo
