// Test-only GroupCollectives whose ranks are threads of one process, so DDP logic runs as a real
// multi-rank group without MPI. A ThreadGroup is the shared state (owned by the test, outliving
// every handle); each thread owns one ThreadGroupCollectives handle for its rank. Every method is
// collective like the MPI implementation's: all ranks call it in the same order with the same
// sizes (a mismatch aborts the test binary). Sums are taken in rank order, so every rank receives
// bit-identical results.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "train/collectives.hpp"

namespace hpo::testing {

class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size_(size), slots_(size), counts_(size) {}

  int size() const { return size_; }

  // Publishes this rank's buffer and its size, then waits for every rank to do the same.
  void Publish(int rank, void* data, size_t count) {
    slots_[rank] = data;
    counts_[rank] = count;
    Barrier();
    if (std::count(counts_.begin(), counts_.end(), count) != size_) {
      std::fprintf(stderr, "ThreadGroup: ranks called a collective with different sizes\n");
      std::abort();
    }
  }
  void* slot(int rank) const { return slots_[rank]; }

  // Returns once all `size` ranks have called it (reusable).
  void Barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return;
    }
    changed_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const int size_;
  std::vector<void*> slots_;
  std::vector<size_t> counts_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

class ThreadGroupCollectives final : public GroupCollectives {
 public:
  ThreadGroupCollectives(ThreadGroup* group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  void AllreduceSum(float* data, size_t count) override { Sum(data, count); }
  void AllreduceSum(double* data, size_t count) override { Sum(data, count); }

  void Broadcast(void* data, size_t bytes, int root) override {
    group_->Publish(rank_, data, bytes);
    if (rank_ != root) std::memcpy(data, group_->slot(root), bytes);
    group_->Barrier();
  }

 private:
  template <typename T>
  void Sum(T* data, size_t count) {
    group_->Publish(rank_, data, count);
    std::vector<T> sum(count, T{0});
    for (int r = 0; r < group_->size(); ++r) {
      const T* source = static_cast<const T*>(group_->slot(r));
      for (size_t i = 0; i < count; ++i) sum[i] += source[i];
    }
    group_->Barrier();  // every rank has read every buffer
    std::copy(sum.begin(), sum.end(), data);
  }

  ThreadGroup* group_;
  int rank_;
};

// Runs body(collectives) on `size` threads, one rank each, and joins them.
inline void RunOnThreads(int size, const std::function<void(GroupCollectives&)>& body) {
  ThreadGroup group(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&group, &body, rank] {
      ThreadGroupCollectives collectives(&group, rank);
      body(collectives);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace hpo::testing
