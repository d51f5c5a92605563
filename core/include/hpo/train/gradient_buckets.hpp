// Bucketed gradient averaging, as PyTorch DDP's Reducer does it: the model's trainable parameters
// are packed, in reverse registration order, into a few contiguous float32 buckets of at most
// bucket_bytes each, and each bucket is summed over the trial group with one AllreduceSum. One
// instance per rank per model; it holds references to (does not copy) the parameter tensors and
// owns the bucket buffers. Not thread-safe.
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <vector>

#include "hpo/collectives.hpp"

namespace hpo {

// Where one parameter's gradient lives inside its bucket.
struct BucketEntry {
  size_t param_index = 0;  // index into the parameter list given to GradientBuckets
  size_t offset = 0;       // first element inside the bucket
  size_t length = 0;       // the parameter's numel
};

struct BucketLayout {
  std::vector<BucketEntry> entries;  // in bucket order (reverse parameter order)
  size_t numel = 0;                  // gradient elements (extra slots excluded)
};

class GradientBuckets {
 public:
  // `parameters`: float32 CPU tensors, typically the model's parameters with requires_grad.
  // A parameter larger than bucket_bytes gets a bucket of its own. `extra_slots` floats are
  // appended to the first bucket reduced and summed along with it (see AllreduceGradients), so a
  // step's loss and failure flag need no collective of their own.
  GradientBuckets(std::vector<torch::Tensor> parameters, size_t bucket_bytes,
                  size_t extra_slots = 0);

  // Collective: exactly one AllreduceSum per bucket, on every rank. For each bucket, copies each
  // parameter's gradient scaled by `grad_scale` (local_count / global_count makes the sum the
  // gradient of the global batch's mean loss; an undefined gradient contributes zeros), sums the
  // bucket over the group and writes the result back as the gradient (defining it where it was
  // undefined, so every rank's optimizer sees the same gradients). `extras` (extra_slots floats,
  // not scaled) are summed over the group in place; may be null when extra_slots is 0.
  void AllreduceGradients(GroupCollectives& collectives, float grad_scale, float* extras);

  const std::vector<BucketLayout>& layout() const { return layout_; }
  size_t num_buckets() const { return layout_.size(); }

 private:
  std::vector<torch::Tensor> parameters_;
  std::vector<BucketLayout> layout_;
  std::vector<torch::Tensor> buffers_;  // one contiguous float32 buffer per bucket
  size_t extra_slots_;
};

}  // namespace hpo
