// Status: the result of an operation that can fail, passed across module lines instead of
// exceptions (LevelDB style). A Status owns its message; copying is cheap enough for error paths.
// Thread-safe as a value type. The code maps one to one onto the documented process exit codes.
#pragma once

#include <string>
#include <utility>

namespace hpo {

// Process exit codes, documented in docs/config.md ("Exit codes").
enum class ExitCode : int {
  kDone = 0,         // the sweep or command finished
  kFailure = 1,      // anything else: a bug, an MPI or I/O failure
  kBadInput = 2,     // bad config, command line, data file or study file
  kInterrupted = 3,  // the study was interrupted but saved; resume it
  kPeerLost = 4,     // a rank went silent (its host lost) and the job ended; the study is saved
};

class Status {
 public:
  enum class Code { kOk, kBadInput, kInterrupted, kFailure };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status BadInput(std::string message) {
    return Status(Code::kBadInput, std::move(message));
  }
  static Status Interrupted(std::string message) {
    return Status(Code::kInterrupted, std::move(message));
  }
  static Status Failure(std::string message) { return Status(Code::kFailure, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  ExitCode exit_code() const {
    switch (code_) {
      case Code::kOk:
        return ExitCode::kDone;
      case Code::kBadInput:
        return ExitCode::kBadInput;
      case Code::kInterrupted:
        return ExitCode::kInterrupted;
      case Code::kFailure:
        return ExitCode::kFailure;
    }
    return ExitCode::kFailure;
  }

  // Returns a copy whose message is "context: message"; ok() stays ok().
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Returns early from the enclosing function when `expr` yields a non-ok Status.
#define HPO_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::hpo::Status hpo_status_ = (expr);        \
    if (!hpo_status_.ok()) return hpo_status_; \
  } while (false)

}  // namespace hpo
