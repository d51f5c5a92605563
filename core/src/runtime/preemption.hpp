// Private to hpo_runtime: preemption signals. Slurm sends SIGUSR1 (`--signal`), Kubernetes and
// mpirun send SIGTERM. A PreemptionWatch installs handlers for both that only set a flag; the
// trainer polls it at every step (through the epoch gate), group leaders and rank 0's coordinator
// before every dispatch. A watchdog thread ends the job with exit code 3 (interrupted, resumable)
// when the grace period runs out first, so the job is gone before the platform's SIGKILL. One per
// process, every rank; created after the config is known. The handlers stay installed after it is
// destroyed (a late signal is recorded, not fatal).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace hpo {

class PreemptionWatch {
 public:
  explicit PreemptionWatch(double grace_period_s);
  ~PreemptionWatch();
  PreemptionWatch(const PreemptionWatch&) = delete;
  PreemptionWatch& operator=(const PreemptionWatch&) = delete;

  // Whether a preemption signal has arrived (async-signal-safe, lock-free).
  static bool Requested();
  // The first signal's number, 0 before one arrives.
  static int SignalNumber();

 private:
  void Watch();

  const double grace_period_s_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread watchdog_;
};

}  // namespace hpo
