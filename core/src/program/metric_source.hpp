// program/: the user's program as hpo sees it, its command line and the metrics it reports;
// shared by config/ (a command sweep's checks), platforms/ (specs and metric sources) and the
// command task's runner (tasks/command/runtime/runner.cpp). In hpo_core: no MPI, no torch.
//
// Where a command trial's metrics come from besides its program's output: a file the program
// writes while it runs (a W&B run's transaction log, Katib's File collector's metrics file). No
// MPI, no torch.
#pragma once

#include <string>
#include <vector>

#include "hpo/status.hpp"

namespace hpo {

// A file a trial's program writes its metrics to, read as it grows. The group leader polls it
// between looks at its program's output and hands the lines to the trial's MetricReader
// (metric_reader.hpp): each line is one the reader understands (a JSON object, or name=value
// pairs). Used by one thread.
class MetricSource {
 public:
  virtual ~MetricSource() = default;

  // Appends the lines that became complete since the last call. A file that does not exist yet
  // is no error (the program has not got to it). Failure (the trial fails with its message)
  // when the file cannot be read, is corrupt, or reports the objective as something that is not
  // a number; the message names the file and what is wrong.
  virtual Status Poll(std::vector<std::string>* lines) = 0;

  // Whether the program has started writing the file. From then on the trial's metrics come from
  // the file alone, and lines of the program's output are no longer read for metrics.
  virtual bool started() const = 0;

  // The file's path, for messages.
  virtual std::string path() const = 0;
};

}  // namespace hpo
