#include "mpi/mpi_collectives.hpp"

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

template <ReducedFloat kFormat>
void SumReducedFloats(void* in, void* inout, int* length, MPI_Datatype*) {
  AccumulateReducedFloats(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(inout),
                          static_cast<size_t>(*length), kFormat);
}

}  // namespace

MpiGroupCollectives::MpiGroupCollectives(const Communicator& group) : group_(group) {
  HPO_MPI_CHECK(MPI_Op_create(&SumReducedFloats<ReducedFloat::kBFloat16>, 1, &bfloat16_sum_));
  HPO_MPI_CHECK(MPI_Op_create(&SumReducedFloats<ReducedFloat::kFloat16>, 1, &float16_sum_));
}

MpiGroupCollectives::~MpiGroupCollectives() {
  for (Pending& pending : pending_) {
    MPI_Waitall(static_cast<int>(pending.requests.size()), pending.requests.data(),
                MPI_STATUSES_IGNORE);
  }
  MPI_Op_free(&bfloat16_sum_);
  MPI_Op_free(&float16_sum_);
}

AllreduceHandle MpiGroupCollectives::StartInPieces(void* data, size_t count, size_t element_bytes,
                                                   MPI_Datatype type, MPI_Op op) {
  constexpr size_t kMaxPiece = static_cast<size_t>(INT_MAX);
  Pending pending;
  pending.id = next_id_++;
  auto* cursor = static_cast<char*>(data);
  for (size_t offset = 0; offset < count; offset += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, count - offset));
    MPI_Request request = MPI_REQUEST_NULL;
    HPO_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, cursor + offset * element_bytes, piece, type, op,
                                 group_.get(), &request));
    pending.requests.push_back(request);
  }
  const AllreduceHandle handle{pending.id};
  pending_.push_back(std::move(pending));
  return handle;
}

AllreduceHandle MpiGroupCollectives::StartAllreduceSum(float* data, size_t count) {
  return StartInPieces(data, count, sizeof(float), MPI_FLOAT, MPI_SUM);
}

AllreduceHandle MpiGroupCollectives::StartReducedFloatAllreduceSum(uint16_t* data, size_t count,
                                                                   ReducedFloat format) {
  return StartInPieces(data, count, sizeof(uint16_t), MPI_UINT16_T,
                       format == ReducedFloat::kBFloat16 ? bfloat16_sum_ : float16_sum_);
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
