// Private to hpo_core: Katib's File metrics collector
// (kubeflow/katib pkg/metricscollector/v1beta1/file-metricscollector), read as a command trial's
// MetricSource: the trial's program appends its metrics to a file, in Katib's TEXT format (lines
// searched with metricsFormat regexes) or JSON format (one object per line). No MPI, no torch.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "hpo/status.hpp"
#include "program/metric_source.hpp"

namespace hpo {

// Katib's default metricsFormat (pkg/metricscollector/v1beta1/common/const.go, DefaultFilter):
// `name=value` with blanks around '=' allowed.
extern const char kKatibDefaultFilter[];

// Rewrites the Go (RE2) regex `re2` of a Katib metricsFormat into the ECMAScript regex std::regex
// reads with the same matches:
//  * a '{' that does not start a repetition ({n}, {n,}, {n,m}) is a literal in RE2 and becomes
//    \{, as a '}' outside one becomes \} (Katib's own example "{metricName: ([\w|-]+), ...}" is
//    otherwise not an ECMAScript regex);
//  * named groups (?P<name>...) and (?<name>...) become plain groups (the same numbering);
//  * \A and \z become ^ and $ (ECMAScript reads them as the letters A and z);
//  * \Q...\E becomes its text, each special character escaped;
//  * a ']' first in a bracket expression ([]a] or [^]a]) is a literal in RE2 and becomes \].
// The rest is copied: \d \w \s \b, classes, [[:alpha:]], lazy repeats, (?:...), alternation.
// False, with `why` set, for what has no ECMAScript equivalent: inline flags ((?i), (?s:...)),
// Unicode classes (\pL, \p{Greek}), \x{...} and \C. What is not the same and is left as it is:
// RE2 matches UTF-8 characters and std::regex bytes (a '.' matches one byte of a multibyte
// character, which changes no match of a pattern whose '.' sits in a longer run), and \s also
// matches a vertical tab in ECMAScript.
bool KatibFilterAsEcmaScript(const std::string& re2, std::string* ecma_script, std::string* why);

// Compiles one metrics-file filter (ECMAScript; KatibFilterAsEcmaScript turns Katib's into these),
// as the config's check and KatibMetricsFile::Create both take it. BadInput, its message for the
// caller to put after where the filter is: "'FILTER' is not a regular expression: WHY" or
// "'FILTER' needs two groups: the metric's name, then its value".
Status CompileMetricsFileFilter(const std::string& filter, std::regex* compiled);

// Reads a Katib File collector's metrics file as it grows, and hands its lines to the trial's
// MetricReader (program/metric_reader.hpp) in forms it understands:
//  * TEXT: every match of every filter (all matches of the first, then of the second, ...)
//    reports the trimmed text of its first group as a metric's name and of its second as its
//    value (as Katib's parseLogsInTextFormat); one file line gives one line "name=value
//    name=value ..." (nothing when no filter matches), or, where a name is not one the reader
//    takes from pairs ([A-Za-z_][A-Za-z0-9_.|/@-]*), the JSON object {"name": value, ...}.
//    Values are passed on as numbers MetricReader reads (".5" as 0.5). A match whose value is
//    empty (the default filter on "loss=nan") is left out; one whose value is not a number is
//    left out too, unless it reports the objective: then it is a Failure.
//    Lines longer than 4,096 bytes are not searched: std::regex recurses per character and
//    would overflow the stack (RE2, Katib's engine, has no such limit).
//  * JSON: each non-blank line must be one JSON object (Python json.dumps's NaN, Infinity and
//    -Infinity allowed); it is passed on without its "timestamp" member and with every string
//    member that holds a number ("0.95", as Katib's hypertune logger writes them) as that number.
//    Katib reads string members only; numbers are read too. A line that is not a JSON object, or
//    an objective that is neither a number nor a string holding one, is a Failure naming the file
//    and the line's number.
// The file is read from where the last poll stopped; a line without its newline yet waits for the
// next poll. A file that got shorter, or was replaced (another inode), is read again from its
// beginning (line numbers start again at 1). A file truncated and grown past where the last poll
// stopped between two polls cannot be told from one that grew, and is read from there on.
// Movable, not copyable; used by one thread.
class KatibMetricsFile final : public MetricSource {
 public:
  enum class Format { kText, kJson };

  // Compiles `filters` (ECMAScript; KatibFilterAsEcmaScript turns Katib's into these) once; none:
  // Katib's default. BadInput naming the filter when one is not a regex or has fewer than two
  // groups (the metric's name, then its value). `path` is this trial's own file; `objective` the
  // name of the metric the sweep optimizes.
  static Status Create(std::string path, Format format, const std::vector<std::string>& filters,
                       std::string objective, KatibMetricsFile* file);

  KatibMetricsFile() = default;
  KatibMetricsFile(KatibMetricsFile&&) = default;
  KatibMetricsFile& operator=(KatibMetricsFile&&) = default;
  KatibMetricsFile(const KatibMetricsFile&) = delete;
  KatibMetricsFile& operator=(const KatibMetricsFile&) = delete;

  // MetricSource. Failure for a file that exists but cannot be read or is not a regular file, a
  // line of more than 1 MiB, and the format's own errors above.
  Status Poll(std::vector<std::string>* lines) override;
  bool started() const override { return started_; }
  std::string path() const override { return path_; }

 private:
  // Splits newly read bytes into lines: complete ones are converted, the rest waits in partial_.
  Status Consume(std::string_view bytes, std::vector<std::string>* lines);
  // Turns one complete line of the file (without its line end) into what the MetricReader reads;
  // appends nothing when the line reports nothing.
  Status ConvertLine(const std::string& line, std::vector<std::string>* lines) const;
  Status ConvertTextLine(const std::string& line, std::vector<std::string>* lines) const;
  Status ConvertJsonLine(const std::string& line, std::vector<std::string>* lines) const;
  // Starts over from the beginning of the file (truncated or replaced).
  void Restart();
  // What a message says of the current line: "PATH:LINE".
  std::string Where() const;

  std::string path_;
  Format format_ = Format::kText;
  std::vector<std::regex> filters_;
  std::string objective_;
  bool started_ = false;
  dev_t device_ = 0;  // the file read so far: (device, inode)
  ino_t inode_ = 0;
  uint64_t offset_ = 0;      // bytes of the file read so far
  std::string partial_;      // the last line read, still without its newline
  int64_t line_number_ = 0;  // complete lines read so far
};

}  // namespace hpo
