// A W&B run's transaction log read as a command trial's metric source (platforms/wandb/
// run_log.hpp): a real log written by wandb 0.31.0 (tests/unit/data/wandb/make_fixture.py) read
// whole and as it grows, records framed by hand across LevelDB's 32 KiB blocks, and each kind of
// damage a Failure naming the file and byte.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "platforms/wandb/run_log.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

const std::string kFixture = HPO_SOURCE_DIR "/tests/unit/data/wandb/run-fixture.wandb";
const std::string kRunId = "fixture";
const std::string kRunFolder = "offline-run-20261129_052105-fixture";

// What the fixture's four wandb.log steps (the last with a commit=False item merged in) give.
// (W&B's _runtime and _timestamp are left out, and its _step where the program logs an epoch.)
const std::vector<std::string> kFixtureLines = {
    R"({"val_loss": 0.9090909090909091, "opt/lr": 0.1, "phase": "train", "epoch": 0})",
    R"({"val_loss": 0.8333333333333334, "opt/lr": 0.1, "phase": "train", "epoch": 1})",
    R"({"epoch": 2, "val_loss": 0.7692307692307692, "opt/lr": 0.1, "phase": "train"})",
    R"({"extra": 7, "val_loss": 0.5, "epoch": 3})",
};

std::string ReadBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
}

// --- Hand encoding: protobuf's wire format and W&B's LevelDB framing. ---

std::string Varint(uint64_t value) {
  std::string bytes;
  while (value >= 0x80) {
    bytes += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  return bytes + static_cast<char>(value);
}

// A length-delimited field.
std::string Field(uint64_t number, const std::string& contents) {
  return Varint(number << 3 | 2) + Varint(contents.size()) + contents;
}

// A HistoryItem whose nested_key holds `parts` (wandb-core's form of every key).
std::string Item(const std::vector<std::string>& parts, const std::string& value_json) {
  std::string item;
  for (const std::string& part : parts) item += Field(2, part);
  return item + Field(16, value_json);
}

// A Record (num 1) holding a HistoryRecord of `items`.
std::string HistoryRecord(const std::vector<std::string>& items) {
  std::string history;
  for (const std::string& item : items) history += Field(1, item);
  return Varint(1 << 3 | 0) + Varint(1) + Field(2, history);
}

// A Record of exactly `size` bytes (at least 4) that is no history: an OutputRecord of 'x's.
std::string FillerRecord(size_t size) {
  size_t text = size - 4;
  while (1 + Varint(text).size() + text < size) ++text;
  while (1 + Varint(text).size() + text > size) --text;
  return Field(4, std::string(text, 'x'));
}

// A transaction log of `records` as wandb-core's writer frames them: the 7-byte W&B header, then
// chunks that never cross a 32 KiB block (FULL, or FIRST, MIDDLE..., LAST), a block's last 1 to 6
// bytes zeros, each chunk's checksum WandbRunLogChecksum of its type and payload.
std::string Framed(const std::vector<std::string>& records) {
  constexpr size_t kBlock = 32768;
  std::string file(":W&B\xE1\xBE\x00", 7);
  for (const std::string& record : records) {
    size_t done = 0;
    bool first = true;
    while (first || done < record.size()) {
      const size_t left = kBlock - file.size() % kBlock;
      if (left < 7) {
        file.append(left, '\0');
        continue;
      }
      const size_t length = std::min(record.size() - done, left - 7);
      const bool last = done + length == record.size();
      const char type = first ? (last ? 1 : 2) : (last ? 4 : 3);
      const std::string typed = type + record.substr(done, length);
      const uint32_t checksum = WandbRunLogChecksum(typed);
      for (int i = 0; i < 4; ++i) file += static_cast<char>(checksum >> (8 * i));
      file += static_cast<char>(length & 0xFF);
      file += static_cast<char>(length >> 8);
      file += typed;
      done += length;
      first = false;
    }
  }
  return file;
}

class WandbRunLogTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_wandb_run_log_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The path of run-ID.wandb in the run folder DIR/wandb/FOLDER, which is made.
  std::string LogIn(const std::string& folder, const std::string& run_id = kRunId) {
    fs::create_directories(fs::path(dir_) / "wandb" / folder);
    return (fs::path(dir_) / "wandb" / folder / ("run-" + run_id + ".wandb")).string();
  }

  // Polls once more, expecting success, and returns the new lines.
  std::vector<std::string> Poll(WandbRunLog& log) {
    std::vector<std::string> lines;
    const Status status = log.Poll(&lines);
    EXPECT_TRUE(status.ok()) << status.message();
    return lines;
  }

  // The message of the failure the next poll must give.
  std::string Failure(WandbRunLog& log) {
    std::vector<std::string> lines;
    const Status status = log.Poll(&lines);
    EXPECT_FALSE(status.ok());
    return status.message();
  }

  // Writes `bytes` into `path` `piece` bytes at a time, polling after each; returns every line.
  std::vector<std::string> GrowAndPoll(WandbRunLog& log, const std::string& path,
                                       const std::string& bytes, size_t piece) {
    std::vector<std::string> lines;
    std::ofstream file(path, std::ios::binary);
    for (size_t at = 0; at < bytes.size(); at += piece) {
      file << bytes.substr(at, piece);
      file.flush();
      for (std::string& line : Poll(log)) lines.push_back(std::move(line));
    }
    return lines;
  }

  std::string dir_;
};

TEST(WandbRunLogChecksumTest, IsZlibsCrc32AsTheRealLogUsesIt) {
  // The CRC-32 check value (IEEE polynomial), and two more of zlib.crc32.
  EXPECT_EQ(WandbRunLogChecksum("123456789"), 0xCBF43926u);
  EXPECT_EQ(WandbRunLogChecksum(""), 0u);
  EXPECT_EQ(WandbRunLogChecksum("a"), 0xE8B7BE43u);
  // The real log's first chunk (after the 7-byte file header) carries it over type and payload.
  const std::string real = ReadBytes(kFixture);
  ASSERT_GT(real.size(), 14u);
  const size_t length = static_cast<uint8_t>(real[11]) | static_cast<uint8_t>(real[12]) << 8;
  uint32_t stored = 0;
  for (int i = 3; i >= 0; --i) stored = stored << 8 | static_cast<uint8_t>(real[7 + i]);
  EXPECT_EQ(WandbRunLogChecksum(real.substr(13, 1 + length)), stored);
}

TEST_F(WandbRunLogTest, ReadsARealLogWholeIntoOneLinePerHistoryRecord) {
  const std::string path = LogIn(kRunFolder);
  WriteBytes(path, ReadBytes(kFixture));
  WandbRunLog log(dir_, kRunId, "val_loss");
  EXPECT_EQ(Poll(log), kFixtureLines);
  EXPECT_TRUE(log.started());
  EXPECT_EQ(log.path(), path);
  EXPECT_TRUE(Poll(log).empty());  // each line once
}

TEST_F(WandbRunLogTest, ReadsARealLogAsItGrowsEachLineOnce) {
  const std::string real = ReadBytes(kFixture);
  for (const size_t piece : {size_t{1}, size_t{5}, size_t{64}, size_t{700}}) {
    SCOPED_TRACE("piece " + std::to_string(piece));
    const std::string folder = kRunFolder + "-" + std::to_string(piece);
    fs::remove_all(fs::path(dir_) / "wandb");
    WandbRunLog log(dir_, kRunId, "val_loss");
    EXPECT_EQ(GrowAndPoll(log, LogIn(folder), real, piece), kFixtureLines);
    EXPECT_TRUE(Poll(log).empty());
  }
}

TEST_F(WandbRunLogTest, ALogThatNeverAppearsGivesNothing) {
  WandbRunLog log(dir_, kRunId, "val_loss");
  EXPECT_TRUE(Poll(log).empty());
  EXPECT_FALSE(log.started());
  EXPECT_EQ(log.path(), dir_ + "/wandb/*/run-fixture.wandb");
  // Another run's log, and the agent's parameter folder, are not this run's.
  WriteBytes(LogIn("offline-run-20261129_052105-other", "other"), ReadBytes(kFixture));
  fs::create_directories(fs::path(dir_) / "wandb" / "sweep-hpo");
  EXPECT_TRUE(Poll(log).empty());
  EXPECT_FALSE(log.started());
}

TEST_F(WandbRunLogTest, APartialFileHeaderWaitsForTheRest) {
  const std::string path = LogIn(kRunFolder);
  const std::string real = ReadBytes(kFixture);
  WandbRunLog log(dir_, kRunId, "val_loss");
  for (const size_t size : {size_t{0}, size_t{3}, size_t{6}, size_t{7}, size_t{10}}) {
    WriteBytes(path, real.substr(0, size));
    EXPECT_TRUE(Poll(log).empty()) << size;
    EXPECT_TRUE(log.started());
  }
  WriteBytes(path, real);
  EXPECT_EQ(Poll(log), kFixtureLines);
}

TEST_F(WandbRunLogTest, ABadChecksumIsCorruptionAtItsChunk) {
  const std::string path = LogIn(kRunFolder);
  std::string bytes = ReadBytes(kFixture);
  bytes[20] ^= 0x01;  // inside the first chunk's payload, which starts at byte 7
  WriteBytes(path, bytes);
  WandbRunLog log(dir_, kRunId, "val_loss");
  const std::string message = Failure(log);
  EXPECT_NE(message.find(path + ": corrupt at byte 7: the checksum"), std::string::npos) << message;
  EXPECT_EQ(Failure(log), message);  // final
}

TEST_F(WandbRunLogTest, AnImpossibleChunkHeaderIsCorruption) {
  const std::string real = ReadBytes(kFixture);
  std::string bad_type = real;
  bad_type[13] = 9;
  std::string too_long = real;
  too_long[11] = static_cast<char>(0xFF);
  too_long[12] = static_cast<char>(0x7F);
  std::string zeros = real.substr(0, 7) + std::string(20, '\0');
  for (const auto& [bytes, what] :
       {std::pair{bad_type, std::string("byte 7: a chunk header of the type 9")},
        std::pair{too_long, std::string("byte 7: a chunk of 32767 bytes runs past")},
        std::pair{zeros, std::string("byte 7: a chunk header of the type 0")}}) {
    fs::remove_all(fs::path(dir_) / "wandb");
    WriteBytes(LogIn(kRunFolder), bytes);
    WandbRunLog log(dir_, kRunId, "val_loss");
    const std::string message = Failure(log);
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

TEST_F(WandbRunLogTest, AForeignFileOrVersionIsAFailure) {
  const std::string path = LogIn(kRunFolder);
  WriteBytes(path, std::string("SQLite format 3\0", 16));
  WandbRunLog foreign(dir_, kRunId, "val_loss");
  EXPECT_EQ(Failure(foreign), path +
                                  ": not a W&B transaction log (it starts with \"SQLite f\", not "
                                  "\":W&B\\xE1\\xBE\")");
  WriteBytes(path, std::string(":W&B\xE1\xBE\x01", 7));
  WandbRunLog newer(dir_, kRunId, "val_loss");
  EXPECT_EQ(Failure(newer), path + ": a W&B transaction log of version 1; only version 0 is known");
}

TEST_F(WandbRunLogTest, AStringUnderTheObjectiveIsAFailure) {
  const std::string path = LogIn(kRunFolder);
  WriteBytes(path, ReadBytes(kFixture));
  WandbRunLog log(dir_, kRunId, "phase");  // the fixture logs "phase": "train"
  EXPECT_EQ(Failure(log), path + ": wandb.log gave phase the value \"train\", not a number");
}

TEST_F(WandbRunLogTest, RecordsSpanningBlocksAreReadWholeAndAsTheyGrow) {
  // A filler that ends 3 bytes before block 0's end (a zero trailer), a history record over
  // blocks 1 to 3 (FIRST, MIDDLE, LAST), a FULL one, and one from inside block 3 into block 4.
  const std::string long_note(70000, 'n');
  const std::string long_blob(45000, 'b');
  const std::string bytes = Framed({
      FillerRecord(32768 - 7 - 7 - 3),
      HistoryRecord({Item({"_step"}, "0"), Item({"note"}, "\"" + long_note + "\""),
                     Item({"val_loss"}, "0.5")}),
      HistoryRecord({Item({"_step"}, "1"), Item({"val_loss"}, "0.25")}),
      HistoryRecord({Item({"_step"}, "2"), Item({"blob"}, "\"" + long_blob + "\""),
                     Item({"val_loss"}, "0.125")}),
  });
  ASSERT_EQ(bytes.substr(32765, 3), std::string(3, '\0'));
  ASSERT_GT(bytes.size(), 4u * 32768);
  const std::vector<std::string> expected = {
      R"({"note": ")" + long_note + R"(", "val_loss": 0.5, "_step": 0})",
      R"({"val_loss": 0.25, "_step": 1})",
      R"({"blob": ")" + long_blob + R"(", "val_loss": 0.125, "_step": 2})",
  };
  WriteBytes(LogIn(kRunFolder), bytes);
  WandbRunLog whole(dir_, kRunId, "val_loss");
  EXPECT_EQ(Poll(whole), expected);

  fs::remove_all(fs::path(dir_) / "wandb");
  WandbRunLog growing(dir_, kRunId, "val_loss");
  EXPECT_EQ(GrowAndPoll(growing, LogIn(kRunFolder), bytes, 997), expected);
}

TEST_F(WandbRunLogTest, ItemsAreNamedEscapedAndNaNIsANumber) {
  const std::string key_item = Field(1, "plain") + Field(16, "1");  // HistoryItem.key
  const std::string typed_extra = Field(2, "typed") + Varint(5 << 3 | 0) + Varint(3) +
                                  Varint(6 << 3 | 1) + std::string(8, '\0') +
                                  Field(16, "3");  // unknown integer and number fields skipped
  const std::string bytes = Framed({
      FillerRecord(40),
      HistoryRecord({}),  // no items: no line
      HistoryRecord({Item({"val_loss"}, "NaN"), Item({"a", "b", "c"}, "2"),
                     Item({"say \"hi\"\\\n"}, "[1,2]"), key_item, typed_extra}),
      HistoryRecord({Item({"val_loss"}, "-Infinity")}),
  });
  WriteBytes(LogIn(kRunFolder), bytes);
  WandbRunLog log(dir_, kRunId, "val_loss");
  const std::vector<std::string> expected = {
      R"({"val_loss": NaN, "a/b/c": 2, "say \"hi\"\\\u000A": [1,2], "plain": 1, "typed": 3})",
      R"({"val_loss": -Infinity})",
  };
  EXPECT_EQ(Poll(log), expected);
}

TEST_F(WandbRunLogTest, ANewerRunIsReadAfterTheRestOfTheOldOne) {
  const std::string real = ReadBytes(kFixture);
  const std::string old_path = LogIn(kRunFolder);
  WriteBytes(old_path,
             real.substr(0, 1400));  // the first two history records and part of the third
  WandbRunLog log(dir_, kRunId, "val_loss");
  EXPECT_EQ(Poll(log), std::vector<std::string>(kFixtureLines.begin(), kFixtureLines.begin() + 2));

  // wandb.init() after run.finish(): a folder with "-1" (the same second), and latest-run.
  WriteBytes(old_path, real);
  const std::string new_path = LogIn(kRunFolder + "-1");
  WriteBytes(new_path, Framed({HistoryRecord({Item({"_step"}, "0"), Item({"val_loss"}, "0.1")})}));
  fs::create_directory_symlink(kRunFolder + "-1", fs::path(dir_) / "wandb" / "latest-run");
  const std::vector<std::string> expected = {kFixtureLines[2], kFixtureLines[3],
                                             R"({"val_loss": 0.1, "_step": 0})"};
  EXPECT_EQ(Poll(log), expected);
  EXPECT_EQ(log.path(), new_path);

  // An older run's folder appearing later is not read.
  WriteBytes(LogIn("offline-run-20261129_052104-fixture"), real);
  EXPECT_TRUE(Poll(log).empty());
  EXPECT_EQ(log.path(), new_path);
}

TEST_F(WandbRunLogTest, AShorterFileIsAFailure) {
  const std::string path = LogIn(kRunFolder);
  const std::string real = ReadBytes(kFixture);
  WriteBytes(path, real);
  WandbRunLog log(dir_, kRunId, "val_loss");
  EXPECT_EQ(Poll(log).size(), kFixtureLines.size());
  WriteBytes(path, real.substr(0, 100));
  EXPECT_NE(Failure(log).find(path + ": got shorter (100 bytes, after"), std::string::npos);
}

}  // namespace
}  // namespace hpo
