#include "train/batch_prefetcher.hpp"

#include <stdexcept>
#include <utility>

namespace hpo {
namespace {

// The rank's rows of `step` from `split`; an empty Batch when the rank's slice is empty.
Batch GatherStep(const Dataset& split, const DistributedSampler& sampler, int64_t step) {
  const std::vector<int64_t> indices = sampler.LocalIndices(step);
  if (indices.empty()) return {};
  return split.Gather(torch::tensor(indices, torch::kInt64));
}

}  // namespace

BatchPrefetcher::BatchPrefetcher(const Dataset& split, const DistributedSampler& sampler,
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
    Batch batch;
    std::exception_ptr error;
    try {
      batch = GatherStep(split_, sampler_, step);
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

Batch BatchPrefetcher::Next() {
  if (depth_ == 0) {
    Batch batch = GatherStep(split_, sampler_, next_to_take_);
    std::lock_guard<std::mutex> lock(mutex_);
    ++next_to_take_;
    ++next_to_assemble_;
    return batch;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !ready_.empty() || error_ || stopping_; });
  if (ready_.empty() && error_) std::rethrow_exception(error_);
  if (ready_.empty()) throw std::logic_error("BatchPrefetcher::Next after Stop");
  Batch batch = std::move(ready_.front());
  ready_.pop_front();
  ++next_to_take_;
  lock.unlock();
  changed_.notify_all();
  return batch;
}

}  // namespace hpo
