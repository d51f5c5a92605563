// Liveness of the world's ranks: a lost host (link down, node gone, every process on it killed)
// must end the job in bounded time instead of leaving the other ranks waiting forever in a
// collective or for a reply.
//
// Every rank runs one thread over its own duplicate of the world communicator. Rank 0 sends every
// other rank a heartbeat each period (timeout / 5, at most 1 s) and every rank answers each one.
// Rank 0 declares lost every rank it has not heard from for `timeout_s`; any other rank declares
// rank 0 lost when its heartbeats stop for `timeout_s`. The thread then calls `on_lost` once, on
// itself, with the lost ranks and their hosts, and stops watching. Heartbeats travel on the
// thread's own communicator, so a rank busy in training (or blocked in a collective) still
// answers; the thread naps between probes (no spinning core).
//
// A rank on rank 0's own machine (ProcessPlace: one kernel, one network namespace) cannot lose rank
// 0 to a lost host: a host that goes takes both. It takes rank 0 for lost only when rank 0's
// process is gone or stopped (SIGSTOP), and otherwise waits, once saying so: rank 0's watcher is
// then alive but not run. Under load the scheduler can leave one thread runnable and unrun for
// seconds while its process's other threads run (a resume of a 2-rank job on 2 cores, beside a
// training sweep: rank 0's watcher waited 0.3 to 1.6 s on the run queue, again and again, in the
// first seconds; bench/RESULTS.md), and before this rule such a stall of `timeout_s` ended the job
// with exit 4. A rank 0 on another machine is judged by its heartbeats alone.
//
// Silence is counted in the watcher's own running time (PeerSilence): a pass of its loop that comes
// late (the thread not run on a loaded machine, or held up inside MPI) counts against the peers
// for at most one period. Without that, a root watcher stalled for longer than the timeout sent
// no heartbeats, so heard no answers, and took every rank for lost on waking (a live rank "silent
// for 102.0 s" at load 17 on 2 cores). A lost rank is still found after `timeout_s` of the
// watcher's running time.
//
// Cost: 2 (world size - 1) messages per period on rank 0, 2 per period on every other rank; the
// world's host names and process places are gathered once, in the constructor. The thread is named
// hpo-peer-watch.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/process_place.hpp"
#include "hpo/mpi/communicator.hpp"

namespace hpo {

// Which ranks went silent, as rank `observer` (on `observer_host`) saw it.
struct LostPeers {
  int observer = 0;
  std::string observer_host;
  double silent_s = 0.0;  // how long the first of them has been silent (PeerSilence)
  std::vector<int> ranks;
  std::vector<std::string> hosts;  // one per rank in `ranks`
  // "rank 3 on node-b (silent for 10.2 s)" or "ranks 2, 3 on node-b (silent for ...)".
  std::string Describe() const;
};

class PeerWatch {
 public:
  // Collective over `world`: duplicates it and gathers every rank's host name (from MPI's
  // processor name) and process place, then starts the thread. A world of one rank watches nothing.
  PeerWatch(const Communicator& world, double timeout_s,
            std::function<void(const LostPeers&)> on_lost);
  // Stops the thread (not collective: the ranks stop within one nap of each other at the end of
  // a sweep, far under the timeout, so no rank mistakes another's stop for a loss).
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // The host name of each world rank.
  const std::vector<std::string>& hosts() const { return hosts_; }

 private:
  void WatchFromRoot();
  void WatchRoot();
  // A rank that has not heard from rank 0 for `silent_s` >= the timeout: whether rank 0 is lost.
  bool RootLost(double silent_s);
  bool Stopping() const { return stopping_.load(std::memory_order_relaxed); }

  Communicator comm_;
  double timeout_s_;
  std::function<void(const LostPeers&)> on_lost_;
  std::vector<std::string> hosts_;
  ProcessPlace root_place_;
  bool beside_root_ = false;  // this rank, not rank 0, runs on rank 0's machine
  bool starved_root_noted_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace hpo
