// PeerSilence, the liveness watcher's count of its peers' silence, on a fake clock: a stall of the
// watcher's own loop longer than the timeout does not make live peers lost; a peer that is gone is
// found after the timeout of passes, also when every pass is slow.
#include <chrono>

#include <gtest/gtest.h>

#include "common/peer_silence.hpp"

namespace hpo {
namespace {

using Clock = PeerSilence::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr double kTimeoutS = 60.0;
constexpr milliseconds kPeriod(1000);  // PeerWatch's heartbeat period at a 60 s timeout
constexpr milliseconds kNap(20);       // PeerWatch's nap between passes

// Passes every `nap` from `*now` for `span`, hearing `peer` in each pass when `heard`.
void PassFor(PeerSilence* silence, Clock::time_point* now, Clock::duration span,
             Clock::duration nap, int peer, bool heard) {
  const Clock::time_point end = *now + span;
  while (*now < end) {
    *now += nap;
    silence->Pass(*now);
    if (heard) silence->Heard(peer);
  }
}

TEST(PeerSilence, APeerHeardInEveryPassIsNeverSilent) {
  Clock::time_point now{};
  PeerSilence silence(2, kPeriod, now);
  PassFor(&silence, &now, seconds(120), kNap, 1, /*heard=*/true);
  EXPECT_EQ(silence.SilentSeconds(1), 0.0);
}

TEST(PeerSilence, APeerNeverHeardIsSilentForTheTimeTheWatcherRan) {
  Clock::time_point now{};
  PeerSilence silence(2, kPeriod, now);
  PassFor(&silence, &now, seconds(60), kNap, 1, /*heard=*/false);
  EXPECT_GE(silence.SilentSeconds(1), kTimeoutS);
  EXPECT_LT(silence.SilentSeconds(1), kTimeoutS + 0.1);
}

TEST(PeerSilence, TheWatchersOwnStallLongerThanTheTimeoutCountsOnePeriod) {
  Clock::time_point now{};
  PeerSilence silence(2, kPeriod, now);
  PassFor(&silence, &now, seconds(10), kNap, 1, /*heard=*/false);
  now += seconds(92);  // the watcher's thread not run: its first pass since is 92 s late
  silence.Pass(now);
  EXPECT_NEAR(silence.SilentSeconds(1), 10.0 + 1.0, 0.05);
  EXPECT_LT(silence.SilentSeconds(1), kTimeoutS);
}

TEST(PeerSilence, AnswersQueuedDuringTheWatchersStallAreHeardOnWaking) {
  Clock::time_point now{};
  PeerSilence silence(3, kPeriod, now);
  now += seconds(102);
  silence.Pass(now);
  silence.Heard(1);  // rank 1's answer waited in MPI; rank 2 sent nothing
  EXPECT_EQ(silence.SilentSeconds(1), 0.0);
  EXPECT_NEAR(silence.SilentSeconds(2), 1.0, 1e-9);
}

TEST(PeerSilence, ALostPeerIsFoundWhenEveryPassIsSlow) {
  Clock::time_point now{};
  PeerSilence silence(2, kPeriod, now);
  // Passes 3 s apart (a watcher held up on every pass): each counts one period.
  PassFor(&silence, &now, seconds(177), seconds(3), 1, /*heard=*/false);
  EXPECT_NEAR(silence.SilentSeconds(1), 59.0, 1e-9);
  PassFor(&silence, &now, seconds(3), seconds(3), 1, /*heard=*/false);
  EXPECT_GE(silence.SilentSeconds(1), kTimeoutS);
}

TEST(PeerSilence, HearingOnePeerLeavesTheOthersSilent) {
  Clock::time_point now{};
  PeerSilence silence(3, kPeriod, now);
  PassFor(&silence, &now, seconds(30), kNap, 1, /*heard=*/false);
  silence.Heard(2);
  EXPECT_NEAR(silence.SilentSeconds(1), 30.0, 1e-9);
  EXPECT_EQ(silence.SilentSeconds(2), 0.0);
}

}  // namespace
}  // namespace hpo
