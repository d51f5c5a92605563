#include "model_runtime/training_device.hpp"

#include "mpi/mpi_collectives.hpp"
#if HPO_WITH_CUDA
#include "gpu/cuda_device.hpp"
#include "gpu/nccl_collectives.hpp"
#endif

namespace hpo {

#if HPO_WITH_CUDA

Status ActivateDevice(const GroupLayout& layout, int64_t trials_per_gpu) {
  if (layout.gpu < 0) return Status::Ok();
  return ActivateCudaDevice(layout.gpu, trials_per_gpu);
}

std::unique_ptr<GroupCollectives> MakeGroupCollectives(const GroupLayout& layout) {
  if (layout.gpu >= 0) return std::make_unique<NcclGroupCollectives>(layout.group_comm);
  return std::make_unique<MpiGroupCollectives>(layout.group_comm);
}

#else  // the CPU build

Status ActivateDevice(const GroupLayout&, int64_t) { return Status::Ok(); }

std::unique_ptr<GroupCollectives> MakeGroupCollectives(const GroupLayout& layout) {
  return std::make_unique<MpiGroupCollectives>(layout.group_comm);
}

#endif

}  // namespace hpo
