#include "train/model_sync.hpp"

#include <cstring>
#include <vector>

namespace hpo {
namespace {

// The model's parameters followed by its buffers, in registration order.
std::vector<torch::Tensor> StateTensors(TrainableModel& model) {
  std::vector<torch::Tensor> tensors = model.Parameters();
  for (const torch::Tensor& buffer : model.Buffers()) tensors.push_back(buffer);
  return tensors;
}

size_t TensorBytes(const torch::Tensor& tensor) {
  return static_cast<size_t>(tensor.numel()) * tensor.element_size();
}

// Overwrites every rank's `tensors` (on any device) with the leader's, packed into one host byte
// buffer.
void BroadcastTensors(const std::vector<torch::Tensor>& tensors, GroupCollectives& collectives) {
  torch::NoGradGuard no_grad;
  size_t total = 0;
  for (const torch::Tensor& tensor : tensors) total += TensorBytes(tensor);
  std::vector<unsigned char> bytes(total);
  size_t offset = 0;
  for (const torch::Tensor& tensor : tensors) {
    std::memcpy(bytes.data() + offset, tensor.contiguous().cpu().data_ptr(), TensorBytes(tensor));
    offset += TensorBytes(tensor);
  }
  collectives.Broadcast(bytes.data(), bytes.size(), 0);
  offset = 0;
  for (torch::Tensor tensor : tensors) {
    tensor.copy_(torch::from_blob(bytes.data() + offset, tensor.sizes(),
                                  torch::TensorOptions().dtype(tensor.dtype())));
    offset += TensorBytes(tensor);
  }
}

}  // namespace

void BroadcastModelState(TrainableModel& model, GroupCollectives& collectives) {
  if (collectives.size() == 1) return;
  BroadcastTensors(StateTensors(model), collectives);
}

void SyncBuffers(TrainableModel& model, GroupCollectives& collectives) {
  if (collectives.size() == 1) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> averaged;
  std::vector<torch::Tensor> copied;
  for (const torch::Tensor& buffer : model.Buffers()) {
    (buffer.scalar_type() == torch::kFloat32 ? averaged : copied).push_back(buffer);
  }
  if (!averaged.empty()) {
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor& buffer : averaged) flat.push_back(buffer.reshape(-1));
    torch::Tensor sum = torch::cat(flat).contiguous();
    collectives.AllreduceSum(sum.data_ptr<float>(), static_cast<size_t>(sum.numel()));
    sum.div_(static_cast<double>(collectives.size()));
    int64_t offset = 0;
    for (torch::Tensor& buffer : averaged) {
      buffer.copy_(sum.narrow(0, offset, buffer.numel()).view(buffer.sizes()));
      offset += buffer.numel();
    }
  }
  if (!copied.empty()) BroadcastTensors(copied, collectives);
}

}  // namespace hpo
