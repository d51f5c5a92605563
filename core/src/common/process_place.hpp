// Where a process runs, as far as a lost host goes, and whether a process of this machine is still
// running (Linux /proc).
//
// Two processes with the same `machine` share one kernel (its boot id), one network namespace and
// one process-id namespace: no cut link or failed host can part them (a host that goes takes both
// with it), and each can read the other's state in /proc. PeerWatch uses it so that a rank on rank
// 0's own machine does not take a rank 0 whose heartbeat thread is starved of CPU for a lost host.
#pragma once

#include <cstdint>
#include <string>

namespace hpo {

struct ProcessPlace {
  std::string machine;  // "BOOT_ID NET_NS PID_NS"; empty where /proc cannot tell
  int64_t pid = 0;
  int64_t start_ticks = 0;  // when the process started (clock ticks after boot): tells a reused pid
};

// The place of process `pid` of this machine (its machine empty when it is gone or /proc cannot
// tell), and this process's.
ProcessPlace PlaceOf(int64_t pid);
ProcessPlace ThisProcessPlace();

enum class ProcessState {
  kRunning,  // running, runnable or waiting (for CPU, I/O, a lock...)
  kStopped,  // stopped by a signal (SIGSTOP) or held by a debugger
  kGone,     // exited (a zombie too), or its pid now names another process
};

// The state of the process `place` names, which must be of this machine.
ProcessState StateOf(const ProcessPlace& place);

}  // namespace hpo
