// Reads a user's program's output, one line at a time, into steps of metrics: JSON object lines
// (every top-level number is a metric), Katib-style name=value pairs (only the recorded columns),
// and SageMaker-style metric definitions (a regular expression whose first group is the value).
// Each report of the objective completes one step. No MPI, no torch.
#pragma once

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/trial.hpp"

namespace hpo {

struct MetricDefinition {
  std::string name;
  std::string regex;  // ECMAScript; the first capture group is the value
};

// Checks definitions alone (config validation): BadInput "metric_definitions[I].regex: ..." when
// a regex does not compile or has no capture group.
Status CheckMetricDefinitions(const std::vector<MetricDefinition>& definitions);

// Turns output lines into steps. Copyable; used by one thread.
//
// Reported values of the `columns` accumulate in a pending row (the latest value of each wins).
// A line that reports the objective completes the row as one step: columns not reported are NaN,
// and its number is the `epoch`, `step` or `_step` seen on that line or since the last step when
// that is greater than the last step's number, otherwise the last step's number + 1 (the first
// unnumbered step is 1). Names reported that are not columns (nor step keys) are remembered in
// undeclared(); they make no step.
class MetricReader {
 public:
  MetricReader() = default;
  // BadInput when `objective` is not among `columns` or a definition is bad.
  static Status Create(std::vector<std::string> columns, std::string objective,
                       const std::vector<MetricDefinition>& definitions, MetricReader* reader);

  // Reads one line (without its line end); appends the step it completes, if any, to `steps`.
  void ReadLine(std::string_view line, std::vector<EpochMetrics>* steps);

  const std::set<std::string>& undeclared() const { return undeclared_; }
  int64_t last_step() const { return last_step_; }

 private:
  struct Compiled {
    std::string name;
    std::regex regex;
  };

  void Report(const std::string& name, double value, bool* objective_seen);
  bool ReadJson(std::string_view line, bool* objective_seen);
  void ReadPairs(std::string_view line, bool* objective_seen);

  std::vector<std::string> columns_;
  std::map<std::string, size_t> column_index_;
  std::string objective_;
  std::vector<Compiled> definitions_;
  std::vector<double> pending_;
  int64_t pending_step_ = 0;  // a step number seen since the last step; 0: none
  int64_t last_step_ = 0;
  std::set<std::string> undeclared_;
};

}  // namespace hpo
