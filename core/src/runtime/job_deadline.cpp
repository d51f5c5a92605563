#include "runtime/job_deadline.hpp"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "common/job_end_line.hpp"

namespace hpo {

namespace {

using Clock = std::chrono::steady_clock;

// What is armed: when, with which code, and the text written then (formatted when armed, so the
// thread that ends the process allocates nothing).
struct ArmedDeadline {
  Clock::time_point when;
  ExitCode code = ExitCode::kFailure;
  std::string text;
};

// Never destroyed: the thread may still wait on it while the process exits.
struct DeadlineState {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<ArmedDeadline> armed;
  bool thread_started = false;
};

DeadlineState& State() {
  static DeadlineState* state = new DeadlineState();
  return *state;
}

[[noreturn]] void EndProcess(const ArmedDeadline& deadline) {
  ssize_t written = 0;
  while (written < static_cast<ssize_t>(deadline.text.size())) {
    const ssize_t n = write(STDERR_FILENO, deadline.text.data() + written,
                            deadline.text.size() - static_cast<size_t>(written));
    if (n <= 0) break;
    written += n;
  }
  std::_Exit(static_cast<int>(deadline.code));
}

void WatchDeadline() {
  pthread_setname_np(pthread_self(), "hpo-deadline");
  DeadlineState& state = State();
  std::unique_lock<std::mutex> lock(state.mutex);
  while (true) {
    if (!state.armed) {
      state.changed.wait(lock);
    } else if (Clock::now() >= state.armed->when) {
      EndProcess(*state.armed);
    } else {
      state.changed.wait_until(lock, state.armed->when);
    }
  }
}

}  // namespace

void ArmJobDeadline(double seconds, ExitCode code, const std::string& message) {
  DeadlineState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  ArmedDeadline deadline;
  deadline.when = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds));
  deadline.code = code;
  deadline.text = message + "\n" + JobEndLine(static_cast<int>(code)) + "\n";
  state.armed = std::move(deadline);
  if (!state.thread_started) {
    std::thread(WatchDeadline).detach();
    state.thread_started = true;
  }
  state.changed.notify_all();
}

void DisarmJobDeadline() {
  DeadlineState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.armed.reset();
  state.changed.notify_all();
}

}  // namespace hpo
