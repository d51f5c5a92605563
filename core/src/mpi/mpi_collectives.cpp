#include "hpo/mpi/mpi_collectives.hpp"

#include <algorithm>
#include <climits>
#include <utility>

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

MpiGroupCollectives::~MpiGroupCollectives() {
  for (Pending& pending : pending_) {
    MPI_Waitall(static_cast<int>(pending.requests.size()), pending.requests.data(),
                MPI_STATUSES_IGNORE);
  }
}

AllreduceHandle MpiGroupCollectives::StartAllreduceSum(float* data, size_t count) {
  constexpr size_t kMaxPiece = static_cast<size_t>(INT_MAX);
  Pending pending;
  pending.id = next_id_++;
  for (size_t offset = 0; offset < count; offset += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, count - offset));
    MPI_Request request = MPI_REQUEST_NULL;
    HPO_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data + offset, piece, MPI_FLOAT, MPI_SUM,
                                 group_.get(), &request));
    pending.requests.push_back(request);
  }
  const AllreduceHandle handle{pending.id};
  pending_.push_back(std::move(pending));
  return handle;
}

bool MpiGroupCollectives::Progress() {
  auto done = [](Pending& pending) {
    int flag = 0;
    HPO_MPI_CHECK(MPI_Testall(static_cast<int>(pending.requests.size()), pending.requests.data(),
                              &flag, MPI_STATUSES_IGNORE));
    return flag != 0;
  };
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), done), pending_.end());
  return pending_.empty();
}

void MpiGroupCollectives::Wait(AllreduceHandle handle) {
  const auto found = std::find_if(pending_.begin(), pending_.end(),
                                  [&handle](const Pending& p) { return p.id == handle.id; });
  if (found == pending_.end()) return;
  HPO_MPI_CHECK(MPI_Waitall(static_cast<int>(found->requests.size()), found->requests.data(),
                            MPI_STATUSES_IGNORE));
  pending_.erase(found);
}

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
