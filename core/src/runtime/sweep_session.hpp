// SweepSession: the wiring every run of a sweep shares, whoever drives it (RunSweep; the
// coordinator benchmarks bench/dispatch_overhead.cpp and bench/verdict_latency.cpp; the MPI runtime
// test). It owns the control communicator (a duplicate of the world, so that ControlMessages
// between group leaders and rank 0 never meet other traffic) and, on world rank 0, the study
// writer, the coordinator over it and the thread that serves the coordinator (ServeCoordinator)
// while rank 0's own thread runs its group's trials like every other rank. What differs between
// drivers comes in as seams: the study writer (the sweep's file, a benchmark's study, a test's
// in-memory one), the coordinator's collaborators (CoordinatorDeps: searcher, scheduler, clock,
// progress stream, artifacts) and the callback ServeCoordinator makes before every probe for a
// message (preemption and lost hosts in RunSweep; nothing elsewhere).
//
// Who calls what (world ranks):
//   constructor     every rank, at the same point: collective over the world (MPI_Comm_dup).
//   control()       every rank: what leaders talk to rank 0 over (LeaderChannel, RunGroupTrials).
//   Coordinate      rank 0 only, once, before Start: takes over the study, makes the coordinator.
//   coordinator(), study(), serving()   rank 0 only, after Coordinate.
//   Start           every rank, once, not collective: rank 0 starts serving on a thread of its
//                   own; the other ranks return at once.
//   Join            every rank, once, after its own part of the sweep, not collective: rank 0 waits
//                   until the coordinator has finished (every group told there is nothing left to
//                   run, every result published); the other ranks return at once.
// A coordinator that fails, a malformed message or a failed MPI call ends the job (AbortJob), as
// ServeCoordinator says. Destroying a rank 0 session that was started and not joined joins it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "coord/coordinator.hpp"
#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "study/study_file.hpp"

namespace hpo {

class SweepSession {
 public:
  SweepSession(const Communicator& world, const GroupLayout& layout);
  ~SweepSession();
  SweepSession(const SweepSession&) = delete;
  SweepSession& operator=(const SweepSession&) = delete;

  const Communicator& control() const { return control_; }

  // Rank 0: the coordinator of `config` (borrowed: it must outlive the session) for the layout's
  // groups, over `study`, which the session owns from now on (deps.study is set to it).
  void Coordinate(const SweepConfig& config, std::unique_ptr<StudyWriter> study,
                  CoordinatorDeps deps);
  Coordinator& coordinator() { return *coordinator_; }
  StudyWriter& study() { return *study_; }
  // Rank 0, any thread: true from Coordinate until ServeCoordinator has returned.
  bool serving() const { return serving_.load(); }

  // On rank 0, serves the coordinator on its own thread, calling `poll` before every probe.
  void Start(std::function<void()> poll = [] {});
  // On rank 0, waits for the serving thread to end.
  void Join();

 private:
  Communicator control_;
  const bool root_;
  const int num_groups_;
  const std::vector<int> group_of_world_rank_;
  std::unique_ptr<StudyWriter> study_;
  std::unique_ptr<Coordinator> coordinator_;  // borrows study_
  std::atomic<bool> serving_{false};
  std::thread server_;
};

}  // namespace hpo
