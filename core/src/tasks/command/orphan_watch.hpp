// Ends what a rank's programs left behind when the rank itself dies without ending them (kill -9,
// MPI_Abort): its subreaper role (process_tree.hpp) dies with it, and PR_SET_PDEATHSIG reaches
// only its direct children, so a program's own children would live on. Every program of the rank
// gets HPO_PROCESS_TAG=TAG in its environment, which what it starts inherits. A watcher, /bin/sh
// in a session of its own outside the rank's descendants, waits on a pipe that only the rank holds
// open; when the rank ends without saying that nothing is left, the watcher finds every process
// whose environment holds the tag (/proc/PID/environ), sends SIGTERM, then SIGKILL after the
// grace period, and exits. (This is Jenkins' ProcessTreeKiller's rule; a process that clears its
// environment escapes it.) Linux only; no MPI, no torch.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "hpo/status.hpp"

namespace hpo {

// Owns the write end of the watcher's pipe. Start it before the rank becomes a subreaper, so that
// the watcher is not the rank's descendant (EndAllDescendants would end it). Move-only; one
// thread uses it.
class OrphanWatch {
 public:
  // Starts the watcher with a tag unique to this process; grace_s: between SIGTERM and SIGKILL.
  // Failure naming the reason when /bin/sh cannot be started.
  static Status Start(double grace_s, std::unique_ptr<OrphanWatch>* watch);

  // Tells the watcher that nothing is left to end (the rank ended its programs' processes itself)
  // and lets it exit.
  ~OrphanWatch();
  OrphanWatch(const OrphanWatch&) = delete;
  OrphanWatch& operator=(const OrphanWatch&) = delete;

  // The value of HPO_PROCESS_TAG for every program this rank starts ("PID-RANDOM").
  const std::string& tag() const { return tag_; }

 private:
  OrphanWatch(int pipe_fd, std::string tag) : pipe_fd_(pipe_fd), tag_(std::move(tag)) {}

  int pipe_fd_;
  std::string tag_;
};

// The environment variable that tags a rank's programs.
inline constexpr char kProcessTagVariable[] = "HPO_PROCESS_TAG";

}  // namespace hpo
