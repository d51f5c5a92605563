// ProcessPlace and StateOf (/proc): this process's place; a child running, stopped by SIGSTOP,
// exited and reaped, and a place whose start time does not match (a pid used again).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/process_place.hpp"

namespace hpo {
namespace {

// A child that sleeps until killed.
pid_t StartSleepingChild() {
  const pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  return child;
}

TEST(ProcessPlace, ThisProcessHasAMachineAndIsRunning) {
  const ProcessPlace place = ThisProcessPlace();
  EXPECT_FALSE(place.machine.empty());
  EXPECT_EQ(place.pid, static_cast<int64_t>(getpid()));
  EXPECT_GT(place.start_ticks, 0);
  EXPECT_EQ(StateOf(place), ProcessState::kRunning);
  EXPECT_EQ(ThisProcessPlace().machine, place.machine);
}

TEST(ProcessPlace, AStoppedChildIsStoppedAndAReapedOneIsGone) {
  const pid_t child = StartSleepingChild();
  ASSERT_GT(child, 0);
  const ProcessPlace place = PlaceOf(child);
  EXPECT_EQ(place.machine, ThisProcessPlace().machine);
  EXPECT_EQ(StateOf(place), ProcessState::kRunning);
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  EXPECT_EQ(StateOf(place), ProcessState::kStopped);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(StateOf(place), ProcessState::kGone);
}

TEST(ProcessPlace, AnotherStartTimeIsAnotherProcess) {
  ProcessPlace place = ThisProcessPlace();
  place.start_ticks += 1;
  EXPECT_EQ(StateOf(place), ProcessState::kGone);
}

}  // namespace
}  // namespace hpo
