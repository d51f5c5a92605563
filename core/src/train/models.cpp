#include "train/models.hpp"

#include <cstring>
#include <vector>

namespace hpo {
namespace {

constexpr int64_t kHiddenUnits = 128;
constexpr int64_t kImageSide = 28;

torch::nn::Sequential BuildFashionCnn(const ModelSpec& spec) {
  namespace nn = torch::nn;
  const int64_t w = spec.width;
  const int64_t pooled = kImageSide / 4;
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(1, w, 3).padding(1)), nn::BatchNorm2d(w), nn::ReLU(),
      nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Conv2d(nn::Conv2dOptions(w, 2 * w, 3).padding(1)),
      nn::BatchNorm2d(2 * w), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(),
      nn::Dropout(spec.dropout), nn::Linear(2 * w * pooled * pooled, kHiddenUnits), nn::ReLU(),
      nn::Dropout(spec.dropout), nn::Linear(kHiddenUnits, spec.num_classes));
}

torch::nn::Sequential BuildSyntheticMlp(const ModelSpec& spec) {
  namespace nn = torch::nn;
  const int64_t w = spec.width;
  return nn::Sequential(nn::Linear(spec.input_features, w), nn::ReLU(), nn::Dropout(spec.dropout),
                        nn::Linear(w, w), nn::ReLU(), nn::Dropout(spec.dropout),
                        nn::Linear(w, spec.num_classes));
}

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

torch::nn::Sequential BuildModel(const ModelSpec& spec) {
  return spec.task == "fashion_mnist" ? BuildFashionCnn(spec) : BuildSyntheticMlp(spec);
}

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
