// StudyWriter over the HDF5 C API.
//
// Write protocol (crash safety): the study lives in memory (HDF5's core driver, no backing store);
// Stage changes only that, and Publish writes it whole: the file image goes to STUDY.h5.tmp, which
// is renamed over STUDY.h5. rename(2) is atomic, so a reader (h5py, pandas, `hpo report`, a resume)
// sees the study as of one publish or the next, never a half-written one, and a process killed at
// any moment (SIGKILL included) leaves the last published study intact. After a power loss the file
// is the last published one on file systems that order a rename after the data it renames (ext4,
// XFS, Lustre); STUDY.h5.tmp may be left over and is ignored.
// - Format bounds [v1.8, v1.8]: a version 2 superblock, readable by every HDF5 1.8+ reader, and
//   object headers that allow attributes over 64 KiB (dense storage), e.g. a long config text or a
//   searcher state.
// - Publishing costs one copy of the file image (a 1,000-trial study is a few hundred KiB), so it
//   grows with the study; the coordinator stages results and publishes them in groups.
// - STUDY.h5.lock, held with flock(2) while a writer is open, keeps a second sweep (a resume
//   started twice) off the same study; file systems without flock skip the check.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "common/file_io.hpp"
#include "hdf5_handles.hpp"
#include "study/study_file.hpp"
#include "study_schema.hpp"

namespace hpo {

namespace {

using study_internal::AttributeHandle;
using study_internal::DatasetHandle;
using study_internal::DataspaceHandle;
using study_internal::DatatypeHandle;
using study_internal::FileHandle;
using study_internal::Hdf5Error;
using study_internal::PropertyListHandle;
using study_internal::RowSchema;
using study_internal::ScopedErrorSilencer;

constexpr hsize_t kTrialsChunkRows = 64;
constexpr hsize_t kCurvesChunkRows = 512;

// Checks the names and types of `layout`: non-empty unique names that collide with no fixed
// column, no '/' (PyTables refuses it in column names), string widths of at least one byte.
Status ValidateLayout(const StudyLayout& layout) {
  const std::set<std::string> trial_fixed = {
      study_internal::kTrialIdField,   study_internal::kStatusField,
      study_internal::kObjectiveField, study_internal::kEpochsField,
      study_internal::kDurationField,  study_internal::kGroupField,
      study_internal::kMessageField,   study_internal::kStartTimeField};
  std::set<std::string> seen;
  for (const StudyParamColumn& column : layout.params) {
    if (column.name.empty()) return Status::BadInput("a hyperparameter has an empty name");
    if (column.name.find('/') != std::string::npos) {
      return Status::BadInput("hyperparameter '" + column.name +
                              "': names with '/' cannot be study file columns");
    }
    if (column.name.rfind(study_internal::kCollidingParamPrefix, 0) == 0 &&
        trial_fixed.count(study_internal::ParamNameOfColumn(column.name)) != 0) {
      return Status::BadInput("hyperparameter '" + column.name + "': the prefix '" +
                              study_internal::kCollidingParamPrefix +
                              "' is how the study file stores a hyperparameter named like one of "
                              "its own columns");
    }
    if (!seen.insert(column.name).second) {
      return Status::BadInput("hyperparameter '" + column.name + "' appears twice");
    }
    if (column.type == ParamType::kString && column.string_width == 0) {
      return Status::BadInput("hyperparameter '" + column.name +
                              "': string column width must be at least 1 byte");
    }
  }
  const std::set<std::string> curve_fixed = {study_internal::kTrialIdField,
                                             study_internal::kEpochField};
  seen.clear();
  for (const std::string& metric : layout.metric_names) {
    if (metric.empty()) return Status::BadInput("a metric has an empty name");
    if (metric.find('/') != std::string::npos) {
      return Status::BadInput("metric '" + metric +
                              "': names with '/' cannot be study file columns");
    }
    if (curve_fixed.count(metric) != 0) {
      return Status::BadInput("metric '" + metric +
                              "' collides with the curve column of the same name");
    }
    if (!seen.insert(metric).second) {
      return Status::BadInput("metric '" + metric + "' appears twice");
    }
  }
  return Status::Ok();
}

// Creates an empty 1-D chunked dataset with unlimited maximum size whose fill value (what a row
// reads as before it is written) has trial_id kUnwrittenTrialId.
Status CreateTable(hid_t file, const char* name, const RowSchema& schema, hsize_t chunk_rows,
                   DatasetHandle* dataset) {
  DatatypeHandle file_type;
  HPO_RETURN_IF_ERROR(schema.MakeFileType(&file_type));
  DatatypeHandle memory_type;
  HPO_RETURN_IF_ERROR(schema.MakeMemoryType(&memory_type));
  std::vector<char> fill(schema.row_size(), 0);
  schema.PutInt64(fill.data(), 0, study_internal::kUnwrittenTrialId);
  const hsize_t dims[1] = {0};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  DataspaceHandle space(H5Screate_simple(1, dims, max_dims));
  if (!space.valid()) return Status::Failure(Hdf5Error("H5Screate_simple"));
  PropertyListHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!dcpl.valid()) return Status::Failure(Hdf5Error("H5Pcreate"));
  const hsize_t chunk[1] = {chunk_rows};
  if (H5Pset_chunk(dcpl.get(), 1, chunk) < 0) return Status::Failure(Hdf5Error("H5Pset_chunk"));
  if (H5Pset_fill_value(dcpl.get(), memory_type.get(), fill.data()) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_fill_value"));
  }
  DatasetHandle created(
      H5Dcreate2(file, name, file_type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!created.valid()) {
    return Status::Failure(Hdf5Error("H5Dcreate2") + " (/" + std::string(name) + ")");
  }
  *dataset = std::move(created);
  return Status::Ok();
}

// Writes a scalar root attribute, replacing any attribute of the same name.
Status WriteAttribute(hid_t file, const std::string& name, const StudyAttribute& value) {
  if (H5Aexists(file, name.c_str()) > 0 && H5Adelete(file, name.c_str()) < 0) {
    return Status::Failure(Hdf5Error("H5Adelete") + " (attribute '" + name + "')");
  }
  DatatypeHandle string_type;
  hid_t file_type = H5I_INVALID_HID;
  hid_t memory_type = H5I_INVALID_HID;
  const void* data = nullptr;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    file_type = H5T_STD_I64LE;
    memory_type = H5T_NATIVE_INT64;
    data = i;
  } else if (const auto* d = std::get_if<double>(&value)) {
    file_type = H5T_IEEE_F64LE;
    memory_type = H5T_NATIVE_DOUBLE;
    data = d;
  } else {
    const std::string& text = std::get<std::string>(value);
    HPO_RETURN_IF_ERROR(study_internal::MakeStringType(text.size() + 1, false, &string_type));
    file_type = memory_type = string_type.get();
    data = text.c_str();
  }
  DataspaceHandle space(H5Screate(H5S_SCALAR));
  if (!space.valid()) return Status::Failure(Hdf5Error("H5Screate"));
  AttributeHandle attribute(
      H5Acreate2(file, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute.valid()) {
    return Status::Failure(Hdf5Error("H5Acreate2") + " (attribute '" + name + "')");
  }
  if (H5Awrite(attribute.get(), memory_type, data) < 0) {
    return Status::Failure(Hdf5Error("H5Awrite") + " (attribute '" + name + "')");
  }
  return Status::Ok();
}

// Creates (or replaces) /test_NAME with the table's values and its labels attribute.
Status WriteTable(hid_t file, const MetricTable& table) {
  const std::string name = std::string(study_internal::kTablePrefix) + table.name;
  if (table.name.empty() || table.name.find('/') != std::string::npos) {
    return Status::Failure("table name '" + table.name + "' is empty or has a '/'");
  }
  if (table.rows < 0 || table.columns < 0 ||
      table.values.size() != static_cast<size_t>(table.rows * table.columns)) {
    return Status::Failure("table " + name + ": " + std::to_string(table.values.size()) +
                           " values for " + std::to_string(table.rows) + " x " +
                           std::to_string(table.columns));
  }
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0 &&
      H5Ldelete(file, name.c_str(), H5P_DEFAULT) < 0) {
    return Status::Failure(Hdf5Error("H5Ldelete") + " (" + name + ")");
  }
  const hsize_t dims[2] = {static_cast<hsize_t>(table.rows), static_cast<hsize_t>(table.columns)};
  DataspaceHandle space(H5Screate_simple(2, dims, nullptr));
  DatasetHandle dataset(H5Dcreate2(file, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT));
  if (!space.valid() || !dataset.valid()) {
    return Status::Failure(Hdf5Error("H5Dcreate2") + " (" + name + ")");
  }
  if (!table.values.empty() && H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                                        H5P_DEFAULT, table.values.data()) < 0) {
    return Status::Failure(Hdf5Error("H5Dwrite") + " (" + name + ")");
  }
  if (table.labels.empty()) return Status::Ok();
  size_t width = 1;
  for (const std::string& label : table.labels) width = std::max(width, label.size() + 1);
  std::vector<char> buffer(width * table.labels.size(), '\0');
  for (size_t i = 0; i < table.labels.size(); ++i) {
    std::copy(table.labels[i].begin(), table.labels[i].end(), buffer.begin() + i * width);
  }
  DatatypeHandle string_type;
  HPO_RETURN_IF_ERROR(study_internal::MakeStringType(width, false, &string_type));
  const hsize_t count[1] = {table.labels.size()};
  DataspaceHandle label_space(H5Screate_simple(1, count, nullptr));
  AttributeHandle labels(H5Acreate2(dataset.get(), study_internal::kTableLabelsAttribute,
                                    string_type.get(), label_space.get(), H5P_DEFAULT,
                                    H5P_DEFAULT));
  if (!labels.valid() || H5Awrite(labels.get(), string_type.get(), buffer.data()) < 0) {
    return Status::Failure(Hdf5Error("H5Awrite") + " (" + name + " labels)");
  }
  return Status::Ok();
}

// Shrinks a 1-D dataset back to `rows` rows after a failed append (best effort: the failure being
// reported is the append's).
void TruncateRows(hid_t dataset, hsize_t rows) {
  const hsize_t extent[1] = {rows};
  H5Dset_extent(dataset, extent);
}

// Appends `rows` rows from `buffer` to a 1-D dataset that holds `*size` rows, with one
// H5Dset_extent and one hyperslab H5Dwrite. On failure the extent is put back (TruncateRows).
Status AppendRows(hid_t dataset, hid_t memory_type, const std::vector<char>& buffer, hsize_t rows,
                  hsize_t* size) {
  const hsize_t old_size = *size;
  const hsize_t new_size[1] = {old_size + rows};
  if (H5Dset_extent(dataset, new_size) < 0) return Status::Failure(Hdf5Error("H5Dset_extent"));
  DataspaceHandle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {old_size};
  const hsize_t count[1] = {rows};
  DataspaceHandle memory_space(H5Screate_simple(1, count, nullptr));
  Status status;
  if (!file_space.valid() || !memory_space.valid()) {
    status = Status::Failure(Hdf5Error("H5Dget_space"));
  } else if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) <
             0) {
    status = Status::Failure(Hdf5Error("H5Sselect_hyperslab"));
  } else if (H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT,
                      buffer.data()) < 0) {
    status = Status::Failure(Hdf5Error("H5Dwrite"));
  }
  if (!status.ok()) {
    TruncateRows(dataset, old_size);
    return status;
  }
  *size = old_size + rows;
  return Status::Ok();
}

// Holds an exclusive flock(2) on PATH.lock for as long as it lives.
class StudyLock {
 public:
  ~StudyLock() {
    if (fd_ >= 0) ::close(fd_);
  }

  // BadInput when another process holds the lock; file systems without flock are not an error.
  Status Acquire(const std::string& study_path) {
    const std::string path = study_path + ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      return Status::BadInput(path + ": cannot create the lock file: " + std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return Status::Ok();
    const int error = errno;
    if (error == EWOULDBLOCK) {
      return Status::BadInput(study_path + ": another sweep is writing this study (" + path +
                              " is locked)");
    }
    return Status::Ok();
  }

 private:
  int fd_ = -1;
};

// File access for the in-memory study: core driver without a backing store, v1.8 format, and the
// starting image when one is given.
Status MakeMemoryFileAccess(const std::vector<char>* image, PropertyListHandle* fapl) {
  PropertyListHandle created(H5Pcreate(H5P_FILE_ACCESS));
  if (!created.valid()) return Status::Failure(Hdf5Error("H5Pcreate"));
  if (H5Pset_fapl_core(created.get(), 256 * 1024, false) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_fapl_core"));
  }
  if (H5Pset_libver_bounds(created.get(), H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_libver_bounds"));
  }
  if (image != nullptr &&
      H5Pset_file_image(created.get(), const_cast<char*>(image->data()), image->size()) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_file_image"));
  }
  *fapl = std::move(created);
  return Status::Ok();
}

// HDF5 1.10's H5Fget_file_image clears the superblock's file-consistency flags but recomputes the
// superblock checksum only for version 3 superblocks; a version 2 superblock (ours, format v1.8)
// then fails its checksum. Puts back the write-access flag the open file has (and HDF5 itself
// leaves on disk after a flush), which readers of version 2 superblocks ignore.
void RestoreSuperblockFlags(std::vector<char>* image) {
  static constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  constexpr size_t kVersionOffset = 8;
  constexpr size_t kFlagsOffset = 11;
  constexpr char kWriteAccess = 0x01;
  if (image->size() > kFlagsOffset && std::equal(kSignature, kSignature + 8, image->begin()) &&
      (*image)[kVersionOffset] == 2) {
    (*image)[kFlagsOffset] = kWriteAccess;
  }
}

// The writer over one study held in memory; see the protocol at the top of this file.
class Hdf5StudyWriter final : public StudyWriter {
 public:
  Hdf5StudyWriter(std::string path, StudyLayout layout)
      : path_(std::move(path)),
        layout_(std::move(layout)),
        trials_schema_(study_internal::TrialsSchema(layout_)),
        curves_schema_(study_internal::CurvesSchema(layout_)) {}

  ~Hdf5StudyWriter() override {
    ScopedErrorSilencer silencer;
    trials_.reset();
    curves_.reset();
    trials_memory_type_.reset();
    curves_memory_type_.reset();
    file_.reset();
  }

  Status Lock() { return lock_.Acquire(path_); }

  // Creates the study's datasets and attributes in memory and publishes it.
  Status Initialize(const StudyAttributes& attributes) {
    PropertyListHandle fapl;
    HPO_RETURN_IF_ERROR(MakeMemoryFileAccess(nullptr, &fapl));
    file_.reset(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file_.valid()) return Status::Failure(Hdf5Error("H5Fcreate"));
    HPO_RETURN_IF_ERROR(CreateTable(file_.get(), study_internal::kTrialsDataset, trials_schema_,
                                    kTrialsChunkRows, &trials_));
    HPO_RETURN_IF_ERROR(CreateTable(file_.get(), study_internal::kCurvesDataset, curves_schema_,
                                    kCurvesChunkRows, &curves_));
    HPO_RETURN_IF_ERROR(MakeMemoryTypes());
    const std::pair<const char*, StudyAttribute> root_attributes[] = {
        {study_internal::kConfigAttribute, attributes.config},
        {study_internal::kMetricNameAttribute, attributes.metric_name},
        {study_internal::kMetricGoalAttribute, attributes.metric_goal},
        {study_internal::kWorldSizeAttribute, attributes.world_size},
        {study_internal::kStartTimeAttribute, attributes.start_time},
        {study_internal::kVersionAttribute, attributes.version},
    };
    for (const auto& [name, value] : root_attributes) {
      HPO_RETURN_IF_ERROR(WriteAttribute(file_.get(), name, value));
    }
    return PublishImage();
  }

  // Loads the published study into memory to append to it; BadInput when it is not a study file
  // with this writer's layout.
  Status Load() {
    std::string bytes;
    HPO_RETURN_IF_ERROR(ReadWholeFile(path_, "study", &bytes));
    std::vector<char> image(bytes.begin(), bytes.end());
    if (H5Fis_hdf5(path_.c_str()) <= 0) {
      return Status::BadInput(path_ + ": not an HDF5 file");
    }
    PropertyListHandle fapl;
    HPO_RETURN_IF_ERROR(MakeMemoryFileAccess(&image, &fapl));
    // The core driver opens an image under a name that is no file on disk.
    const std::string memory_name = path_ + ".in-memory";
    file_.reset(H5Fopen(memory_name.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!file_.valid()) return Status::BadInput(path_ + ": " + Hdf5Error("H5Fopen"));
    HPO_RETURN_IF_ERROR(AddStartTimeColumn());
    HPO_RETURN_IF_ERROR(
        OpenTable(study_internal::kTrialsDataset, trials_schema_, &trials_, &trial_rows_));
    HPO_RETURN_IF_ERROR(
        OpenTable(study_internal::kCurvesDataset, curves_schema_, &curves_, &curve_rows_));
    return MakeMemoryTypes();
  }

  Status Stage(const TrialResult& result) override {
    ScopedErrorSilencer silencer;
    std::vector<char> trial_row(trials_schema_.row_size(), 0);
    HPO_RETURN_IF_ERROR(EncodeTrial(result, trial_row.data()));
    const size_t metrics = layout_.metric_names.size();
    std::vector<char> curve_rows(curves_schema_.row_size() * result.curve.size(), 0);
    for (size_t i = 0; i < result.curve.size(); ++i) {
      const EpochMetrics& epoch = result.curve[i];
      if (epoch.values.size() != metrics) {
        return Status::Failure("trial " + std::to_string(result.trial_id) + ": curve entry " +
                               std::to_string(i) + " (epoch " + std::to_string(epoch.epoch) +
                               ") has " + std::to_string(epoch.values.size()) +
                               " values, the study has " + std::to_string(metrics) + " metrics");
      }
      char* row = curve_rows.data() + i * curves_schema_.row_size();
      curves_schema_.PutInt64(row, 0, result.trial_id);
      curves_schema_.PutInt64(row, 1, epoch.epoch);
      for (size_t m = 0; m < metrics; ++m) {
        curves_schema_.PutFloat64(row, study_internal::kCurvesLeadingFields + m, epoch.values[m]);
      }
    }
    HPO_RETURN_IF_ERROR(
        AppendRows(trials_.get(), trials_memory_type_.get(), trial_row, 1, &trial_rows_)
            .WithContext(path_ + ": /trials"));
    if (!result.curve.empty()) {
      Status appended = AppendRows(curves_.get(), curves_memory_type_.get(), curve_rows,
                                   result.curve.size(), &curve_rows_);
      if (!appended.ok()) {
        trial_rows_ -= 1;  // unstage the trial's row too
        TruncateRows(trials_.get(), trial_rows_);
        return appended.WithContext(path_ + ": /curves");
      }
    }
    return Status::Ok();
  }

  Status StageTable(const MetricTable& table) override {
    ScopedErrorSilencer silencer;
    return WriteTable(file_.get(), table).WithContext(path_);
  }

  Status Publish(const std::map<std::string, StudyAttribute>& attributes) override {
    ScopedErrorSilencer silencer;
    HPO_RETURN_IF_ERROR(WriteAttributes(attributes));
    return PublishImage();
  }

 private:
  Status MakeMemoryTypes() {
    HPO_RETURN_IF_ERROR(trials_schema_.MakeMemoryType(&trials_memory_type_));
    return curves_schema_.MakeMemoryType(&curves_memory_type_);
  }

  // Opens an existing table and checks that its row type is this layout's.
  Status OpenTable(const char* name, const RowSchema& schema, DatasetHandle* dataset,
                   hsize_t* rows) {
    const std::string where = path_ + ": /" + name;
    DatasetHandle opened(H5Dopen2(file_.get(), name, H5P_DEFAULT));
    if (!opened.valid()) return Status::BadInput(where + ": missing");
    DatatypeHandle stored(H5Dget_type(opened.get()));
    DatatypeHandle expected;
    HPO_RETURN_IF_ERROR(schema.MakeFileType(&expected));
    if (!stored.valid() || H5Tequal(stored.get(), expected.get()) <= 0) {
      return Status::BadInput(where + ": its columns differ from the config's parameters");
    }
    DataspaceHandle space(H5Dget_space(opened.get()));
    hsize_t dims[1] = {0};
    if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
      return Status::BadInput(where + ": not a 1-D table");
    }
    *rows = dims[0];
    *dataset = std::move(opened);
    return Status::Ok();
  }

  // A study written before start_time_s (its /trials row type is LegacyTrialsSchema's): rewrites
  // /trials in memory with the column added, NaN in every row (the time is unknown). Any other
  // row type is left for OpenTable to judge.
  Status AddStartTimeColumn() {
    const char* name = study_internal::kTrialsDataset;
    const std::string where = path_ + ": /" + name;
    const RowSchema legacy = study_internal::LegacyTrialsSchema(layout_);
    std::vector<char> old_rows;
    hsize_t rows = 0;
    {
      DatasetHandle opened(H5Dopen2(file_.get(), name, H5P_DEFAULT));
      if (!opened.valid()) return Status::Ok();
      DatatypeHandle stored(H5Dget_type(opened.get()));
      DatatypeHandle expected;
      HPO_RETURN_IF_ERROR(legacy.MakeFileType(&expected));
      if (!stored.valid() || H5Tequal(stored.get(), expected.get()) <= 0) return Status::Ok();
      DataspaceHandle space(H5Dget_space(opened.get()));
      if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1 ||
          H5Sget_simple_extent_dims(space.get(), &rows, nullptr) < 0) {
        return Status::BadInput(where + ": not a 1-D table");
      }
      old_rows.resize(legacy.row_size() * rows);
      DatatypeHandle memory;
      HPO_RETURN_IF_ERROR(legacy.MakeMemoryType(&memory));
      if (rows > 0 &&
          H5Dread(opened.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, old_rows.data()) < 0) {
        return Status::BadInput(where + ": " + Hdf5Error("H5Dread"));
      }
    }
    if (H5Ldelete(file_.get(), name, H5P_DEFAULT) < 0) {
      return Status::Failure(where + ": " + Hdf5Error("H5Ldelete"));
    }
    DatasetHandle created;
    HPO_RETURN_IF_ERROR(CreateTable(file_.get(), name, trials_schema_, kTrialsChunkRows, &created));
    if (rows == 0) return Status::Ok();
    const size_t start = trials_schema_.fields().size() - 1;
    std::vector<char> new_rows(trials_schema_.row_size() * rows, 0);
    for (hsize_t r = 0; r < rows; ++r) {
      char* row = new_rows.data() + r * trials_schema_.row_size();
      std::copy_n(old_rows.data() + r * legacy.row_size(), legacy.row_size(), row);
      trials_schema_.PutFloat64(row, start, std::numeric_limits<double>::quiet_NaN());
    }
    DatatypeHandle memory;
    HPO_RETURN_IF_ERROR(trials_schema_.MakeMemoryType(&memory));
    hsize_t size = 0;
    return AppendRows(created.get(), memory.get(), new_rows, rows, &size).WithContext(where);
  }

  Status WriteAttributes(const std::map<std::string, StudyAttribute>& attributes) {
    for (const auto& [name, value] : attributes) {
      if (name.empty()) return Status::Failure(path_ + ": attribute name is empty");
      HPO_RETURN_IF_ERROR(WriteAttribute(file_.get(), name, value).WithContext(path_));
    }
    return Status::Ok();
  }

  // Fills one /trials row from `result`, checking every layout column against its params.
  Status EncodeTrial(const TrialResult& result, char* row) const {
    const std::string trial = "trial " + std::to_string(result.trial_id);
    if (result.trial_id < 0) return Status::Failure(trial + ": trial ids are not negative");
    trials_schema_.PutInt64(row, 0, result.trial_id);
    trials_schema_.PutString(row, 1, TrialStatusName(result.status));
    trials_schema_.PutFloat64(row, 2, result.objective);
    for (size_t p = 0; p < layout_.params.size(); ++p) {
      const StudyParamColumn& column = layout_.params[p];
      const size_t index = study_internal::kTrialsLeadingFields + p;
      const ParamValue* value = FindParam(result.params, column.name);
      if (value == nullptr) {
        return Status::Failure(trial + ": hyperparameter '" + column.name + "' is missing");
      }
      const auto wrong_type = [&] {
        const char* held = std::holds_alternative<int64_t>(*value)  ? "an int"
                           : std::holds_alternative<double>(*value) ? "a float"
                                                                    : "a string";
        return Status::Failure(trial + ": hyperparameter '" + column.name + "' is " + held + " (" +
                               FormatParamValueExact(*value) + "), its column holds " +
                               ParamTypeName(column.type) + " values");
      };
      switch (column.type) {
        case ParamType::kInt:
          if (!std::holds_alternative<int64_t>(*value)) return wrong_type();
          trials_schema_.PutInt64(row, index, std::get<int64_t>(*value));
          break;
        case ParamType::kFloat:
          if (std::holds_alternative<std::string>(*value)) return wrong_type();
          trials_schema_.PutFloat64(row, index, ParamAsDouble(*value));
          break;
        case ParamType::kString: {
          const auto* text = std::get_if<std::string>(value);
          if (text == nullptr) return wrong_type();
          if (text->size() >= column.string_width) {
            return Status::Failure(trial + ": hyperparameter '" + column.name + "' value '" +
                                   *text + "' is longer than its column (" +
                                   std::to_string(column.string_width - 1) + " bytes)");
          }
          trials_schema_.PutString(row, index, *text);
          break;
        }
      }
    }
    const size_t tail = study_internal::kTrialsLeadingFields + layout_.params.size();
    trials_schema_.PutInt64(row, tail, result.epochs);
    trials_schema_.PutFloat64(row, tail + 1, result.duration_s);
    trials_schema_.PutInt64(row, tail + 2, result.group);
    trials_schema_.PutString(row, tail + 3, result.message);
    trials_schema_.PutFloat64(row, tail + 4, result.start_time_s);
    return Status::Ok();
  }

  // Publishes the in-memory study: see the protocol at the top of this file.
  Status PublishImage() {
    if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) {
      return Status::Failure(path_ + ": " + Hdf5Error("H5Fflush"));
    }
    const ssize_t size = H5Fget_file_image(file_.get(), nullptr, 0);
    if (size <= 0) return Status::Failure(path_ + ": " + Hdf5Error("H5Fget_file_image"));
    image_.resize(static_cast<size_t>(size));
    if (H5Fget_file_image(file_.get(), image_.data(), image_.size()) != size) {
      return Status::Failure(path_ + ": " + Hdf5Error("H5Fget_file_image"));
    }
    RestoreSuperblockFlags(&image_);
    return WriteFileAtomically(path_, image_.data(), image_.size());
  }

  const std::string path_;
  StudyLock lock_;
  const StudyLayout layout_;
  const RowSchema trials_schema_;
  const RowSchema curves_schema_;
  FileHandle file_;
  DatasetHandle trials_;
  DatasetHandle curves_;
  DatatypeHandle trials_memory_type_;
  DatatypeHandle curves_memory_type_;
  hsize_t trial_rows_ = 0;
  hsize_t curve_rows_ = 0;
  std::vector<char> image_;  // the last published image, reused as the buffer of the next
};

}  // namespace

Status StudyWriter::Create(const std::string& path, const StudyLayout& layout,
                           const StudyAttributes& attributes,
                           std::unique_ptr<StudyWriter>* writer) {
  HPO_RETURN_IF_ERROR(ValidateLayout(layout).WithContext(path));
  // Claim the path exclusively first: this refuses an existing file without touching it and
  // reports why a folder cannot take the file; the first publish then replaces the empty file.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    if (error == EEXIST) return Status::BadInput(path + ": study file already exists");
    return Status::BadInput(path + ": cannot create the study file: " + std::strerror(error));
  }
  ::close(fd);
  ScopedErrorSilencer silencer;
  auto created = std::make_unique<Hdf5StudyWriter>(path, layout);
  Status status = created->Lock();
  if (status.ok()) status = created->Initialize(attributes);
  if (!status.ok()) {
    created.reset();
    ::unlink(path.c_str());
    return status.WithContext(path);
  }
  *writer = std::move(created);
  return Status::Ok();
}

Status StudyWriter::Open(const std::string& path, const StudyLayout& layout,
                         std::unique_ptr<StudyWriter>* writer) {
  HPO_RETURN_IF_ERROR(ValidateLayout(layout).WithContext(path));
  ScopedErrorSilencer silencer;
  auto opened = std::make_unique<Hdf5StudyWriter>(path, layout);
  HPO_RETURN_IF_ERROR(opened->Lock());
  HPO_RETURN_IF_ERROR(opened->Load());
  *writer = std::move(opened);
  return Status::Ok();
}

}  // namespace hpo
