// How long each peer of a liveness watcher (PeerWatch) has been silent, counted in the watcher's
// own running time.
//
// A watcher passes through its loop every few tens of milliseconds. A pass that comes much later
// than that is a stall of the watcher itself (its thread not run on a loaded machine, or held up
// inside the MPI library): during it the watcher could neither send its heartbeats, which the
// peers only answer, nor take in the answers already on their way. So a stall counts against the
// peers for at most `longest_pass`; the rest is the watcher's own silence, not theirs. A peer that
// is really gone is still found after `timeout` of passes (every pass counts, up to
// `longest_pass`).
#pragma once

#include <chrono>
#include <vector>

namespace hpo {

class PeerSilence {
 public:
  using Clock = std::chrono::steady_clock;

  // Peers 0 .. peers - 1, none silent at `start`.
  PeerSilence(int peers, Clock::duration longest_pass, Clock::time_point start);

  // One pass of the watcher's loop at `now`: every peer's silence grows by the time since the
  // previous pass, at most `longest_pass`.
  void Pass(Clock::time_point now);
  // A message from `peer` was taken in: it is not silent.
  void Heard(int peer);
  double SilentSeconds(int peer) const;

 private:
  Clock::duration longest_pass_;
  Clock::time_point last_pass_;
  std::vector<Clock::duration> silent_;
};

}  // namespace hpo
