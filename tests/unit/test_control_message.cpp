#include <gtest/gtest.h>

#include <cmath>

#include "coord/control_message.hpp"

namespace hpo {
namespace {

ControlMessage RoundTrip(const ControlMessage& message) {
  ControlMessage decoded;
  Status status = DecodeMessage(EncodeMessage(message), &decoded);
  EXPECT_TRUE(status.ok()) << status.message();
  return decoded;
}

TEST(ControlMessage, TrialRoundTripsWithEveryValueType) {
  ControlMessage message;
  message.kind = MessageKind::kTrial;
  message.trial.trial_id = 42;
  message.trial.seed = 0xfedcba9876543210ULL;
  message.trial.params = {{"lr", 0.001}, {"batch_size", int64_t{128}}, {"optimizer", "adamw"}};
  message.trial.attempt = 2;
  const ControlMessage decoded = RoundTrip(message);
  EXPECT_EQ(decoded.kind, MessageKind::kTrial);
  EXPECT_EQ(decoded.trial.attempt, 2);
  EXPECT_EQ(decoded.trial.trial_id, 42);
  EXPECT_EQ(decoded.trial.seed, 0xfedcba9876543210ULL);
  ASSERT_EQ(decoded.trial.params.size(), 3u);
  EXPECT_EQ(std::get<double>(decoded.trial.params[0].value), 0.001);
  EXPECT_EQ(std::get<int64_t>(decoded.trial.params[1].value), 128);
  EXPECT_EQ(std::get<std::string>(decoded.trial.params[2].value), "adamw");
  EXPECT_EQ(decoded.trial.params[2].name, "optimizer");
}

TEST(ControlMessage, ResultRoundTripsWithCurveAndMessage) {
  ControlMessage message;
  message.kind = MessageKind::kTrialResult;
  message.result.trial_id = 7;
  message.result.status = TrialStatus::kFailed;
  message.result.params = {{"width", int64_t{16}}};
  message.result.duration_s = 12.5;
  message.result.group = 3;
  message.result.curve = {{1, {0.5, 0.6, 0.8, 1.5}}, {2, {0.4, 0.5, 0.85, 1.4}}};
  message.result.message = "non-finite loss at epoch 2 step 10";
  const ControlMessage decoded = RoundTrip(message);
  EXPECT_EQ(decoded.result.trial_id, 7);
  EXPECT_EQ(decoded.result.status, TrialStatus::kFailed);
  EXPECT_TRUE(std::isnan(decoded.result.objective));
  EXPECT_EQ(decoded.result.duration_s, 12.5);
  EXPECT_EQ(decoded.result.group, 3);
  ASSERT_EQ(decoded.result.curve.size(), 2u);
  EXPECT_EQ(decoded.result.curve[1].epoch, 2);
  EXPECT_EQ(decoded.result.curve[1].values, (std::vector<double>{0.4, 0.5, 0.85, 1.4}));
  EXPECT_EQ(decoded.result.message, message.result.message);
}

TEST(ControlMessage, EpochReportAndDecisionRoundTrip) {
  ControlMessage report;
  report.kind = MessageKind::kEpochReport;
  report.trial_id = 9;
  report.metrics = {3, {1.0, 2.0}};
  const ControlMessage decoded = RoundTrip(report);
  EXPECT_EQ(decoded.trial_id, 9);
  EXPECT_EQ(decoded.metrics.epoch, 3);
  EXPECT_EQ(decoded.metrics.values, (std::vector<double>{1.0, 2.0}));

  ControlMessage decision;
  decision.kind = MessageKind::kEpochDecision;
  decision.trial_id = 9;
  decision.keep_going = false;
  EXPECT_FALSE(RoundTrip(decision).keep_going);
  EXPECT_FALSE(RoundTrip(decision).interrupt);
  decision.interrupt = true;
  EXPECT_TRUE(RoundTrip(decision).interrupt);

  ControlMessage request;
  EXPECT_FALSE(RoundTrip(request).interrupt);
  request.interrupt = true;
  EXPECT_TRUE(RoundTrip(request).interrupt);
}

TEST(ControlMessage, TruncatedAndUnknownBytesAreRejected) {
  ControlMessage message;
  message.kind = MessageKind::kTrial;
  message.trial.params = {{"optimizer", "adam"}};
  std::vector<uint8_t> bytes = EncodeMessage(message);
  ControlMessage decoded;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + cut);
    EXPECT_FALSE(DecodeMessage(truncated, &decoded).ok()) << "cut at " << cut;
  }
  std::vector<uint8_t> trailing = bytes;
  trailing.push_back(0);
  EXPECT_FALSE(DecodeMessage(trailing, &decoded).ok());
  EXPECT_FALSE(DecodeMessage({99}, &decoded).ok());
}

}  // namespace
}  // namespace hpo
