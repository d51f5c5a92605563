// The row layout of the study file's compound datasets, shared by the writer and the reader.
// Private to core/src/study. Plain value types; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hdf5_handles.hpp"
#include "hpo/status.hpp"
#include "study/study_file.hpp"

namespace hpo::study_internal {

inline constexpr char kTrialsDataset[] = "trials";
inline constexpr char kCurvesDataset[] = "curves";
// /test_NAME: a task's table about the best model (StudyWriter::StageTable), class names in
// its `labels` attribute.
inline constexpr char kTablePrefix[] = "test_";
inline constexpr char kTableLabelsAttribute[] = "labels";

// Fixed columns of /trials around the hyperparameter columns, and their string widths.
inline constexpr char kTrialIdField[] = "trial_id";
inline constexpr char kStatusField[] = "status";
inline constexpr char kObjectiveField[] = "objective";
inline constexpr char kEpochsField[] = "epochs";
inline constexpr char kDurationField[] = "duration_s";
inline constexpr char kGroupField[] = "group";
inline constexpr char kMessageField[] = "message";
// The last column, absent from studies written before hpo recorded dispatch times (the reader
// then gives NaN; a resumed writer adds the column).
inline constexpr char kStartTimeField[] = "start_time_s";
// After start_time_s in the studies of population-based training (StudyLayout::lineage).
inline constexpr char kParentTrialField[] = "parent_trial";
inline constexpr char kParentEpochField[] = "parent_epoch";
inline constexpr size_t kStatusWidth = 16;
inline constexpr size_t kMessageWidth = 256;
// `message` cut to at most max_bytes for its column. A message's first line is its reason and its
// end the detail that explains it (the last lines of a program's stderr, ending with its
// exception), so a longer one keeps its first line, then "\n...", then as much of its end as
// fits, from a line's start where one is in reach (else from a UTF-8 character's). A message
// whose first line leaves no room for that is cut at its end instead.
std::string FitMessage(const std::string& message, size_t max_bytes);
// Columns of /trials before the parameters (and before the further objectives' columns of a
// study of several objectives), and after them.
inline constexpr size_t kTrialsLeadingFields = 3;
// A further objective's /trials column: "objective:" + MetricColumnName(metric); a
// hyperparameter whose name starts so is stored as "param:NAME". Their goals are the root
// attribute kObjectiveGoalsAttribute, space-separated, in column order.
inline constexpr char kFurtherObjectivePrefix[] = "objective:";
std::string FurtherObjectiveColumnName(const std::string& metric);
// The columns before the parameters in a study of `layout`.
inline size_t ParamsStart(const StudyLayout& layout) {
  return kTrialsLeadingFields + layout.further_objectives.size();
}
// A hyperparameter named like a fixed /trials column (a program's own `--epochs`, say) is stored
// as "param:NAME" and read back as NAME.
inline constexpr char kCollidingParamPrefix[] = "param:";
bool IsFixedTrialsField(const std::string& name);
std::string ParamColumnName(const std::string& param);
std::string ParamNameOfColumn(const std::string& column);
// A metric's /curves column: '%' becomes "%25" and '/' "%2F" (PyTables refuses '/' in column
// names; W&B's metrics are often named "val/loss"); MetricNameOfColumn reverses it.
std::string MetricColumnName(const std::string& metric);
std::string MetricNameOfColumn(const std::string& column);
inline constexpr size_t kTrialsTrailingFields = 5;
// The trailing columns of a study written before start_time_s.
inline constexpr size_t kLegacyTrialsTrailingFields = 4;

// The trial_id of the fill value of /trials and /curves: a row that reads with it (and, in
// /trials, an empty status) was added by an Append that a crash cut short, and is skipped.
inline constexpr int64_t kUnwrittenTrialId = -1;

// Fixed columns of /curves before the metric columns.
inline constexpr char kEpochField[] = "epoch";
inline constexpr size_t kCurvesLeadingFields = 2;

// The appendable layout (study_writer.cpp has the protocol). /trials and /curves hold rows up to
// their capacity; only the rows below the counts of the latest valid /published record are the
// study, the rest are fill rows (trial_id kUnwrittenTrialId) or rows of a publish a crash cut
// short. /published has two records, written alternately; /state holds two slots of the sweep's
// small state (root attributes published since the file was last rewritten), one per record.
// A file without /published (written before this layout) is the study as a whole.
inline constexpr char kPublishedDataset[] = "published";
inline constexpr char kStateDataset[] = "state";

// One /published record, as stored (every field little-endian 64-bit; this struct is also the
// memory layout).
struct CommitRecord {
  int64_t sequence = 0;      // publishes since the file was created; the larger valid one wins
  int64_t trials = 0;        // rows of /trials that are the study
  int64_t curves = 0;        // rows of /curves that are the study
  int64_t state_offset = 0;  // the slot of /state that holds the state of this record
  int64_t state_size = 0;    // bytes of it
  uint64_t state_checksum = 0;
  uint64_t checksum = 0;  // Fnv1a64 of the fields above
};

// The compound type of /published ("sequence", ..., "checksum"): file or native.
Status MakeCommitType(bool file, DatatypeHandle* type);
uint64_t Fnv1a64(const void* data, size_t size);
uint64_t RecordChecksum(const CommitRecord& record);

// Reads /published and the state slot of its latest valid record into `record` and `state`.
// `*present` is false for a file without /published (nothing else is set then). BadInput when no
// record is valid or the state fails its checksum; `*torn` is true then, as when a writer was
// overwriting them while they were read (read again).
Status ReadPublished(hid_t file, bool* present, CommitRecord* record,
                     std::map<std::string, StudyAttribute>* state, bool* torn);

// The state slot's text: one line per attribute, "KIND\tNAME\tVALUE\n" with KIND i (decimal
// int64), f (C99 hex float, Python's float.fromhex) or s (the bytes in hex). Names with a tab or a
// newline cannot be encoded (the writer stores those as real attributes instead).
bool CanEncodeStateName(const std::string& name);
std::string EncodeStateAttributes(const std::map<std::string, StudyAttribute>& attributes);
bool DecodeStateAttributes(const std::string& text, std::map<std::string, StudyAttribute>* out);

// Root attributes every study file has.
inline constexpr char kConfigAttribute[] = "config";
inline constexpr char kMetricNameAttribute[] = "metric_name";
inline constexpr char kMetricGoalAttribute[] = "metric_goal";
inline constexpr char kWorldSizeAttribute[] = "world_size";
inline constexpr char kStartTimeAttribute[] = "start_time";
inline constexpr char kVersionAttribute[] = "version";
// Several objectives only: the further objectives' goals ("minimize maximize ...").
inline constexpr char kObjectiveGoalsAttribute[] = "objective_goals";

enum class FieldKind { kInt64, kFloat64, kString };

// One member of a compound row.
struct Field {
  std::string name;
  FieldKind kind = FieldKind::kFloat64;
  size_t size = 0;     // bytes: 8 for numbers, the fixed width (including the NUL) for strings
  size_t offset = 0;   // from the start of the row
  bool ascii = false;  // kString only: ASCII rather than UTF-8 character set
};

// The members of one compound dataset, packed without padding in insertion order. The same packed
// offsets serve as the file type (little-endian standard types) and the memory type (native
// types), so a row buffer built here is written and read with one H5Dwrite/H5Dread.
class RowSchema {
 public:
  void AddInt64(const std::string& name);
  void AddFloat64(const std::string& name);
  void AddString(const std::string& name, size_t width, bool ascii);

  const std::vector<Field>& fields() const { return fields_; }
  size_t row_size() const { return row_size_; }

  // Builds the HDF5 compound type: standard little-endian types for the file, native for memory.
  Status MakeFileType(DatatypeHandle* type) const { return MakeType(/*file=*/true, type); }
  Status MakeMemoryType(DatatypeHandle* type) const { return MakeType(/*file=*/false, type); }

  // Accessors on one row buffer of row_size() bytes; `index` is a field index whose kind matches.
  void PutInt64(char* row, size_t index, int64_t value) const;
  void PutFloat64(char* row, size_t index, double value) const;
  // Copies at most size-1 bytes of `value` (cut back to a UTF-8 character boundary), then NULs.
  void PutString(char* row, size_t index, const std::string& value) const;
  int64_t GetInt64(const char* row, size_t index) const;
  double GetFloat64(const char* row, size_t index) const;
  std::string GetString(const char* row, size_t index) const;

 private:
  Status MakeType(bool file, DatatypeHandle* type) const;
  void Add(Field field);

  std::vector<Field> fields_;
  size_t row_size_ = 0;
};

// The absent mark of a parameter column (study_file.hpp): NaN, INT64_MIN or the empty string.
void PutAbsentParam(const RowSchema& schema, ParamType type, size_t index, char* row);
// Whether `value`, read from a parameter column, is its absent mark.
bool IsAbsentParam(const ParamValue& value);

// A fixed-length string type of `width` bytes (NUL-terminated).
Status MakeStringType(size_t width, bool ascii, DatatypeHandle* type);

// The /trials and /curves rows for `layout`, as the writer creates them.
RowSchema TrialsSchema(const StudyLayout& layout);
// /trials as written before start_time_s: TrialsSchema without its last field (a prefix of its
// rows, byte for byte).
RowSchema LegacyTrialsSchema(const StudyLayout& layout);
RowSchema CurvesSchema(const StudyLayout& layout);

}  // namespace hpo::study_internal
