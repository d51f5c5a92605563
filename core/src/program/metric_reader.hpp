// program/: the user's program as hpo sees it, its command line and the metrics it reports;
// shared by config/ (a command sweep's checks), platforms/ (specs and metric sources) and the
// command task's runner (tasks/command/runtime/runner.cpp). In hpo_core: no MPI, no torch.
//
// Reads a user's program's output, one line at a time, into steps of metrics. No MPI, no torch.
//
// Three formats:
//  1. Dict lines: a line whose trimmed text starts with '{' and ends with '}' and is one JSON
//     object (what W&B-style scripts print; Python json.dumps's NaN, Infinity and -Infinity
//     allowed) or, failing that, a printed Python dict (what Hugging Face's Trainer and Lightning
//     print: `{'eval_loss': 0.52, 'epoch': 1.0}`, `{'val_acc': tensor(0.81)}`; python_dict.hpp).
//     Every top-level member whose value is a number reports a metric; booleans, strings, null,
//     arrays and objects are ignored. A dict-shaped line that is neither is read as plain text
//     and counted as unreadable (first_unreadable()), so the caller can warn.
//  2. name=value pairs on plain text lines (Katib's default, e.g. "epoch 3: loss=0.31, acc=0.9"):
//     a name [A-Za-z_][A-Za-z0-9_.|/@-]* at the line's start or after a character that cannot be
//     in a name, spaces or tabs around '=', and a decimal number (int, fraction, exponent; nan,
//     inf, infinity in any case; not one followed by a letter, digit, '_' or '.' and a digit, so
//     "3.2s" and "1.2.3" are not numbers, nor is one beyond double's range). Only columns and step
//     keys are taken from pairs, so "lr=0.01" in a log line creates no metric.
//  3. Metric definitions (SageMaker's metric_definitions): every match of an ECMAScript regex on
//     a line reports `name` with the first capture group as the value (a match whose group is
//     not a number is ignored). These apply to every line, in addition to 1 or 2, to each part
//     of a line between carriage returns (progress bars) that is at most 4,096 bytes long:
//     std::regex recurses per character and would overflow the stack on longer ones.
// Step keys (`epoch`, `step`, `_step`, from dict lines, pairs or definitions) number a report and
// are not metrics themselves; a non-integer `epoch` (Hugging Face's 'epoch': 0.5) numbers the
// first step of a resumed run (ContinueFrom) and otherwise counts on.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/trial.hpp"

namespace hpo {

struct MetricDefinition {
  std::string name;   // the metric it reports
  std::string regex;  // ECMAScript; the first capture group is the value
};

// Checks definitions alone (config validation): BadInput "metric_definitions[I].regex: '...' is
// not a regular expression: WHAT" (std::regex's message) or "metric_definitions[I].regex: '...'
// has no capture group (the value is the first group)".
Status CheckMetricDefinitions(const std::vector<MetricDefinition>& definitions);

// Turns output lines into steps. Copyable and movable; used by one thread. A default-constructed
// reader (before Create) takes nothing as a column and completes no step.
//
// Reported values of the `columns` accumulate in a pending row (the latest value of each wins).
// A line that reports the objective completes the row as one step (EpochMetrics::values aligned
// with the columns; columns not reported since the last step are NaN) and clears it. The step's
// number is the step key seen on that line or since the last step when it is greater than the
// last step's number, otherwise the last step's number + 1; the first unnumbered step is 1, so
// an explicit 0 of a 0-based program becomes 1 and its 1 then 2: numbers only ever increase.
// A line that reports the objective under the same explicit step key as the last step repeats
// that step (Hugging Face's closing "epoch = 3.0 / eval_accuracy = 0.71" summary) and makes no
// new one; its values are dropped.
// Step keys that are not integers count on, but for a resumed run's first step when `epoch` is
// fractional (Trainer evaluates at 0.25, 0.5, ... of its epochs, and goes on from its checkpoint):
// it is numbered one past the earlier run's steps whose `epoch` was lower. Names reported by JSON
// lines or definitions that are neither columns nor step keys are remembered in undeclared(); they
// make no step.
class MetricReader {
 public:
  MetricReader() = default;
  // BadInput when `objective` is not among `columns`, a column is listed twice, or a definition
  // is bad (as CheckMetricDefinitions).
  static Status Create(std::vector<std::string> columns, std::string objective,
                       const std::vector<MetricDefinition>& definitions, MetricReader* reader);

  // Reads one line (without its line end); appends the step it completes, if any, to `steps`.
  void ReadLine(std::string_view line, std::vector<EpochMetrics>* steps);

  // Names reported that are not columns, sorted.
  const std::set<std::string>& undeclared() const { return undeclared_; }
  // The number of the last step completed; 0 before the first.
  int64_t last_step() const { return last_step_; }

  // The `epoch` keys of the steps an earlier run of the trial reported (NaN for a step without
  // one), step 1 first: they number this run's first step when the keys are fractional.
  void ContinueFrom(std::vector<double> earlier_epoch_keys) {
    earlier_epoch_keys_ = std::move(earlier_epoch_keys);
  }
  // The `epoch` key of step `step` of this run; NaN when it had none.
  double epoch_key(int64_t step) const;

  // A dict-shaped line that could not be read: its 1-based number among the lines read, its
  // text and why.
  struct UnreadableLine {
    int64_t line = 0;
    std::string text;
    std::string why;
  };
  // The first unreadable line (line 0 when there was none) and how many there were.
  const UnreadableLine& first_unreadable() const { return first_unreadable_; }
  int64_t unreadable_lines() const { return unreadable_lines_; }

 private:
  struct Definition {
    std::string name;
    std::regex regex;
  };

  void Report(std::string_view name, double value, bool* objective_seen);
  int64_t NumberStep() const;
  bool ReadDict(std::string_view line, bool* objective_seen);
  void ReadPairs(std::string_view line, bool* objective_seen);
  void ReadDefinitions(std::string_view line, bool* objective_seen);

  std::map<std::string, size_t, std::less<>> column_index_;
  size_t objective_index_ = 0;
  std::vector<Definition> definitions_;
  std::vector<double> pending_;  // aligned with the columns; NaN: not reported since the last step
  int64_t pending_step_ = 0;     // the latest step key since the last step; 0: none
  bool pending_step_explicit_ = false;  // a step key was seen since the last step
  int64_t last_step_ = 0;
  std::optional<int64_t> last_step_key_;     // the explicit step key of the last step
  std::optional<double> pending_epoch_key_;  // the `epoch` seen since the last step, as given
  std::vector<double> earlier_epoch_keys_;   // ContinueFrom's
  std::map<int64_t, double> epoch_keys_;     // of this run's steps, by number
  std::set<std::string> undeclared_;
  int64_t lines_read_ = 0;
  UnreadableLine first_unreadable_;
  int64_t unreadable_lines_ = 0;
};

}  // namespace hpo
