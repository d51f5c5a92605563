#include "hpo/train/batch_prefetcher.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>

namespace hpo {
namespace {

torch::Tensor GatherTensorRows(const torch::Tensor& source, const std::vector<int64_t>& indices) {
  if (!source.is_contiguous()) {
    return source.index_select(0, torch::tensor(indices, torch::kInt64));
  }
  std::vector<int64_t> shape = source.sizes().vec();
  shape[0] = static_cast<int64_t>(indices.size());
  torch::Tensor rows = torch::empty(shape, source.options());
  const size_t row_bytes =
      static_cast<size_t>(source.numel() / source.size(0)) * source.element_size();
  const auto* from = static_cast<const char*>(source.data_ptr());
  auto* to = static_cast<char*>(rows.data_ptr());
  for (size_t row = 0; row < indices.size(); ++row) {
    std::memcpy(to + row * row_bytes, from + static_cast<size_t>(indices[row]) * row_bytes,
                row_bytes);
  }
  return rows;
}

}  // namespace

TrainingBatch GatherRows(const LabeledTensors& split, const std::vector<int64_t>& indices) {
  if (indices.empty()) return {};
  return {GatherTensorRows(split.inputs, indices), GatherTensorRows(split.labels, indices)};
}

BatchPrefetcher::BatchPrefetcher(const LabeledTensors& split, const DistributedSampler& sampler,
                                 int64_t first_step, int64_t depth)
    : split_(split),
      sampler_(sampler),
      depth_(depth),
      next_to_take_(first_step),
      next_to_assemble_(first_step) {
  if (depth_ > 0 && first_step < sampler_.num_steps()) worker_ = std::thread([this] { Work(); });
}

BatchPrefetcher::~BatchPrefetcher() { Stop(); }

void BatchPrefetcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

int64_t BatchPrefetcher::assembled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_to_assemble_;
}

void BatchPrefetcher::Work() {
  const int64_t steps = sampler_.num_steps();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock,
                  [this] { return stopping_ || static_cast<int64_t>(ready_.size()) < depth_; });
    if (stopping_ || next_to_assemble_ >= steps) return;
    const int64_t step = next_to_assemble_;
    lock.unlock();
    TrainingBatch batch;
    std::exception_ptr error;
    try {
      batch = GatherRows(split_, sampler_.LocalIndices(step));
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      error_ = error;
      changed_.notify_all();
      return;
    }
    ready_.push_back(std::move(batch));
    ++next_to_assemble_;
    changed_.notify_all();
  }
}

TrainingBatch BatchPrefetcher::Next() {
  if (depth_ == 0) {
    TrainingBatch batch = GatherRows(split_, sampler_.LocalIndices(next_to_take_));
    std::lock_guard<std::mutex> lock(mutex_);
    ++next_to_take_;
    ++next_to_assemble_;
    return batch;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !ready_.empty() || error_ || stopping_; });
  if (ready_.empty() && error_) std::rethrow_exception(error_);
  if (ready_.empty()) throw std::logic_error("BatchPrefetcher::Next after Stop");
  TrainingBatch batch = std::move(ready_.front());
  ready_.pop_front();
  ++next_to_take_;
  lock.unlock();
  changed_.notify_all();
  return batch;
}

}  // namespace hpo
