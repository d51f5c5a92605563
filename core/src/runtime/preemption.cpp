#include "preemption.hpp"

#include <signal.h>

#include <chrono>
#include <cstring>
#include <string>

#include "hpo/mpi/communicator.hpp"

namespace hpo {

namespace {

std::atomic<int> g_signal{0};

void OnPreemptionSignal(int number) {
  int none = 0;
  g_signal.compare_exchange_strong(none, number);
}

constexpr int kPreemptionSignals[] = {SIGTERM, SIGUSR1};

sigset_t PreemptionSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int number : kPreemptionSignals) sigaddset(&set, number);
  return set;
}

}  // namespace

void HoldPreemptionSignals() {
  const sigset_t set = PreemptionSignalSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

PreemptionWatch::PreemptionWatch(double grace_period_s) : grace_period_s_(grace_period_s) {
  g_signal = 0;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnPreemptionSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int number : kPreemptionSignals) sigaction(number, &action, nullptr);
  const sigset_t set = PreemptionSignalSet();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  watchdog_ = std::thread([this] { Watch(); });
}

PreemptionWatch::~PreemptionWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  watchdog_.join();
  // The handler stays: it only records the signal, and a SIGTERM/SIGUSR1 sent to every rank can
  // reach one after the sweep ended there (a command trial stops in milliseconds), where the
  // default action would turn a clean exit into a death by signal that mpirun reports as a failure.
}

bool PreemptionWatch::Requested() { return g_signal.load(std::memory_order_relaxed) != 0; }

int PreemptionWatch::SignalNumber() { return g_signal.load(); }

void PreemptionWatch::Watch() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point deadline = Clock::time_point::max();
  while (!stopping_) {
    stop_.wait_for(lock, std::chrono::milliseconds(100));
    if (stopping_ || !Requested()) continue;
    const Clock::time_point now = Clock::now();
    if (deadline == Clock::time_point::max()) {
      deadline = now + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(grace_period_s_));
    } else if (now >= deadline) {
      AbortJob(ExitCode::kInterrupted,
               "signal " + std::to_string(SignalNumber()) + ": the grace period of " +
                   std::to_string(static_cast<int64_t>(grace_period_s_)) +
                   " s ran out before every group had checkpointed; the study is saved and resumes "
                   "from the last checkpoints");
    }
  }
}

}  // namespace hpo
