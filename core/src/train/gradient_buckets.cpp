#include "train/gradient_buckets.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace hpo {

namespace {

torch::Tensor Slot(const torch::Tensor& buffer, const BucketEntry& entry) {
  return buffer.narrow(0, static_cast<int64_t>(entry.offset), static_cast<int64_t>(entry.length));
}

torch::ScalarType WireType(ReducedFloat format) {
  return format == ReducedFloat::kBFloat16 ? torch::kBFloat16 : torch::kHalf;
}

// A float32 view of `count` host floats at `data` (no copy).
torch::Tensor HostFloats(float* data, size_t count) {
  return torch::from_blob(data, {static_cast<int64_t>(count)}, torch::kFloat32);
}

}  // namespace

GradientBuckets::GradientBuckets(std::vector<torch::Tensor> parameters, size_t bucket_bytes,
                                 size_t extra_slots, size_t first_bucket_bytes,
                                 std::optional<ReducedFloat> compression)
    : parameters_(std::move(parameters)), extra_slots_(extra_slots), compression_(compression) {
  const size_t capacity = std::max<size_t>(bucket_bytes / sizeof(float), 1);
  const size_t first_capacity =
      first_bucket_bytes == 0 ? capacity : std::max<size_t>(first_bucket_bytes / sizeof(float), 1);
  const torch::Device device =
      parameters_.empty() ? torch::Device(torch::kCPU) : parameters_.front().device();
  bucket_of_.resize(parameters_.size());
  entry_of_.resize(parameters_.size());
  BucketLayout current;
  for (size_t i = parameters_.size(); i-- > 0;) {
    TORCH_CHECK(
        parameters_[i].scalar_type() == torch::kFloat32 && parameters_[i].device() == device,
        "GradientBuckets: parameter ", i, " is not a float32 tensor on ", device);
    const auto length = static_cast<size_t>(parameters_[i].numel());
    const size_t cap = layout_.empty() ? first_capacity : capacity;
    if (!current.entries.empty() && current.numel + length > cap) {
      layout_.push_back(std::move(current));
      current = BucketLayout();
    }
    bucket_of_[i] = layout_.size();
    entry_of_[i] = current.entries.size();
    current.entries.push_back({i, current.numel, length});
    current.numel += length;
  }
  if (!current.entries.empty() || (layout_.empty() && extra_slots_ > 0)) {
    layout_.push_back(std::move(current));
  }
  const auto on_device = torch::TensorOptions().device(device);
  for (size_t b = 0; b < layout_.size(); ++b) {
    const size_t extra = b + 1 == layout_.size() && !compression_ ? extra_slots_ : 0;
    const auto numel = static_cast<int64_t>(layout_[b].numel);
    buffers_.push_back(torch::empty({numel + static_cast<int64_t>(extra)}, on_device));
    if (compression_)
      wire_.push_back(torch::empty({numel}, on_device.dtype(WireType(*compression_))));
  }
  if (compression_) extras_sum_ = torch::zeros({static_cast<int64_t>(extra_slots_)});
  ready_.assign(parameters_.size(), 0);
  missing_.assign(layout_.size(), 0);
  handles_.assign(layout_.size(), AllreduceHandle{});
  hook_ids_.assign(parameters_.size(), -1);
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].requires_grad()) continue;
    hook_ids_[i] = static_cast<int>(parameters_[i].register_hook(
        [this, i](const torch::Tensor& grad) { OnGradient(i, grad); }));
  }
}

GradientBuckets::~GradientBuckets() {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (hook_ids_[i] >= 0) parameters_[i].remove_hook(static_cast<unsigned>(hook_ids_[i]));
  }
}

void GradientBuckets::AllreduceGradients(GroupCollectives& collectives, float grad_scale,
                                         float* extras) {
  torch::NoGradGuard no_grad;
  if (!layout_.empty()) LoadExtras(extras);
  for (size_t b = 0; b < layout_.size(); ++b) {
    const BucketLayout& bucket = layout_[b];
    torch::Tensor& buffer = buffers_[b];
    for (const BucketEntry& entry : bucket.entries) {
      const torch::Tensor& grad = parameters_[entry.param_index].grad();
      torch::Tensor slot = Slot(buffer, entry);
      if (grad.defined()) {
        slot.copy_(grad.reshape(-1));
        if (grad_scale != 1.0f) slot.mul_(grad_scale);
      } else {
        slot.zero_();
      }
    }
    if (compression_) {
      collectives.Wait(StartBucket(collectives, b));
      if (b + 1 == layout_.size()) collectives.Wait(extras_handle_);
    } else {
      const size_t extra = b + 1 == layout_.size() ? extra_slots_ : 0;
      collectives.AllreduceSum(buffer.data_ptr<float>(), bucket.numel + extra);
    }
    WriteBack(b);
  }
  if (!layout_.empty()) StoreExtras(extras);
}

void GradientBuckets::BeginStep(GroupCollectives& collectives, float grad_scale) {
  collectives_ = &collectives;
  grad_scale_ = grad_scale;
  std::fill(ready_.begin(), ready_.end(), 0);
  for (size_t b = 0; b < layout_.size(); ++b) missing_[b] = layout_[b].entries.size();
  std::fill(handles_.begin(), handles_.end(), AllreduceHandle{});
  next_bucket_ = 0;
}

void GradientBuckets::OnGradient(size_t param_index, const torch::Tensor& grad) {
  if (collectives_ == nullptr || ready_[param_index] != 0) return;
  torch::NoGradGuard no_grad;
  const size_t b = bucket_of_[param_index];
  torch::Tensor slot = Slot(buffers_[b], layout_[b].entries[entry_of_[param_index]]);
  slot.copy_(grad.reshape(-1));
  if (grad_scale_ != 1.0f) slot.mul_(grad_scale_);
  ready_[param_index] = 1;
  // The last bucket carries the extras, which are final only after backward: FinishStep starts it.
  if (--missing_[b] == 0 && layout_.size() > 1) StartReadyBuckets(layout_.size() - 1);
  if (next_bucket_ > 0) collectives_->Progress();
}

void GradientBuckets::StartReadyBuckets(size_t end) {
  for (; next_bucket_ < end && missing_[next_bucket_] == 0; ++next_bucket_) {
    handles_[next_bucket_] = StartBucket(*collectives_, next_bucket_);
  }
}

AllreduceHandle GradientBuckets::StartBucket(GroupCollectives& collectives, size_t b) {
  const bool last = b + 1 == layout_.size();
  if (!compression_) {
    return collectives.StartAllreduceSum(buffers_[b].data_ptr<float>(),
                                         layout_[b].numel + (last ? extra_slots_ : 0));
  }
  wire_[b].copy_(buffers_[b]);
  const AllreduceHandle handle = collectives.StartReducedFloatAllreduceSum(
      static_cast<uint16_t*>(wire_[b].data_ptr()), layout_[b].numel, *compression_);
  if (last && extra_slots_ > 0) {
    extras_handle_ = collectives.StartAllreduceSum(extras_sum_.data_ptr<float>(), extra_slots_);
  }
  return handle;
}

void GradientBuckets::LoadExtras(const float* extras) {
  if (extra_slots_ == 0) return;
  // from_blob only reads here: the copy's source.
  const torch::Tensor values = HostFloats(const_cast<float*>(extras), extra_slots_);
  if (compression_) {
    extras_sum_.copy_(values);
  } else {
    buffers_.back()
        .narrow(0, static_cast<int64_t>(layout_.back().numel), static_cast<int64_t>(extra_slots_))
        .copy_(values);
  }
}

void GradientBuckets::StoreExtras(float* extras) const {
  if (extra_slots_ == 0) return;
  torch::Tensor values = HostFloats(extras, extra_slots_);
  if (compression_) {
    values.copy_(extras_sum_);
  } else {
    values.copy_(buffers_.back().narrow(0, static_cast<int64_t>(layout_.back().numel),
                                        static_cast<int64_t>(extra_slots_)));
  }
}

void GradientBuckets::FinishStep(float* extras) {
  TORCH_CHECK(collectives_ != nullptr, "GradientBuckets::FinishStep without BeginStep");
  torch::NoGradGuard no_grad;
  GroupCollectives& collectives = *collectives_;
  const size_t last = layout_.size();
  for (size_t b = next_bucket_; b < last; ++b) {
    for (const BucketEntry& entry : layout_[b].entries) {
      if (ready_[entry.param_index] != 0) continue;
      Slot(buffers_[b], entry).zero_();
      ready_[entry.param_index] = 1;
    }
    missing_[b] = 0;
  }
  if (last > 0) LoadExtras(extras);
  for (; next_bucket_ < last; ++next_bucket_) {
    handles_[next_bucket_] = StartBucket(collectives, next_bucket_);
  }
  const auto start = std::chrono::steady_clock::now();
  for (size_t b = 0; b < last; ++b) collectives.Wait(handles_[b]);
  if (compression_ && last > 0) collectives.Wait(extras_handle_);
  stats_.wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++stats_.steps;
  collectives_ = nullptr;
  if (last > 0) StoreExtras(extras);
  for (size_t b = 0; b < last; ++b) WriteBack(b);
}

void GradientBuckets::WriteBack(size_t bucket) {
  if (compression_) buffers_[bucket].copy_(wire_[bucket]);
  for (const BucketEntry& entry : layout_[bucket].entries) {
    torch::Tensor& parameter = parameters_[entry.param_index];
    const torch::Tensor summed = Slot(buffers_[bucket], entry).view(parameter.sizes());
    if (parameter.grad().defined()) {
      parameter.mutable_grad().copy_(summed);
    } else {
      parameter.mutable_grad() = summed.clone();
    }
  }
}

}  // namespace hpo
