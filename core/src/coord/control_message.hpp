// The control plane's messages between rank 0's coordinator and the trial groups' leaders, and
// their byte encoding (little-endian host order; both ends run the same binary). Pure value types
// and functions; thread-safe.
//
// The conversation, per group leader:
//   leader -> 0  kRequestTrial                 0 -> leader  kTrial | kNoMoreTrials
//   leader -> 0  kEpochReport (after an epoch)  0 -> leader  kEpochDecision
//   leader -> 0  kTrialResult (no reply; status running: the trial was interrupted and left a
//                checkpoint to continue from)
// `interrupt` on a request: the leader saw a preemption signal, the sweep stops; on a decision: the
// sweep is stopping, the trial checkpoints and ends as interrupted.
#pragma once

#include <cstdint>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/trial.hpp"

namespace hpo {

enum class MessageKind : uint8_t {
  kRequestTrial = 1,
  kTrial = 2,
  kNoMoreTrials = 3,
  kEpochReport = 4,
  kEpochDecision = 5,
  kTrialResult = 6,
};

struct ControlMessage {
  MessageKind kind = MessageKind::kRequestTrial;
  TrialSpec trial;         // kTrial
  int64_t trial_id = -1;   // kEpochReport, kEpochDecision
  EpochMetrics metrics;    // kEpochReport
  bool keep_going = true;  // kEpochDecision
  bool interrupt = false;  // kRequestTrial, kEpochDecision
  TrialResult result;      // kTrialResult
};

std::vector<uint8_t> EncodeMessage(const ControlMessage& message);

// Failure when the bytes are not a message EncodeMessage wrote (truncated, unknown kind).
Status DecodeMessage(const std::vector<uint8_t>& bytes, ControlMessage* message);

}  // namespace hpo
