// Helpers shared by the coordinator tests (test_coordinator.cpp, test_warm_start.cpp).
#pragma once

#include <gtest/gtest.h>

#include "coord/coordinator.hpp"
#include "hpo/config.hpp"
#include "sched/scheduler.hpp"
#include "search/searcher.hpp"

namespace hpo::test_support {

// A coordinator's deps for CONFIG: the searcher and scheduler its config makes, STUDY, and a
// clock that stays at 0. SEARCHER and SCHEDULER, when given, are left pointing at the two, so a
// test can read their state while the coordinator owns them.
inline CoordinatorDeps ConfiguredDeps(const SweepConfig& config, StudyWriter* study,
                                      Searcher** searcher = nullptr,
                                      Scheduler** scheduler = nullptr) {
  CoordinatorDeps deps;
  EXPECT_TRUE(MakeSearcher(config, &deps.searcher).ok());
  EXPECT_TRUE(MakeScheduler(config, &deps.scheduler).ok());
  if (searcher != nullptr) *searcher = deps.searcher.get();
  if (scheduler != nullptr) *scheduler = deps.scheduler.get();
  deps.study = study;
  deps.clock = [] { return 0.0; };
  return deps;
}

}  // namespace hpo::test_support
