// Private to hpo_runtime: preemption signals. Slurm sends SIGUSR1 (`--signal`), Kubernetes and
// mpirun send SIGTERM. A PreemptionWatch installs handlers for both that only set a flag; the
// trainer polls it at every step (through the epoch gate), group leaders and rank 0's coordinator
// before every dispatch. A watchdog thread ends the job with exit code 3 (interrupted, resumable)
// when the grace period runs out first, so the job is gone before the platform's SIGKILL. One per
// process, every rank; created after the config is known. The handlers stay installed after it is
// destroyed (a late signal is recorded, not fatal). A signal that comes before (while MPI starts,
// the config is shared, or hpo hands over to hpo-torch) waits: `hpo sweep` blocks both first
// (HoldPreemptionSignals), the watch unblocks them once its handlers are in, and the held signal
// then counts as any other. One sent before `main` (while the dynamic loader maps hpo's libraries,
// milliseconds) still ends the rank as the signal's default action does: no program covers that.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace hpo {

// Blocks SIGTERM and SIGUSR1 in the calling thread (and the threads and programs it starts, across
// execv) until a PreemptionWatch unblocks them. Call it first thing in `hpo sweep`, on the main
// thread.
void HoldPreemptionSignals();

class PreemptionWatch {
 public:
  // Installs the handlers, then unblocks the signals HoldPreemptionSignals held (delivering one
  // that came meanwhile). Call it on the thread that called HoldPreemptionSignals.
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
