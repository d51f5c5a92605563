// Private to hpo_core: a W&B run's transaction log (`run-<id>.wandb`), read as a command trial's
// MetricSource while the trial's program writes it. What `wandb.log` logs reaches the log as
// HistoryRecords, online and offline; this reader turns each into one JSON line for the trial's
// MetricReader. No MPI, no torch, no protobuf library: the few fields needed are decoded from the
// wire format here.
//
// The file's format, as wandb 0.31 writes it (Go: core/pkg/leveldb/record.go,
// core/internal/transactionlog/writer.go; Python before wandb-core: wandb/sdk/internal/
// datastore.py):
//  * a 7-byte header: ":W&B", the magic 0xBEE1 (little-endian) and the version 0;
//  * then LevelDB's log format in 32 KiB blocks counted from the start of the file (the header
//    fills the first 7 bytes of block 0): chunks of a 7-byte header (checksum, little-endian
//    uint32; payload length, uint16; type, 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST) and the payload; a
//    chunk never crosses a block's end, and a block's last 1 to 6 bytes, too few for a header, are
//    zeros. The checksum is the standard CRC-32 (IEEE, zlib's crc32, not LevelDB's masked
//    CRC-32C) of the type byte and the payload;
//  * each record one protobuf wandb_internal.Record (wandb/proto/wandb_internal.proto): field 2
//    `history` (HistoryRecord: repeated field 1 `item`, HistoryItem: field 1 `key`, repeated
//    field 2 `nested_key`, field 16 `value_json`).
// wandb-core keeps the block it is filling in memory and writes it out when it fills, when the
// run finishes, and every x_transaction_log_flush_interval seconds (15 by default; set
// WANDB__TRANSACTION_LOG_FLUSH_INTERVAL in the program's environment for less).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hpo/status.hpp"
#include "program/metric_source.hpp"

namespace hpo {

// The checksum of a transaction log's chunk: CRC-32 with the IEEE polynomial (reflected,
// 0xEDB88320, initial value and final XOR 0xFFFFFFFF), as zlib's crc32 and Go's crc32.ChecksumIEEE
// compute it, of `bytes` (the chunk's type byte and payload). Thread-safe.
uint32_t WandbRunLogChecksum(std::string_view bytes);

// Reads the transaction log of the W&B run `run_id` that the trial's program writes under
// `wandb_dir` (its WANDB_DIR): the file run-<run_id>.wandb in a run folder
// <wandb_dir>/wandb/<mode>-<YYYYMMDD_HHMMSS>-<run_id>[-N]/ (mode "offline-run" or "run"; a
// folder `.wandb` instead of `wandb` where the program uses that). Symbolic links (wandb's
// `latest-run`) are not followed. Where several folders hold the run's log (a program that calls
// wandb.init() again after finishing a run), the newest by the time and number in the folder's
// name is read; when a newer one appears, the rest of the one being read is read first, then the
// newer one from its start.
//
// Each complete HistoryRecord becomes one line: a JSON object of its items in their order, the
// key (a nested key's parts joined with '/') as a JSON string and the item's value_json as it is
// (Python's json.dumps: NaN, Infinity and -Infinity appear as such), e.g.
// {"val_loss": 0.31, "_timestamp": 1.7e+09, "_runtime": 1.2, "_step": 0}. A record without items
// gives no line; other records are skipped.
//
// Poll reads what was appended since the last call; a chunk or record that is only partly written
// yet is read again at the next call. Failure naming the file and what is wrong (the byte offset
// for corruption): a file that does not start with W&B's header (version 0), a chunk header that
// cannot be (an unknown type, a length past its block's end, a chunk out of its record's order),
// a checksum that does not match, a record that is not a protobuf message, a file that got
// shorter than what was read, a file that cannot be read, and an item for `objective` whose value
// is not a JSON number ("FILE: wandb.log gave OBJECTIVE the value JSON, not a number"). A failure
// is final: later calls return it again. Used by one thread.
class WandbRunLog final : public MetricSource {
 public:
  WandbRunLog(std::string wandb_dir, std::string run_id, std::string objective);

  Status Poll(std::vector<std::string>* lines) override;
  // True once a log file of the run was found.
  bool started() const override { return !log_path_.empty(); }
  // The log being read, or the pattern it is looked for under until it exists.
  std::string path() const override;

 private:
  // A run folder holding the run's log, as found by a look at the folder.
  struct Candidate {
    std::string order;  // "YYYYMMDD_HHMMSS", then the folder's number, zero-padded
    std::string path;
  };

  bool FindNewestLog(Candidate* newest) const;
  Status ReadAppended(std::vector<std::string>* lines);
  Status CheckFileHeader(const std::string& bytes) const;
  Status ReadChunks(const std::string& bytes, std::vector<std::string>* lines);
  Status TakeRecord(const std::string& record, uint64_t offset, std::vector<std::string>* lines);
  Status Fail(Status failure);

  std::string wandb_dir_;
  std::string run_id_;
  std::string objective_;

  std::string log_path_;   // the log being read; empty until one is found
  std::string log_order_;  // its Candidate::order
  // The file offset where the next unread record starts (after the header once it was checked).
  uint64_t next_record_ = 0;
  bool header_checked_ = false;
  Status failure_;  // the first failure, returned by every later call
};

}  // namespace hpo
