#include "platforms/wandb/run_log.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <tuple>
#include <utility>

namespace hpo {

namespace {

namespace fs = std::filesystem;

constexpr uint64_t kRunLogBlockSize = 32 * 1024;
constexpr uint64_t kRunLogChunkHeaderSize = 7;
// ":W&B", the magic 0xBEE1 little-endian, the version 0.
constexpr std::string_view kRunLogFileHeader(":W&B\xE1\xBE\x00", 7);
constexpr size_t kRunLogIdentSize = 6;  // ":W&B" and the magic: what says the file is W&B's
constexpr uint8_t kRunLogFull = 1;
constexpr uint8_t kRunLogFirst = 2;
constexpr uint8_t kRunLogLast = 4;
// Field numbers in wandb/proto/wandb_internal.proto.
constexpr uint64_t kRunLogRecordHistory = 2;   // Record.history
constexpr uint64_t kRunLogHistoryItem = 1;     // HistoryRecord.item
constexpr uint64_t kRunLogItemKey = 1;         // HistoryItem.key
constexpr uint64_t kRunLogItemNestedKey = 2;   // HistoryItem.nested_key (repeated)
constexpr uint64_t kRunLogItemValueJson = 16;  // HistoryItem.value_json
constexpr int kRunLogWireVarint = 0;
constexpr int kRunLogWire64 = 1;
constexpr int kRunLogWireBytes = 2;
constexpr int kRunLogWire32 = 5;
constexpr size_t kRunLogShownValueBytes = 200;  // of a value quoted in a message

std::array<uint32_t, 256> RunLogCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    table[byte] = crc;
  }
  return table;
}

uint32_t RunLogLittleEndian(const char* bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

// `bytes` as a C string literal's text (printable ASCII as is, the rest as \xHH), for messages.
std::string RunLogQuoted(std::string_view bytes) {
  std::string quoted = "\"";
  for (const char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    if (byte >= 0x20 && byte < 0x7F && c != '"' && c != '\\') {
      quoted += c;
    } else {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\x%02X", byte);
      quoted += escape;
    }
  }
  return quoted + "\"";
}

// `text` as a JSON string.
std::string RunLogJsonString(std::string_view text) {
  std::string json = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      json += '\\';
      json += c;
    } else if (static_cast<uint8_t>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04X", static_cast<unsigned>(c));
      json += escape;
    } else {
      json += c;
    }
  }
  return json + "\"";
}

// Whether `json` is one JSON number (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) or
// Python json.dumps's NaN, Infinity or -Infinity.
bool RunLogIsJsonNumber(std::string_view json) {
  if (json == "NaN" || json == "Infinity" || json == "-Infinity") return true;
  size_t i = 0;
  const auto digit = [&json](size_t at) {
    return at < json.size() && json[at] >= '0' && json[at] <= '9';
  };
  const auto digits = [&](size_t* at) {
    const size_t first = *at;
    while (digit(*at)) ++*at;
    return *at > first;
  };
  if (i < json.size() && json[i] == '-') ++i;
  if (i < json.size() && json[i] == '0') {
    ++i;
  } else if (!digits(&i)) {
    return false;
  }
  if (i < json.size() && json[i] == '.') {
    ++i;
    if (!digits(&i)) return false;
  }
  if (i < json.size() && (json[i] == 'e' || json[i] == 'E')) {
    ++i;
    if (i < json.size() && (json[i] == '+' || json[i] == '-')) ++i;
    if (!digits(&i)) return false;
  }
  return i == json.size();
}

// One field of a protobuf message in its wire format.
struct RunLogField {
  uint64_t number = 0;
  int wire_type = 0;
  std::string_view bytes;  // a length-delimited field's contents
};

bool RunLogVarint(std::string_view* rest, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && !rest->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(rest->front());
    rest->remove_prefix(1);
    *value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// Reads the next field of the message whose unread part is `rest`. False at its end, and false
// with `why` set when the bytes are not a message's fields.
bool RunLogNextField(std::string_view* rest, RunLogField* field, std::string* why) {
  if (rest->empty()) return false;
  uint64_t tag = 0;
  if (!RunLogVarint(rest, &tag)) return (*why = "a field's tag runs past the end"), false;
  field->number = tag >> 3;
  field->wire_type = static_cast<int>(tag & 7);
  if (field->number == 0) return (*why = "a field numbered 0"), false;
  uint64_t size = 0;
  switch (field->wire_type) {
    case kRunLogWireVarint:
      if (!RunLogVarint(rest, &size)) return (*why = "a varint runs past the end"), false;
      return true;
    case kRunLogWire64:
      size = 8;
      break;
    case kRunLogWire32:
      size = 4;
      break;
    case kRunLogWireBytes:
      if (!RunLogVarint(rest, &size)) return (*why = "a length runs past the end"), false;
      break;
    default:
      *why = "field " + std::to_string(field->number) + " has the wire type " +
             std::to_string(field->wire_type);
      return false;
  }
  if (size > rest->size()) {
    *why = "field " + std::to_string(field->number) + " runs past the end";
    return false;
  }
  field->bytes = rest->substr(0, size);
  rest->remove_prefix(size);
  return true;
}

// A HistoryItem's name (its key, or its nested key's parts joined with '/') and value_json.
bool RunLogReadItem(std::string_view item, std::string* name, std::string* value_json,
                    std::string* why) {
  std::string key;
  std::string nested;
  RunLogField field;
  while (RunLogNextField(&item, &field, why)) {
    if (field.wire_type != kRunLogWireBytes) continue;
    if (field.number == kRunLogItemKey) {
      key = field.bytes;
    } else if (field.number == kRunLogItemNestedKey) {
      if (!nested.empty()) nested += '/';
      nested += field.bytes;
    } else if (field.number == kRunLogItemValueJson) {
      *value_json = field.bytes;
    }
  }
  *name = key.empty() ? nested : key;
  if (value_json->empty()) *value_json = "null";
  return why->empty();
}

// The order of the run folder `folder`, named <mode>-<YYYYMMDD_HHMMSS>-<run_id>[-N] (wandb's
// sync_dir; N is added when a folder of that name exists): the time, '-' and N zero-padded (0
// without it). False for another name.
bool RunLogEndsWith(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

bool RunLogFolderOrder(const std::string& folder, const std::string& run_id, std::string* order) {
  constexpr size_t kTimespecSize = 15;  // YYYYMMDD_HHMMSS
  constexpr size_t kNumberDigits = 18;
  const std::string tail = "-" + run_id;
  std::string_view head = folder;
  std::string_view number = "0";
  if (!RunLogEndsWith(head, tail)) {  // then it must end with tail + "-N"
    const size_t dash = head.rfind('-');
    if (dash == std::string_view::npos) return false;
    number = head.substr(dash + 1);
    head = head.substr(0, dash);
    const bool digits =
        std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (number.empty() || number.size() > kNumberDigits || !digits) return false;
    if (!RunLogEndsWith(head, tail)) return false;
  }
  head.remove_suffix(tail.size());
  if (head.size() < kTimespecSize + 1 || head[head.size() - kTimespecSize - 1] != '-') return false;
  *order = std::string(head.substr(head.size() - kTimespecSize)) + "-" +
           std::string(kNumberDigits - number.size(), '0') + std::string(number);
  return true;
}

}  // namespace

uint32_t WandbRunLogChecksum(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = RunLogCrcTable();
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : bytes) crc = table[(crc ^ static_cast<uint8_t>(c)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

WandbRunLog::WandbRunLog(std::string wandb_dir, std::string run_id, std::string objective)
    : wandb_dir_(std::move(wandb_dir)),
      run_id_(std::move(run_id)),
      objective_(std::move(objective)) {}

std::string WandbRunLog::path() const {
  if (!log_path_.empty()) return log_path_;
  return (fs::path(wandb_dir_) / "wandb" / "*" / ("run-" + run_id_ + ".wandb")).string();
}

bool WandbRunLog::FindNewestLog(Candidate* newest) const {
  bool found = false;
  const std::string file_name = "run-" + run_id_ + ".wandb";
  for (const char* folder : {"wandb", ".wandb"}) {
    std::error_code error;
    fs::directory_iterator entries(fs::path(wandb_dir_) / folder, error);
    for (; !error && entries != fs::directory_iterator(); entries.increment(error)) {
      const fs::directory_entry& entry = *entries;
      std::error_code ignored;
      if (entry.is_symlink(ignored) || !entry.is_directory(ignored)) continue;
      const fs::path log = entry.path() / file_name;
      if (!fs::is_regular_file(fs::symlink_status(log, ignored))) continue;
      Candidate candidate;
      if (!RunLogFolderOrder(entry.path().filename().string(), run_id_, &candidate.order)) {
        candidate.order.clear();  // an unexpected name: older than any expected one
      }
      candidate.path = log.string();
      if (!found ||
          std::tie(candidate.order, candidate.path) > std::tie(newest->order, newest->path)) {
        *newest = std::move(candidate);
        found = true;
      }
    }
  }
  return found;
}

Status WandbRunLog::Fail(Status failure) {
  if (!failure.ok() && failure_.ok()) failure_ = failure;
  return failure;
}

Status WandbRunLog::Poll(std::vector<std::string>* lines) {
  if (!failure_.ok()) return failure_;
  Candidate newest;
  if (FindNewestLog(&newest) && newest.path != log_path_ &&
      (log_path_.empty() ||
       std::tie(newest.order, newest.path) > std::tie(log_order_, log_path_))) {
    // The program started another run: the rest of this one first.
    if (!log_path_.empty()) HPO_RETURN_IF_ERROR(Fail(ReadAppended(lines)));
    log_path_ = newest.path;
    log_order_ = newest.order;
    next_record_ = 0;
    header_checked_ = false;
  }
  if (log_path_.empty()) return Status::Ok();
  return Fail(ReadAppended(lines));
}

Status WandbRunLog::ReadAppended(std::vector<std::string>* lines) {
  std::error_code error;
  const uint64_t size = fs::file_size(log_path_, error);
  if (error) return Status::Failure(log_path_ + ": cannot be read: " + error.message());
  if (size < next_record_) {
    return Status::Failure(log_path_ + ": got shorter (" + std::to_string(size) + " bytes, after " +
                           std::to_string(next_record_) + " were read)");
  }
  if (size == next_record_) return Status::Ok();
  std::ifstream file(log_path_, std::ios::binary);
  if (file) file.seekg(static_cast<std::streamoff>(next_record_));
  std::string bytes(size - next_record_, '\0');
  if (file) file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file && !file.eof()) return Status::Failure(log_path_ + ": cannot be read");
  bytes.resize(static_cast<size_t>(file.gcount()));
  if (!header_checked_) {
    HPO_RETURN_IF_ERROR(CheckFileHeader(bytes));
    if (bytes.size() < kRunLogFileHeader.size()) return Status::Ok();
    header_checked_ = true;
    next_record_ = kRunLogFileHeader.size();
    bytes.erase(0, kRunLogFileHeader.size());
  }
  return ReadChunks(bytes, lines);
}

Status WandbRunLog::CheckFileHeader(const std::string& bytes) const {
  const size_t ident = std::min(bytes.size(), kRunLogIdentSize);
  if (bytes.compare(0, ident, kRunLogFileHeader.substr(0, ident)) != 0) {
    return Status::Failure(log_path_ + ": not a W&B transaction log (it starts with " +
                           RunLogQuoted(std::string_view(bytes).substr(0, 8)) +
                           ", not \":W&B\\xE1\\xBE\")");
  }
  if (bytes.size() > kRunLogIdentSize && bytes[kRunLogIdentSize] != kRunLogFileHeader.back()) {
    return Status::Failure(log_path_ + ": a W&B transaction log of version " +
                           std::to_string(static_cast<uint8_t>(bytes[kRunLogIdentSize])) +
                           "; only version 0 is known");
  }
  return Status::Ok();
}

// `bytes` are the file's from next_record_ on. Takes each complete record, and moves next_record_
// past it; stops at a chunk that is not complete yet.
Status WandbRunLog::ReadChunks(const std::string& bytes, std::vector<std::string>* lines) {
  const uint64_t base = next_record_;
  const uint64_t end = base + bytes.size();
  const auto corrupt = [this](uint64_t at, const std::string& what) {
    return Status::Failure(log_path_ + ": corrupt at byte " + std::to_string(at) + ": " + what);
  };
  std::string record;
  uint64_t record_start = base;
  bool in_record = false;
  uint64_t at = base;
  while (true) {
    const uint64_t block_left = kRunLogBlockSize - at % kRunLogBlockSize;
    if (block_left < kRunLogChunkHeaderSize) {  // the block's zero trailer
      at += block_left;
      continue;
    }
    if (at + kRunLogChunkHeaderSize > end) return Status::Ok();
    const char* header = bytes.data() + (at - base);
    const uint32_t checksum = RunLogLittleEndian(header, 4);
    const uint64_t length = RunLogLittleEndian(header + 4, 2);
    const auto type = static_cast<uint8_t>(header[6]);
    if (type < kRunLogFull || type > kRunLogLast) {
      return corrupt(at, "a chunk header of the type " + std::to_string(type) + " (not 1 to 4)");
    }
    if (kRunLogChunkHeaderSize + length > block_left) {
      return corrupt(at, "a chunk of " + std::to_string(length) +
                             " bytes runs past the end of its 32 KiB block");
    }
    if (at + kRunLogChunkHeaderSize + length > end) return Status::Ok();
    if (WandbRunLogChecksum(std::string_view(header + 6, 1 + length)) != checksum) {
      return corrupt(
          at, "the checksum of a chunk of " + std::to_string(length) + " bytes does not match");
    }
    const bool starts = type == kRunLogFull || type == kRunLogFirst;
    if (starts == in_record) {
      return corrupt(
          at, starts ? "a record starts inside another" : "a record goes on that never started");
    }
    if (starts) {
      record.clear();
      record_start = at;
    }
    record.append(header + kRunLogChunkHeaderSize, length);
    at += kRunLogChunkHeaderSize + length;
    in_record = type != kRunLogFull && type != kRunLogLast;
    if (!in_record) {
      HPO_RETURN_IF_ERROR(TakeRecord(record, record_start, lines));
      next_record_ = at;
    }
  }
}

Status WandbRunLog::TakeRecord(const std::string& record, uint64_t offset,
                               std::vector<std::string>* lines) {
  const auto corrupt = [&](const std::string& why) {
    return Status::Failure(log_path_ + ": corrupt at byte " + std::to_string(offset) +
                           ": the record is not a protobuf message (" + why + ")");
  };
  std::string_view rest(record);
  RunLogField field;
  std::string why;
  std::string line;
  std::string wandb_step;
  bool own_step = false;
  while (RunLogNextField(&rest, &field, &why)) {
    if (field.number != kRunLogRecordHistory || field.wire_type != kRunLogWireBytes) continue;
    std::string_view history = field.bytes;
    RunLogField item;
    while (RunLogNextField(&history, &item, &why)) {
      if (item.number != kRunLogHistoryItem || item.wire_type != kRunLogWireBytes) continue;
      std::string name;
      std::string value_json;
      if (!RunLogReadItem(item.bytes, &name, &value_json, &why)) return corrupt(why);
      if (name == objective_ && !RunLogIsJsonNumber(value_json)) {
        const std::string shown = value_json.size() <= kRunLogShownValueBytes
                                      ? value_json
                                      : value_json.substr(0, kRunLogShownValueBytes) + "...";
        return Status::Failure(log_path_ + ": wandb.log gave " + objective_ + " the value " +
                               shown + ", not a number");
      }
      // W&B's own bookkeeping, not the program's metrics. W&B's _step numbers the step only
      // when the program logs no `epoch` or `step` of its own (two numberings on one line
      // would contradict each other).
      if (name == "_runtime" || name == "_timestamp") continue;
      if (name == "_step") {
        wandb_step = value_json;
        continue;
      }
      own_step = own_step || name == "epoch" || name == "step";
      line += line.empty() ? "{" : ", ";
      line += RunLogJsonString(name) + ": " + value_json;
    }
    if (!why.empty()) return corrupt(why);
  }
  if (!why.empty()) return corrupt(why);
  if (!line.empty() && !own_step && !wandb_step.empty()) line += ", \"_step\": " + wandb_step;
  if (!line.empty()) lines->push_back(line + "}");
  return Status::Ok();
}

}  // namespace hpo
