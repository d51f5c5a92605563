// The study file (STUDY.h5, HDF5), layout fixed by docs/design.md, "The study file":
//   /trials  1-D chunked compound dataset, one row per finished trial (and one per pause of a
//            trial paused at an ASHA rung, status "paused", superseded by its later rows: the last
//            row of a trial_id is its state; ReadStudy returns only that one): trial_id (int64),
//            status (fixed-length string), objective (float64), with several objectives one
//            float64 field per further objective named "objective:METRIC" (in config order;
//            their goals in the root attribute objective_goals, space-separated), one field per
//            hyperparameter named
//            as in the config (int64 | float64 | fixed-length string), epochs (int64),
//            duration_s (float64), group (int64), message (fixed-length string). A parameter
//            absent from a trial (`conditions:`) holds its column's absent mark: NaN (float64),
//            INT64_MIN (int64) or the empty string, values no parameter takes (the config parser
//            refuses them), so pandas reads absent floats as NaN.
//   /curves  1-D chunked compound dataset: trial_id (int64), epoch (int64), one float64 field per
//            reported metric.
//   /test_NAME  2-D float64 datasets a task reports about the best model on the test split (e.g.
//            /test_confusion: rows = true class, columns = predicted), attribute `labels` (1-D
//            fixed-length strings, the class names) when the task names them.
//   root attributes (fixed-length strings or scalars): config, metric_name, metric_goal,
//            world_size, start_time, version, and any extra attribute set later (e.g.
//            best_trial_id, the task's test_* metrics, and the sweep's state for resume:
//            searcher_fingerprint, scheduler_fingerprint, running_trials, and warm_start: the
//            warm-start studies' paths and trial counts).
//   /published, /state  the appendable layout's commit records and state slots: while a study is
//            written (or after a crash) /trials and /curves have rows past the published counts
//            (fill rows: trial_id -1, empty status), and the attributes published since the
//            file was last rewritten are in /state; once the writer closes, the extents are the
//            counts and every attribute is a root attribute. study_writer.cpp has the protocol;
//            ReadStudy applies it (in Python: rows below the counts of the valid record of
//            /published with the larger sequence; tests/unit/check_study_readable.py).
// Only fixed-length strings, so h5py + pandas.DataFrame and pandas.read_hdf (PyTables generic
// table) both read it. Written by rank 0 only; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "hpo/param.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/trial.hpp"

namespace hpo {

// The study's file name in a sweep's output folder.
inline constexpr const char* kStudyFileName = "study.h5";

// One hyperparameter column of /trials.
struct StudyParamColumn {
  std::string name;
  ParamType type = ParamType::kFloat;
  size_t string_width = 0;  // kString only: bytes of the fixed-length field, including NUL
  // Whether a trial may lack the parameter (it has a condition): the writer then stores the
  // column's absent mark. Not stored in the file (ReadStudy reads every mark as absent, and
  // leaves this false); StudyWriter::Open does not compare it.
  bool conditional = false;
};

// A further objective of a study of several (SweepSpec::objectives[1], ...): its /trials column
// "objective:METRIC" (the metric escaped as in /curves) and its goal.
struct StudyObjective {
  std::string metric;
  std::string goal = "minimize";  // "minimize" | "maximize"
};

struct StudyLayout {
  std::vector<StudyParamColumn> params;   // in config order
  std::vector<std::string> metric_names;  // fields of /curves after trial_id and epoch
  // Several objectives: the further ones, in config order (empty for one objective); their
  // values are TrialResult::further_objectives.
  std::vector<StudyObjective> further_objectives;
  // Population-based training: /trials ends with parent_trial and parent_epoch (TrialResult's).
  bool lineage = false;
};

using StudyAttribute = std::variant<int64_t, double, std::string>;

struct StudyAttributes {
  std::string config;       // the config file's text
  std::string metric_name;  // the sweep metric
  std::string metric_goal;  // "minimize" | "maximize"
  int64_t world_size = 0;
  std::string start_time;  // ISO 8601 UTC
  std::string version;     // the program's version
};

// Appends trials to a study file. Stage keeps a trial in memory; Publish appends the staged trials
// to the file in place and commits them with the attributes in one small record written last
// (study_writer.cpp), so its cost does not grow with the study. A crash at any moment, SIGKILL
// included, leaves the last published study, complete and readable; what was staged after it is
// lost. Staging and publishing separately lets the coordinator publish a burst of results once
// (group commit). Close (or destroying the writer) compacts the file (extents = rows, every
// attribute a root attribute). A publish that fails (a full disk, an unwritable file) leaves the
// study as last published and stops the writer: later publishes return the same failure. One
// writer per study (STUDY.h5.lock); rank 0 only; not thread-safe.
class StudyWriter {
 public:
  // Creates `path` (truncating nothing: an existing file is a BadInput error naming it).
  static Status Create(const std::string& path, const StudyLayout& layout,
                       const StudyAttributes& attributes, std::unique_ptr<StudyWriter>* writer);

  // Opens an existing study to append to it (resume). BadInput when the file is not a study with
  // `layout` or another writer has it open. Changes nothing on disk until the first Publish.
  static Status Open(const std::string& path, const StudyLayout& layout,
                     std::unique_ptr<StudyWriter>* writer);

  virtual ~StudyWriter() = default;

  // Adds one finished trial to the study in memory; the next Publish writes it. Its params must
  // hold every column of the layout that is not conditional with the column's type (a
  // conditional column it lacks gets the absent mark), and each curve entry one value per metric
  // name; otherwise Failure, and nothing is staged.
  virtual Status Stage(const TrialResult& result) = 0;

  // Sets (creating or replacing) the given root attributes, then publishes the study: every trial
  // staged so far and every attribute reach the disk together, atomically. Keep the attributes
  // published often small (they are rewritten whole with every publish).
  virtual Status Publish(const std::map<std::string, StudyAttribute>& attributes) = 0;

  // Sets (creating or replacing) the dataset /test_TABLE.NAME; the next Publish writes it.
  // Failure for an empty name or values that are not rows * columns.
  virtual Status StageTable(const MetricTable& table) = 0;

  // Compacts the study (when this writer published; what was staged since the last publish is
  // dropped) and closes it. Failure "writing PATH: reason" when the compaction cannot be written
  // (the study stays as last published, as complete, with fill rows past its counts), or the
  // failure of an earlier publish. Call it last: no call may follow.
  virtual Status Close() = 0;

  // Stage + Publish: appends one trial and publishes.
  Status Append(const TrialResult& result) {
    HPO_RETURN_IF_ERROR(Stage(result));
    return Publish({});
  }

  // Sets one root attribute and publishes.
  Status SetAttribute(const std::string& name, const StudyAttribute& value) {
    return Publish({{name, value}});
  }
};

// A stretch of time one group ran a trial: what one row of /trials records.
struct RunSpan {
  double start_time_s = 0.0;  // NaN in studies from before start_time_s
  double duration_s = 0.0;
  int64_t group = 0;
};

// Everything in a study file, as read back.
struct StudyContents {
  StudyLayout layout;
  StudyAttributes attributes;
  std::map<std::string, StudyAttribute> extra_attributes;  // root attributes beyond the above
  std::vector<TrialResult> trials;  // the last row of each trial, file order; curve from /curves
  // The rows before a trial's last (one per pause: ASHA's promotion variant, population-based
  // training), as run spans in file order, for the trials that have any; a row of the same run as
  // the last (a member's pause, repeated by the row that stops it) is left out.
  std::map<int64_t, std::vector<RunSpan>> earlier_spans;
  std::vector<MetricTable> tables;  // /test_* datasets, by name (name without "test_")
};

// `path` itself, or `path`/study.h5 when `path` is a folder (a sweep's output folder).
std::string StudyPathOf(const std::string& path);

// Reads a study file. A missing file, a file that is not HDF5, or one without the layout above is
// BadInput naming the path and what is missing. A field holding its column's absent mark is left
// out of its trial's params.
Status ReadStudy(const std::string& path, StudyContents* contents);

}  // namespace hpo
