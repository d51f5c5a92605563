// Bucketed gradient averaging, as PyTorch DDP's Reducer does it: the model's trainable parameters
// are packed, in reverse registration order, into a few contiguous float32 buckets (the first at
// most first_bucket_bytes, the others at most bucket_bytes) on the parameters' device, and each
// bucket is summed over the trial group with one allreduce. Two ways to run a step:
//  - AllreduceGradients after backward: one blocking allreduce per bucket;
//  - overlapped: BeginStep before backward; a gradient hook on each parameter copies the gradient
//    into its bucket as backward produces it, and a bucket whose gradients are all there starts its
//    asynchronous allreduce at once (buckets start in bucket order, so every rank issues the same
//    collectives in the same order); FinishStep after backward zero-fills the slots of parameters
//    that got no gradient, starts the buckets not yet started and waits only for what is still in
//    flight.
// The extra slots (a step's loss and flags) ride the last bucket, which only FinishStep starts, so
// they may be set after backward. Both ways compute the same sums in the same order (bitwise equal
// results for the same inputs). With `compression`, a bucket travels as 16-bit floats (half the
// bytes; every partial sum rounded to the format) and is widened back to float32 before it becomes
// the gradient; the extras then travel beside it as float32 in an allreduce of their own, started
// with the last bucket. One instance per rank per model; it holds references to (does not copy)
// the parameter tensors, registers a hook on each that requires grad (removed by the destructor;
// the instance must not move, so it is neither copyable nor movable) and owns the bucket buffers.
// Not thread-safe: hooks run on the autograd engine's thread for the parameters' device (the
// calling thread on CPU), which must not overlap the caller's own calls (backward blocks it).
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "hpo/reduced_float.hpp"
#include "train/collectives.hpp"

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

// Time one rank spent in FinishStep waiting for allreduces still in flight, summed over the steps
// run with BeginStep/FinishStep since construction.
struct OverlapStats {
  int64_t steps = 0;
  double wait_s = 0.0;
};

class GradientBuckets {
 public:
  // `parameters`: float32 tensors on one device, typically the model's parameters with
  // requires_grad. A parameter larger than its bucket's capacity gets a bucket of its own.
  // `extra_slots` floats are summed along with the last bucket, so a step's loss and failure flag
  // need no collective of their own. first_bucket_bytes 0 means bucket_bytes. `compression`: the
  // 16-bit format gradients travel in (none: float32).
  GradientBuckets(std::vector<torch::Tensor> parameters, size_t bucket_bytes,
                  size_t extra_slots = 0, size_t first_bucket_bytes = 0,
                  std::optional<ReducedFloat> compression = std::nullopt);
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Collective: exactly one allreduce per bucket (and one for the extras with compression), on
  // every rank. For each bucket, copies each
  // parameter's gradient scaled by `grad_scale` (local_count / global_count makes the sum the
  // gradient of the global batch's mean loss; an undefined gradient contributes zeros), sums the
  // bucket over the group and writes the result back as the gradient (defining it where it was
  // undefined, so every rank's optimizer sees the same gradients). `extras` (extra_slots floats,
  // not scaled) are summed over the group in place; may be null when extra_slots is 0.
  void AllreduceGradients(GroupCollectives& collectives, float grad_scale, float* extras);

  // Overlapped step, part 1 (local; call before backward, with gradients zeroed or undefined):
  // arms the hooks so that the one backward pass that follows feeds the buckets, scaled by
  // `grad_scale`, and starts full buckets on `collectives` (which must outlive FinishStep).
  void BeginStep(GroupCollectives& collectives, float grad_scale);

  // Overlapped step, part 2 (collective; call after backward, also when backward was skipped or
  // threw): parameters whose hook did not fire contribute zeros, every bucket not yet started is
  // started (the last one carrying `extras`), then waits for all of them and writes the sums back
  // as gradients and into `extras`, as AllreduceGradients does. Disarms the hooks.
  void FinishStep(float* extras);

  const std::vector<BucketLayout>& layout() const { return layout_; }
  size_t num_buckets() const { return layout_.size(); }
  const OverlapStats& overlap_stats() const { return stats_; }

 private:
  void OnGradient(size_t param_index, const torch::Tensor& grad);
  void StartReadyBuckets(size_t end);  // starts buckets next_bucket_ .. end-1 that are complete
  // Starts bucket b's allreduce (with compression: rounds it to the wire buffer first; the last
  // bucket also starts the extras' allreduce).
  AllreduceHandle StartBucket(GroupCollectives& collectives, size_t b);
  void LoadExtras(const float* extras);   // extras -> the buffer they are summed in
  void StoreExtras(float* extras) const;  // and back
  void WriteBack(size_t bucket);

  std::vector<torch::Tensor> parameters_;
  std::vector<BucketLayout> layout_;
  std::vector<torch::Tensor> buffers_;  // one contiguous float32 buffer per bucket
  std::vector<torch::Tensor> wire_;     // with compression: bucket -> its 16-bit copy
  torch::Tensor extras_sum_;            // with compression: the extras (float32, host)
  AllreduceHandle extras_handle_;       // with compression: the extras' started allreduce
  std::vector<size_t> bucket_of_;       // parameter index -> bucket
  std::vector<size_t> entry_of_;        // parameter index -> entry within its bucket
  std::vector<int> hook_ids_;           // parameter index -> hook (-1: none registered)
  size_t extra_slots_;
  std::optional<ReducedFloat> compression_;

  // State of the overlapped step in progress.
  GroupCollectives* collectives_ = nullptr;  // non-null between BeginStep and FinishStep
  float grad_scale_ = 1.0f;
  std::vector<char> ready_;               // parameter index -> its gradient is in the bucket
  std::vector<size_t> missing_;           // bucket -> gradients not yet in it
  std::vector<AllreduceHandle> handles_;  // bucket -> its started allreduce
  size_t next_bucket_ = 0;                // buckets before it are started
  OverlapStats stats_;
};

}  // namespace hpo
