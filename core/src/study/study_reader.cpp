// ReadStudy over the HDF5 C API: discovers the parameter and metric columns from the compound
// types on disk, reads the published rows (the counts of /published; every row of a file without
// it, see study_writer.cpp) through a packed memory compound type built for them, and collects
// the root attributes with the published state over them.

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "hdf5_handles.hpp"
#include "study/study_file.hpp"
#include "study_schema.hpp"

namespace hpo {

namespace {

using study_internal::AttributeHandle;
using study_internal::CollectLinkName;
using study_internal::DatasetHandle;
using study_internal::DataspaceHandle;
using study_internal::DatatypeHandle;
using study_internal::FieldKind;
using study_internal::FileHandle;
using study_internal::Hdf5Error;
using study_internal::PropertyListHandle;
using study_internal::RowSchema;
using study_internal::ScopedErrorSilencer;

// One member of a compound type on disk, as far as the reader cares.
struct MemberInfo {
  std::string name;
  H5T_class_t type_class = H5T_NO_CLASS;
  size_t size = 0;
  bool variable_string = false;
  bool ascii = false;  // strings: H5T_CSET_ASCII (HDF5 converts no string between character sets)
};

Status ReadMembers(hid_t dataset, const std::string& what, std::vector<MemberInfo>* members) {
  DatatypeHandle type(H5Dget_type(dataset));
  if (!type.valid()) return Status::BadInput(what + ": " + Hdf5Error("H5Dget_type"));
  if (H5Tget_class(type.get()) != H5T_COMPOUND) {
    return Status::BadInput(what + " is not a compound dataset");
  }
  const int count = H5Tget_nmembers(type.get());
  if (count < 0) return Status::BadInput(what + ": " + Hdf5Error("H5Tget_nmembers"));
  for (unsigned i = 0; i < static_cast<unsigned>(count); ++i) {
    MemberInfo member;
    char* name = H5Tget_member_name(type.get(), i);
    if (name == nullptr) return Status::BadInput(what + ": " + Hdf5Error("H5Tget_member_name"));
    member.name = name;
    H5free_memory(name);
    DatatypeHandle member_type(H5Tget_member_type(type.get(), i));
    if (!member_type.valid()) {
      return Status::BadInput(what + ": " + Hdf5Error("H5Tget_member_type"));
    }
    member.type_class = H5Tget_class(member_type.get());
    member.size = H5Tget_size(member_type.get());
    member.variable_string =
        member.type_class == H5T_STRING && H5Tis_variable_str(member_type.get()) > 0;
    member.ascii =
        member.type_class == H5T_STRING && H5Tget_cset(member_type.get()) == H5T_CSET_ASCII;
    members->push_back(std::move(member));
  }
  return Status::Ok();
}

// Adds `member` to `schema` as a field of `kind`, or explains why its type does not fit.
Status AddField(const MemberInfo& member, FieldKind kind, const std::string& what,
                RowSchema* schema) {
  switch (kind) {
    case FieldKind::kInt64:
      if (member.type_class != H5T_INTEGER) break;
      schema->AddInt64(member.name);
      return Status::Ok();
    case FieldKind::kFloat64:
      if (member.type_class != H5T_FLOAT) break;
      schema->AddFloat64(member.name);
      return Status::Ok();
    case FieldKind::kString:
      if (member.type_class != H5T_STRING || member.variable_string) break;
      schema->AddString(member.name, member.size, member.ascii);
      return Status::Ok();
  }
  static const char* const kExpected[] = {"an integer", "a float", "a fixed-length string"};
  return Status::BadInput(what + " column '" + member.name + "' is not " +
                          kExpected[static_cast<int>(kind)]);
}

// Checks that `members[index]` is the fixed column `name` of `kind` and adds it to `schema`.
Status AddFixedField(const std::vector<MemberInfo>& members, size_t index, const char* name,
                     FieldKind kind, const std::string& what, RowSchema* schema) {
  if (members[index].name != name) {
    return Status::BadInput(what + " column " + std::to_string(index) + " is '" +
                            members[index].name + "', expected '" + name + "'");
  }
  return AddField(members[index], kind, what, schema);
}

// Reads the first `rows` rows of `dataset` into `buffer` through the memory type of `schema`;
// BadInput when the rows do not read.
Status ReadRows(hid_t dataset, const RowSchema& schema, const std::string& what, hsize_t rows,
                std::vector<char>* buffer) {
  buffer->assign(schema.row_size() * rows, 0);
  if (rows == 0) return Status::Ok();
  DatatypeHandle memory_type;
  HPO_RETURN_IF_ERROR(schema.MakeMemoryType(&memory_type));
  DataspaceHandle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {0};
  const hsize_t count[1] = {rows};
  DataspaceHandle memory_space(H5Screate_simple(1, count, nullptr));
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dread(dataset, memory_type.get(), memory_space.get(), file_space.get(), H5P_DEFAULT,
              buffer->data()) < 0) {
    return Status::BadInput(what + ": " + Hdf5Error("H5Dread"));
  }
  return Status::Ok();
}

// The rows of a table that are the study: `published` of them when the file says (/published),
// else (-1) every row; BadInput when the table has fewer.
Status StudyRows(const std::string& what, hsize_t extent, int64_t published, hsize_t* rows) {
  *rows = extent;
  if (published < 0) return Status::Ok();
  if (static_cast<hsize_t>(published) > extent) {
    return Status::BadInput(what + " has " + std::to_string(extent) + " rows, /published counts " +
                            std::to_string(published));
  }
  *rows = static_cast<hsize_t>(published);
  return Status::Ok();
}

// Opens the study table `name` (a 1-D dataset): its rows that are the study (StudyRows) and its
// columns.
Status OpenStudyTable(hid_t file, const char* name, int64_t published, DatasetHandle* dataset,
                      hsize_t* rows, std::vector<MemberInfo>* members) {
  const std::string what = std::string("/") + name;
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return Status::BadInput("no " + what + " dataset");
  dataset->reset(H5Dopen2(file, name, H5P_DEFAULT));
  if (!dataset->valid()) return Status::BadInput(what + ": " + Hdf5Error("H5Dopen2"));
  DataspaceHandle space(H5Dget_space(dataset->get()));
  if (!space.valid()) return Status::BadInput(what + ": " + Hdf5Error("H5Dget_space"));
  if (H5Sget_simple_extent_ndims(space.get()) != 1) {
    return Status::BadInput(what + " is not one-dimensional");
  }
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  HPO_RETURN_IF_ERROR(StudyRows(what, dims[0], published, rows));
  return ReadMembers(dataset->get(), what, members);
}

// Where /trials keeps its columns: the parameters lie between the leading fixed columns and
// `tail`, the first of the trailing ones; start_time_s comes last in studies that have it.
struct TrialsColumns {
  RowSchema schema;
  size_t params_start = study_internal::kTrialsLeadingFields;  // after the further objectives
  size_t tail = 0;
  bool has_start_time = false;
  bool has_lineage = false;  // parent_trial and parent_epoch after start_time_s
};

// Adds the parameter columns, members [start, tail), to `schema` and to `params` (cleared first),
// their types from the types on disk.
Status AddParamColumns(const std::vector<MemberInfo>& members, size_t start, size_t tail,
                       const std::string& what, std::vector<StudyParamColumn>* params,
                       RowSchema* schema) {
  params->clear();
  for (size_t i = start; i < tail; ++i) {
    const MemberInfo& member = members[i];
    StudyParamColumn column;
    column.name = study_internal::ParamNameOfColumn(member.name);
    FieldKind kind = FieldKind::kFloat64;
    if (member.type_class == H5T_INTEGER) {
      column.type = ParamType::kInt;
      kind = FieldKind::kInt64;
    } else if (member.type_class == H5T_STRING) {
      column.type = ParamType::kString;
      column.string_width = member.size;
      kind = FieldKind::kString;
    } else if (member.type_class != H5T_FLOAT) {
      return Status::BadInput(what + " column '" + member.name +
                              "' is not an integer, a float or a fixed-length string");
    }
    HPO_RETURN_IF_ERROR(AddField(member, kind, what, schema));
    params->push_back(std::move(column));
  }
  return Status::Ok();
}

// The row schema of /trials from its `members` on disk, with its parameter columns as `params`;
// BadInput when a fixed column is missing or misplaced or a column's type does not fit.
Status ReadTrialsColumns(const std::vector<MemberInfo>& members, const std::string& what,
                         std::vector<StudyParamColumn>* params,
                         std::vector<StudyObjective>* objectives, TrialsColumns* columns) {
  // Studies written before start_time_s end with message; a parameter column never comes last.
  columns->has_lineage =
      !members.empty() && members.back().name == study_internal::kParentEpochField;
  columns->has_start_time =
      columns->has_lineage ||
      (!members.empty() && members.back().name == study_internal::kStartTimeField);
  const size_t trailing = (columns->has_start_time ? study_internal::kTrialsTrailingFields
                                                   : study_internal::kLegacyTrialsTrailingFields) +
                          (columns->has_lineage ? 2 : 0);
  const size_t fixed = study_internal::kTrialsLeadingFields + trailing;
  if (members.size() < fixed) {
    return Status::BadInput(what + " has " + std::to_string(members.size()) +
                            " columns, expected at least " + std::to_string(fixed));
  }
  RowSchema* schema = &columns->schema;
  HPO_RETURN_IF_ERROR(
      AddFixedField(members, 0, study_internal::kTrialIdField, FieldKind::kInt64, what, schema));
  HPO_RETURN_IF_ERROR(
      AddFixedField(members, 1, study_internal::kStatusField, FieldKind::kString, what, schema));
  HPO_RETURN_IF_ERROR(AddFixedField(members, 2, study_internal::kObjectiveField,
                                    FieldKind::kFloat64, what, schema));
  const size_t tail = members.size() - trailing;
  columns->tail = tail;
  // Several objectives: the further ones' columns follow `objective` (absent in other studies).
  objectives->clear();
  const std::string prefix = study_internal::kFurtherObjectivePrefix;
  size_t start = study_internal::kTrialsLeadingFields;
  while (start < tail && members[start].name.rfind(prefix, 0) == 0) {
    HPO_RETURN_IF_ERROR(AddField(members[start], FieldKind::kFloat64, what, schema));
    objectives->push_back(
        {study_internal::MetricNameOfColumn(members[start].name.substr(prefix.size())), ""});
    ++start;
  }
  columns->params_start = start;
  HPO_RETURN_IF_ERROR(AddParamColumns(members, start, tail, what, params, schema));
  HPO_RETURN_IF_ERROR(
      AddFixedField(members, tail, study_internal::kEpochsField, FieldKind::kInt64, what, schema));
  HPO_RETURN_IF_ERROR(AddFixedField(members, tail + 1, study_internal::kDurationField,
                                    FieldKind::kFloat64, what, schema));
  HPO_RETURN_IF_ERROR(AddFixedField(members, tail + 2, study_internal::kGroupField,
                                    FieldKind::kInt64, what, schema));
  HPO_RETURN_IF_ERROR(AddFixedField(members, tail + 3, study_internal::kMessageField,
                                    FieldKind::kString, what, schema));
  if (columns->has_start_time) {
    HPO_RETURN_IF_ERROR(AddFixedField(members, tail + 4, study_internal::kStartTimeField,
                                      FieldKind::kFloat64, what, schema));
  }
  if (columns->has_lineage) {
    HPO_RETURN_IF_ERROR(AddFixedField(members, tail + 5, study_internal::kParentTrialField,
                                      FieldKind::kInt64, what, schema));
    HPO_RETURN_IF_ERROR(AddFixedField(members, tail + 6, study_internal::kParentEpochField,
                                      FieldKind::kInt64, what, schema));
  }
  return Status::Ok();
}

// The trial of /trials row number `r`, at `row`; BadInput when its status is unknown.
Status DecodeTrial(const TrialsColumns& columns, const std::vector<StudyParamColumn>& params,
                   const char* row, hsize_t r, const std::string& what, TrialResult* trial) {
  const RowSchema& schema = columns.schema;
  trial->trial_id = schema.GetInt64(row, 0);
  const std::string status = schema.GetString(row, 1);
  if (!ParseTrialStatus(status, &trial->status)) {
    return Status::BadInput(what + " row " + std::to_string(r) + " has unknown status '" + status +
                            "'");
  }
  trial->objective = schema.GetFloat64(row, 2);
  for (size_t i = study_internal::kTrialsLeadingFields; i < columns.params_start; ++i) {
    trial->further_objectives.push_back(schema.GetFloat64(row, i));
  }
  for (size_t p = 0; p < params.size(); ++p) {
    const size_t index = columns.params_start + p;
    ParamValue value;
    switch (params[p].type) {
      case ParamType::kInt:
        value = schema.GetInt64(row, index);
        break;
      case ParamType::kFloat:
        value = schema.GetFloat64(row, index);
        break;
      case ParamType::kString:
        value = schema.GetString(row, index);
        break;
    }
    if (study_internal::IsAbsentParam(value)) continue;
    trial->params.push_back(NamedValue{params[p].name, std::move(value)});
  }
  const size_t tail = columns.tail;
  trial->epochs = schema.GetInt64(row, tail);
  trial->duration_s = schema.GetFloat64(row, tail + 1);
  trial->group = schema.GetInt64(row, tail + 2);
  trial->message = schema.GetString(row, tail + 3);
  if (columns.has_start_time) trial->start_time_s = schema.GetFloat64(row, tail + 4);
  if (columns.has_lineage) {
    trial->parent_trial = schema.GetInt64(row, tail + 5);
    trial->parent_epoch = schema.GetInt64(row, tail + 6);
  }
  return Status::Ok();
}

// A trial that paused (at an ASHA rung, at a boundary of population-based training) has a row per
// pause before its last: the last row is its state (its curve gathers the epochs of every row).
// Keeps that row of each trial in `trials` and moves the earlier ones, as run spans, to
// `earlier_spans`; but for a row of the same run as the last (dispatched at the same time on the
// same group: a member paused, then stopped by population-based training, whose stopped row
// repeats its last run), which is no span of its own.
void KeepLastRowOfEachTrial(std::vector<TrialResult>* trials,
                            std::map<int64_t, std::vector<RunSpan>>* earlier_spans) {
  std::unordered_map<int64_t, size_t> last_row;
  for (size_t t = 0; t < trials->size(); ++t) last_row[(*trials)[t].trial_id] = t;
  if (last_row.size() == trials->size()) return;  // one row per trial
  std::vector<TrialResult> latest;
  latest.reserve(last_row.size());
  for (size_t t = 0; t < trials->size(); ++t) {
    TrialResult& trial = (*trials)[t];
    const TrialResult& last = (*trials)[last_row[trial.trial_id]];
    if (&last == &trial) {
      latest.push_back(std::move(trial));
    } else if (trial.start_time_s != last.start_time_s || trial.group != last.group) {
      (*earlier_spans)[trial.trial_id].push_back(
          {trial.start_time_s, trial.duration_s, trial.group});
    }
  }
  *trials = std::move(latest);
}

Status ReadTrials(hid_t file, int64_t published, StudyContents* contents) {
  const std::string what = "/trials";
  DatasetHandle dataset;
  hsize_t rows = 0;
  std::vector<MemberInfo> members;
  HPO_RETURN_IF_ERROR(
      OpenStudyTable(file, study_internal::kTrialsDataset, published, &dataset, &rows, &members));
  TrialsColumns columns;
  HPO_RETURN_IF_ERROR(ReadTrialsColumns(members, what, &contents->layout.params,
                                        &contents->layout.further_objectives, &columns));
  contents->layout.lineage = columns.has_lineage;
  std::vector<char> buffer;
  HPO_RETURN_IF_ERROR(ReadRows(dataset.get(), columns.schema, what, rows, &buffer));
  contents->trials.clear();
  contents->trials.reserve(rows);
  for (hsize_t r = 0; r < rows; ++r) {
    TrialResult trial;
    HPO_RETURN_IF_ERROR(DecodeTrial(columns, contents->layout.params,
                                    buffer.data() + r * columns.schema.row_size(), r, what,
                                    &trial));
    contents->trials.push_back(std::move(trial));
  }
  KeepLastRowOfEachTrial(&contents->trials, &contents->earlier_spans);
  return Status::Ok();
}

Status ReadCurves(hid_t file, int64_t published, StudyContents* contents) {
  const std::string what = "/curves";
  DatasetHandle dataset;
  hsize_t rows = 0;
  std::vector<MemberInfo> members;
  HPO_RETURN_IF_ERROR(
      OpenStudyTable(file, study_internal::kCurvesDataset, published, &dataset, &rows, &members));
  if (members.size() < study_internal::kCurvesLeadingFields) {
    return Status::BadInput(what + " has " + std::to_string(members.size()) +
                            " columns, expected at least " +
                            std::to_string(study_internal::kCurvesLeadingFields));
  }
  RowSchema schema;
  HPO_RETURN_IF_ERROR(
      AddFixedField(members, 0, study_internal::kTrialIdField, FieldKind::kInt64, what, &schema));
  HPO_RETURN_IF_ERROR(
      AddFixedField(members, 1, study_internal::kEpochField, FieldKind::kInt64, what, &schema));
  contents->layout.metric_names.clear();
  for (size_t i = study_internal::kCurvesLeadingFields; i < members.size(); ++i) {
    HPO_RETURN_IF_ERROR(AddField(members[i], FieldKind::kFloat64, what, &schema));
    contents->layout.metric_names.push_back(study_internal::MetricNameOfColumn(members[i].name));
  }

  std::vector<char> buffer;
  HPO_RETURN_IF_ERROR(ReadRows(dataset.get(), schema, what, rows, &buffer));
  std::unordered_map<int64_t, size_t> trial_index;
  for (size_t t = 0; t < contents->trials.size(); ++t) {
    trial_index.emplace(contents->trials[t].trial_id, t);
  }
  const size_t metrics = contents->layout.metric_names.size();
  for (hsize_t r = 0; r < rows; ++r) {
    const char* row = buffer.data() + r * schema.row_size();
    // Rows of no trial in /trials are skipped.
    const auto found = trial_index.find(schema.GetInt64(row, 0));
    if (found == trial_index.end()) continue;
    EpochMetrics epoch;
    epoch.epoch = schema.GetInt64(row, 1);
    for (size_t m = 0; m < metrics; ++m) {
      epoch.values.push_back(schema.GetFloat64(row, study_internal::kCurvesLeadingFields + m));
    }
    contents->trials[found->second].curve.push_back(std::move(epoch));
  }
  for (TrialResult& trial : contents->trials) {
    std::stable_sort(
        trial.curve.begin(), trial.curve.end(),
        [](const EpochMetrics& a, const EpochMetrics& b) { return a.epoch < b.epoch; });
  }
  return Status::Ok();
}

// H5Aiterate2 callback: collects the attribute names.
herr_t CollectAttributeName(hid_t, const char* name, const H5A_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->push_back(name);
  return 0;
}

// Reads a scalar (or one-element) integer, float or string attribute. `*supported` is false
// for anything else (arrays, compound types, ...), which is then left out.
Status ReadAttribute(hid_t file, const std::string& name, StudyAttribute* value, bool* supported) {
  *supported = false;
  const std::string what = "attribute '" + name + "'";
  AttributeHandle attribute(H5Aopen(file, name.c_str(), H5P_DEFAULT));
  if (!attribute.valid()) return Status::BadInput(what + ": " + Hdf5Error("H5Aopen"));
  DataspaceHandle space(H5Aget_space(attribute.get()));
  DatatypeHandle type(H5Aget_type(attribute.get()));
  if (!space.valid() || !type.valid()) {
    return Status::BadInput(what + ": " + Hdf5Error("H5Aget_type"));
  }
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return Status::Ok();
  switch (H5Tget_class(type.get())) {
    case H5T_INTEGER: {
      int64_t number = 0;
      if (H5Aread(attribute.get(), H5T_NATIVE_INT64, &number) < 0) break;
      *value = number;
      *supported = true;
      return Status::Ok();
    }
    case H5T_FLOAT: {
      double number = 0.0;
      if (H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &number) < 0) break;
      *value = number;
      *supported = true;
      return Status::Ok();
    }
    case H5T_STRING: {
      DatatypeHandle memory_type(H5Tcopy(H5T_C_S1));
      if (!memory_type.valid() || H5Tset_cset(memory_type.get(), H5Tget_cset(type.get())) < 0) {
        break;
      }
      if (H5Tis_variable_str(type.get()) > 0) {
        if (H5Tset_size(memory_type.get(), H5T_VARIABLE) < 0) break;
        char* text = nullptr;
        if (H5Aread(attribute.get(), memory_type.get(), &text) < 0) break;
        *value = std::string(text == nullptr ? "" : text);
        H5Dvlen_reclaim(memory_type.get(), space.get(), H5P_DEFAULT, &text);
      } else {
        // One byte more than stored, so a NULL- or space-padded string keeps its last byte.
        const size_t width = H5Tget_size(type.get()) + 1;
        std::string text(width, '\0');
        if (H5Tset_size(memory_type.get(), width) < 0 ||
            H5Tset_strpad(memory_type.get(), H5T_STR_NULLTERM) < 0 ||
            H5Aread(attribute.get(), memory_type.get(), text.data()) < 0) {
          break;
        }
        text.resize(std::strlen(text.c_str()));
        *value = std::move(text);
      }
      *supported = true;
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
  return Status::BadInput(what + ": " + Hdf5Error("H5Aread"));
}

// The root attributes, then `state` (the published state: attributes newer than the root's).
Status ReadAttributes(hid_t file, const std::map<std::string, StudyAttribute>& state,
                      StudyContents* contents) {
  std::vector<std::string> names;
  if (H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectAttributeName, &names) < 0) {
    return Status::BadInput(Hdf5Error("H5Aiterate2"));
  }
  std::map<std::string, std::pair<StudyAttribute, bool>> values;  // name -> value, supported
  for (const std::string& name : names) {
    StudyAttribute value;
    bool supported = false;
    HPO_RETURN_IF_ERROR(ReadAttribute(file, name, &value, &supported));
    values[name] = {std::move(value), supported};
  }
  for (const auto& [name, value] : state) values[name] = {value, true};
  StudyAttributes& known = contents->attributes;
  const std::pair<const char*, std::string*> strings[] = {
      {study_internal::kConfigAttribute, &known.config},
      {study_internal::kMetricNameAttribute, &known.metric_name},
      {study_internal::kMetricGoalAttribute, &known.metric_goal},
      {study_internal::kStartTimeAttribute, &known.start_time},
      {study_internal::kVersionAttribute, &known.version},
  };
  known = StudyAttributes();
  contents->extra_attributes.clear();
  for (auto& [name, entry] : values) {
    StudyAttribute& value = entry.first;
    const bool supported = entry.second;
    std::string* known_string = nullptr;
    for (const auto& [known_name, field] : strings) {
      if (name == known_name) known_string = field;
    }
    if (known_string != nullptr) {
      if (!supported || !std::holds_alternative<std::string>(value)) {
        return Status::BadInput("attribute '" + name + "' is not a string");
      }
      *known_string = std::get<std::string>(value);
    } else if (name == study_internal::kWorldSizeAttribute) {
      if (!supported || !std::holds_alternative<int64_t>(value)) {
        return Status::BadInput("attribute '" + name + "' is not an integer");
      }
      known.world_size = std::get<int64_t>(value);
    } else if (supported) {
      contents->extra_attributes.emplace(name, std::move(value));
    }
  }
  return Status::Ok();
}

// One /test_NAME table: 2-D numbers, and the labels attribute when there is one.
Status ReadTable(hid_t file, const std::string& name, MetricTable* table) {
  const std::string where = "/" + name;
  DatasetHandle dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  if (!dataset.valid()) return Status::BadInput(where + ": " + Hdf5Error("H5Dopen2"));
  DataspaceHandle space(H5Dget_space(dataset.get()));
  hsize_t dims[2] = {0, 0};
  if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 2 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    return Status::BadInput(where + ": not a 2-D table");
  }
  table->name = name.substr(std::strlen(study_internal::kTablePrefix));
  table->rows = static_cast<int64_t>(dims[0]);
  table->columns = static_cast<int64_t>(dims[1]);
  table->values.assign(static_cast<size_t>(dims[0] * dims[1]), 0.0);
  if (!table->values.empty() && H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                                        H5P_DEFAULT, table->values.data()) < 0) {
    return Status::BadInput(where + ": " + Hdf5Error("H5Dread"));
  }
  if (H5Aexists(dataset.get(), study_internal::kTableLabelsAttribute) <= 0) return Status::Ok();
  AttributeHandle labels(
      H5Aopen(dataset.get(), study_internal::kTableLabelsAttribute, H5P_DEFAULT));
  DatatypeHandle type(labels.valid() ? H5Aget_type(labels.get()) : H5I_INVALID_HID);
  DataspaceHandle label_space(labels.valid() ? H5Aget_space(labels.get()) : H5I_INVALID_HID);
  if (!type.valid() || !label_space.valid() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Tis_variable_str(type.get()) > 0) {
    return Status::BadInput(where + ": its labels are not fixed-length strings");
  }
  const size_t width = H5Tget_size(type.get());
  const auto count = static_cast<size_t>(H5Sget_simple_extent_npoints(label_space.get()));
  std::vector<char> buffer(width * count + 1, '\0');
  if (H5Aread(labels.get(), type.get(), buffer.data()) < 0) {
    return Status::BadInput(where + ": " + Hdf5Error("H5Aread"));
  }
  for (size_t i = 0; i < count; ++i) {
    const char* start = buffer.data() + i * width;
    table->labels.emplace_back(start, strnlen(start, width));
  }
  return Status::Ok();
}

Status ReadTables(hid_t file, StudyContents* contents) {
  std::vector<std::string> names;
  hsize_t index = 0;
  if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &index, CollectLinkName, &names) < 0) {
    return Status::BadInput(Hdf5Error("H5Literate"));
  }
  contents->tables.clear();
  for (const std::string& name : names) {
    if (name.rfind(study_internal::kTablePrefix, 0) != 0) continue;
    MetricTable table;
    HPO_RETURN_IF_ERROR(ReadTable(file, name, &table));
    contents->tables.push_back(std::move(table));
  }
  return Status::Ok();
}

// The further objectives' goals from the root attribute objective_goals ("minimize" where it
// names none); BadInput when it names something else.
Status ReadObjectiveGoals(StudyContents* contents) {
  std::vector<StudyObjective>& objectives = contents->layout.further_objectives;
  std::vector<std::string> goals;
  const auto found = contents->extra_attributes.find(study_internal::kObjectiveGoalsAttribute);
  if (found != contents->extra_attributes.end() &&
      std::holds_alternative<std::string>(found->second)) {
    std::istringstream words(std::get<std::string>(found->second));
    for (std::string goal; words >> goal;) goals.push_back(goal);
  }
  for (size_t j = 0; j < objectives.size(); ++j) {
    objectives[j].goal = j < goals.size() ? goals[j] : "minimize";
    if (objectives[j].goal != "minimize" && objectives[j].goal != "maximize") {
      return Status::BadInput(std::string("attribute ") + study_internal::kObjectiveGoalsAttribute +
                              ": goal '" + objectives[j].goal +
                              "' is neither minimize nor "
                              "maximize");
    }
  }
  return Status::Ok();
}

// `*torn` is true when the published record or state was being rewritten as it was read.
Status ReadOpenStudy(hid_t file, StudyContents* contents, bool* torn) {
  bool present = false;
  study_internal::CommitRecord record;
  std::map<std::string, StudyAttribute> state;
  HPO_RETURN_IF_ERROR(study_internal::ReadPublished(file, &present, &record, &state, torn));
  const int64_t trials = present ? record.trials : -1;
  const int64_t curves = present ? record.curves : -1;
  HPO_RETURN_IF_ERROR(ReadTrials(file, trials, contents));
  HPO_RETURN_IF_ERROR(ReadCurves(file, curves, contents));
  HPO_RETURN_IF_ERROR(ReadTables(file, contents));
  HPO_RETURN_IF_ERROR(ReadAttributes(file, state, contents));
  return ReadObjectiveGoals(contents);
}

}  // namespace

std::string StudyPathOf(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error)
             ? (std::filesystem::path(path) / kStudyFileName).string()
             : path;
}

Status ReadStudy(const std::string& path, StudyContents* contents) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    return Status::BadInput(path + ": cannot open the study file: " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) return Status::BadInput(path + ": not a regular file");
  ScopedErrorSilencer silencer;
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 <= 0) return Status::BadInput(path + ": not an HDF5 file");
  // No file locking, so a study can be read while a sweep is writing it (see study_writer.cpp).
  PropertyListHandle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid() || H5Pset_file_locking(fapl.get(), false, true) < 0) {
    return Status::Failure(path + ": " + Hdf5Error("H5Pset_file_locking"));
  }
  // A writer publishing while this reads may rewrite the state slot being read (a checksum
  // tells): read again, a few times.
  Status status;
  for (int attempt = 0; attempt < 100; ++attempt) {
    FileHandle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!file.valid()) return Status::BadInput(path + ": " + Hdf5Error("H5Fopen"));
    StudyContents read;
    bool torn = false;
    status = ReadOpenStudy(file.get(), &read, &torn).WithContext(path);
    if (status.ok()) {
      *contents = std::move(read);
      return status;
    }
    if (!torn) return status;
    ::usleep(1000);
  }
  return status;
}

}  // namespace hpo
