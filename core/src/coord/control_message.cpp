#include "coord/control_message.hpp"

#include <string>

#include "common/bytes.hpp"

namespace hpo {

std::vector<uint8_t> EncodeMessage(const ControlMessage& message) {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.Put(static_cast<uint8_t>(message.kind));
  switch (message.kind) {
    case MessageKind::kRequestTrial:
      writer.Put<uint8_t>(message.interrupt ? 1 : 0);
      break;
    case MessageKind::kNoMoreTrials:
      break;
    case MessageKind::kTrial:
      writer.Put(message.trial.trial_id);
      writer.Put(message.trial.seed);
      writer.PutAssignment(message.trial.params);
      writer.Put(message.trial.attempt);
      writer.Put(message.trial.parent_trial);
      writer.Put(message.trial.parent_epoch);
      break;
    case MessageKind::kEpochReport:
      writer.Put(message.trial_id);
      writer.PutMetrics(message.metrics);
      break;
    case MessageKind::kEpochDecision:
      writer.Put(message.trial_id);
      writer.Put<uint8_t>(message.keep_going ? 1 : 0);
      writer.Put<uint8_t>(message.interrupt ? 1 : 0);
      break;
    case MessageKind::kTrialResult: {
      const TrialResult& result = message.result;
      writer.Put(result.trial_id);
      writer.Put(static_cast<uint8_t>(result.status));
      writer.Put(result.objective);
      writer.PutAssignment(result.params);
      writer.Put(result.epochs);
      writer.Put(result.duration_s);
      writer.Put(result.group);
      writer.Put<uint64_t>(result.curve.size());
      for (const EpochMetrics& metrics : result.curve) writer.PutMetrics(metrics);
      writer.PutString(result.message);
      break;
    }
  }
  return bytes;
}

Status DecodeMessage(const std::vector<uint8_t>& bytes, ControlMessage* message) {
  ByteReader reader(bytes);
  ControlMessage decoded;
  const uint8_t kind = reader.Get<uint8_t>();
  if (!reader.ok() || kind < static_cast<uint8_t>(MessageKind::kRequestTrial) ||
      kind > static_cast<uint8_t>(MessageKind::kTrialResult)) {
    return Status::Failure("control message of unknown kind " + std::to_string(kind));
  }
  decoded.kind = static_cast<MessageKind>(kind);
  switch (decoded.kind) {
    case MessageKind::kRequestTrial:
      decoded.interrupt = reader.Get<uint8_t>() != 0;
      break;
    case MessageKind::kNoMoreTrials:
      break;
    case MessageKind::kTrial:
      decoded.trial.trial_id = reader.Get<int64_t>();
      decoded.trial.seed = reader.Get<uint64_t>();
      decoded.trial.params = reader.GetAssignment();
      decoded.trial.attempt = reader.Get<int64_t>();
      decoded.trial.parent_trial = reader.Get<int64_t>();
      decoded.trial.parent_epoch = reader.Get<int64_t>();
      break;
    case MessageKind::kEpochReport:
      decoded.trial_id = reader.Get<int64_t>();
      decoded.metrics = reader.GetMetrics();
      break;
    case MessageKind::kEpochDecision:
      decoded.trial_id = reader.Get<int64_t>();
      decoded.keep_going = reader.Get<uint8_t>() != 0;
      decoded.interrupt = reader.Get<uint8_t>() != 0;
      break;
    case MessageKind::kTrialResult: {
      TrialResult& result = decoded.result;
      result.trial_id = reader.Get<int64_t>();
      const uint8_t status = reader.Get<uint8_t>();
      if (status > static_cast<uint8_t>(TrialStatus::kPaused)) {
        return Status::Failure("control message with unknown trial status");
      }
      result.status = static_cast<TrialStatus>(status);
      result.objective = reader.Get<double>();
      result.params = reader.GetAssignment();
      result.epochs = reader.Get<int64_t>();
      result.duration_s = reader.Get<double>();
      result.group = reader.Get<int64_t>();
      const uint64_t epochs = reader.Get<uint64_t>();
      for (uint64_t i = 0; i < epochs && reader.ok(); ++i) {
        result.curve.push_back(reader.GetMetrics());
      }
      result.message = reader.GetString();
      break;
    }
  }
  if (!reader.ok() || !reader.at_end()) {
    return Status::Failure("truncated or malformed control message");
  }
  *message = std::move(decoded);
  return Status::Ok();
}

}  // namespace hpo
