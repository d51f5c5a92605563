#include "hpo/train/gradient_buckets.hpp"

#include <algorithm>
#include <utility>

namespace hpo {

GradientBuckets::GradientBuckets(std::vector<torch::Tensor> parameters, size_t bucket_bytes,
                                 size_t extra_slots)
    : parameters_(std::move(parameters)), extra_slots_(extra_slots) {
  const size_t capacity = std::max<size_t>(bucket_bytes / sizeof(float), 1);
  BucketLayout current;
  for (size_t i = parameters_.size(); i-- > 0;) {
    TORCH_CHECK(parameters_[i].scalar_type() == torch::kFloat32 && parameters_[i].is_cpu(),
                "GradientBuckets: parameter ", i, " is not a float32 CPU tensor");
    const auto length = static_cast<size_t>(parameters_[i].numel());
    if (!current.entries.empty() && current.numel + length > capacity) {
      layout_.push_back(std::move(current));
      current = BucketLayout();
    }
    current.entries.push_back({i, current.numel, length});
    current.numel += length;
  }
  if (!current.entries.empty() || (layout_.empty() && extra_slots_ > 0)) {
    layout_.push_back(std::move(current));
  }
  for (size_t b = 0; b < layout_.size(); ++b) {
    const size_t extra = b == 0 ? extra_slots_ : 0;
    buffers_.push_back(torch::empty({static_cast<int64_t>(layout_[b].numel + extra)}));
  }
}

void GradientBuckets::AllreduceGradients(GroupCollectives& collectives, float grad_scale,
                                         float* extras) {
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < layout_.size(); ++b) {
    const BucketLayout& bucket = layout_[b];
    torch::Tensor& buffer = buffers_[b];
    float* data = buffer.data_ptr<float>();
    for (const BucketEntry& entry : bucket.entries) {
      const torch::Tensor& grad = parameters_[entry.param_index].grad();
      torch::Tensor slot =
          buffer.narrow(0, static_cast<int64_t>(entry.offset), static_cast<int64_t>(entry.length));
      if (grad.defined()) {
        slot.copy_(grad.reshape(-1));
        if (grad_scale != 1.0f) slot.mul_(grad_scale);
      } else {
        slot.zero_();
      }
    }
    const size_t extra = b == 0 ? extra_slots_ : 0;
    std::copy(extras, extras + extra, data + bucket.numel);
    collectives.AllreduceSum(data, bucket.numel + extra);
    std::copy(data + bucket.numel, data + bucket.numel + extra, extras);
    for (const BucketEntry& entry : bucket.entries) {
      torch::Tensor& parameter = parameters_[entry.param_index];
      const torch::Tensor summed =
          buffer.narrow(0, static_cast<int64_t>(entry.offset), static_cast<int64_t>(entry.length))
              .view(parameter.sizes());
      if (parameter.grad().defined()) {
        parameter.mutable_grad().copy_(summed);
      } else {
        parameter.mutable_grad() = summed.clone();
      }
    }
  }
}

}  // namespace hpo
