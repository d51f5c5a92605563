// StudyWriter over the HDF5 C API.
//
// Layout: an appendable study. /trials and /curves are chunked datasets whose chunks are all
// allocated (and filled with fill rows, trial_id -1) up to a capacity; /published holds two
// commit records (sequence, row counts of /trials and /curves, where the sweep's state lies in
// /state, checksums), and /state two slots for that state (the root attributes published since
// the file was last rewritten, e.g. running_trials). The study is the rows below the counts of the
// valid record with the larger sequence, the root attributes, and the state of that record over
// them (ReadStudy; a Python reader does the same, see tests/unit/check_study_readable.py).
//
// Publish protocol (crash safety):
// - In place, the usual case: the staged rows are written past the committed rows, the state into
//   the slot the current record does not use, H5Fflush; then the other record (sequence + 1,
//   the new counts), H5Fflush. Both steps write raw data into storage allocated when the file was
//   built: no HDF5 metadata (object headers, chunk index, heaps, superblock) changes, so a process
//   killed at any moment (SIGKILL included, in the middle of a write(2) too) leaves a file whose
//   metadata is intact and whose records are either the old one (the new rows and slot are past
//   it, ignored) or the new one (written after everything it covers). A record torn by the kill
//   fails its checksum and the other one is used. The cost of a publish is the new rows, the state
//   and two small writes: it does not grow with the study.
// - By a rewrite, when the rows would pass the capacity, the state does not fit its slot, a table
//   is staged, the file predates this layout, or at the end (compaction, from Close): a new file
//   (committed rows, the staged ones, the root attributes with the state's written as real
//   attributes, tables) is built in memory (HDF5's core driver), written to STUDY.h5.tmp and
//   renamed over STUDY.h5 (WriteFileAtomically). rename(2) is atomic: the study is the old file
//   or the new one. Building in memory keeps HDF5 away from a full disk there: a failed
//   H5Fcreate on ENOSPC leaves the library unable to shut down ("infinite loop closing
//   library"), and the error is one plain line naming the file. Capacities double, so rewrites cost
//   O(1) per trial amortized (11 rewrites for 100,000 trials); the last one (compaction) makes the
//   datasets' extents the row counts, so a finished study reads with h5py and pandas with no fill
//   rows at all. A study being written, or left by a crash, has fill rows past the counts (trial_id
//   -1, empty status) and possibly rows of a publish the crash cut short: readers that do not apply
//   /published see them.
// - Readers (ReadStudy, h5py, pandas) may open the file at any moment (no HDF5 file locking, and
//   metadata never changes in place); a reader racing a publish may see a record whose state slot
//   is being rewritten: it fails the checksum and ReadStudy reads again.
// - Only a rewrite is fsync'ed (before its rename), not an in-place publish: after a power loss
//   the study is the last published one on file systems that write a file's pages in order.
// - A publish that fails (a full disk, an unwritable file, an I/O error) leaves the study as last
//   published: the writer closes the file and stops; every later Publish returns that failure.
//   The tables are opened without a chunk cache, so a raw-data write reaches the file (or fails)
//   inside H5Dwrite and nothing dirty is left for a close to retry.
// - Format bounds [v1.8, v1.8]: a version 2 superblock, readable by every HDF5 1.8+ reader, and
//   object headers that allow attributes over 64 KiB (dense storage), e.g. a long config text.
// - STUDY.h5.lock, held with flock(2) while a writer is open, keeps a second sweep (a resume
//   started twice) off the same study; file systems without flock skip the check.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "common/file_io.hpp"
#include "hdf5_handles.hpp"
#include "study/study_file.hpp"
#include "study_schema.hpp"

// HDF5's checksum of metadata (Jenkins' lookup3), exported by libhdf5 since 1.8.7 but declared
// only in its private headers.
extern "C" uint32_t H5_checksum_metadata(const void* data, size_t length, uint32_t initial);

namespace hpo {

namespace {

using study_internal::AttributeHandle;
using study_internal::CollectLinkName;
using study_internal::CommitRecord;
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
constexpr hsize_t kMinimumSlotBytes = 1024;
// The step by which a rewrite's in-memory file image grows.
constexpr size_t kImageIncrementBytes = size_t{1} << 20;

// H5Fget_file_image (HDF5 1.10) clears the superblock's status flags in the copy it returns but
// keeps the checksum computed with the open file's flags set, so readers refuse the copy
// ("incorrect metadata checksum"). Computes the checksum of superblocks of version 2 and later
// (signature, version, sizes, flags, four addresses, then the checksum) again over the copy.
Status RestoreSuperblockChecksum(const std::string& what, std::vector<char>* image) {
  static constexpr char kSignature[] = "\x89HDF\r\n\x1a\n";
  const auto byte = [&](size_t at) { return static_cast<unsigned char>((*image)[at]); };
  if (image->size() < 12 || std::memcmp(image->data(), kSignature, 8) != 0) {
    return Status::Failure(what + ": the file image does not start with a superblock");
  }
  if (byte(8) < 2) return Status::Ok();  // versions 0 and 1 have no checksum
  const size_t checked = 12 + 4 * size_t{byte(9)};
  if (image->size() < checked + 4) {
    return Status::Failure(what + ": the file image is shorter than its superblock");
  }
  const uint32_t checksum = H5_checksum_metadata(image->data(), checked, 0);
  for (size_t i = 0; i < 4; ++i) {
    (*image)[checked + i] = static_cast<char>((checksum >> (8 * i)) & 0xff);  // little-endian
  }
  return Status::Ok();
}

// Checks the names and types of `layout`: non-empty unique names that collide with no fixed
// column, no '/' in a hyperparameter's (PyTables refuses it in column names; a metric's is
// escaped, MetricColumnName), string widths of at least one byte.
Status ValidateLayout(const StudyLayout& layout) {
  std::set<std::string> seen;
  for (const StudyParamColumn& column : layout.params) {
    if (column.name.empty()) return Status::BadInput("a hyperparameter has an empty name");
    if (column.name.find('/') != std::string::npos) {
      return Status::BadInput("hyperparameter '" + column.name +
                              "': names with '/' cannot be study file columns");
    }
    if (column.name.rfind(study_internal::kCollidingParamPrefix, 0) == 0 &&
        study_internal::IsFixedTrialsField(study_internal::ParamNameOfColumn(column.name))) {
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
  seen.clear();
  for (const StudyObjective& objective : layout.further_objectives) {
    if (objective.metric.empty()) return Status::BadInput("an objective has an empty name");
    if (!seen.insert(objective.metric).second) {
      return Status::BadInput("objective '" + objective.metric + "' appears twice");
    }
  }
  const std::set<std::string> curve_fixed = {study_internal::kTrialIdField,
                                             study_internal::kEpochField};
  seen.clear();
  for (const std::string& metric : layout.metric_names) {
    if (metric.empty()) return Status::BadInput("a metric has an empty name");
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

// Creates a 1-D chunked dataset of `capacity` rows (unlimited maximum) with every chunk allocated
// at once and filled with the fill row (trial_id kUnwrittenTrialId), so that writing rows below
// the capacity changes raw data only.
Status CreateTable(hid_t file, const char* name, const RowSchema& schema, hsize_t chunk_rows,
                   hsize_t capacity, DatasetHandle* dataset) {
  DatatypeHandle file_type;
  HPO_RETURN_IF_ERROR(schema.MakeFileType(&file_type));
  DatatypeHandle memory_type;
  HPO_RETURN_IF_ERROR(schema.MakeMemoryType(&memory_type));
  std::vector<char> fill(schema.row_size(), 0);
  schema.PutInt64(fill.data(), 0, study_internal::kUnwrittenTrialId);
  const hsize_t dims[1] = {capacity};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  DataspaceHandle space(H5Screate_simple(1, dims, max_dims));
  if (!space.valid()) return Status::Failure(Hdf5Error("H5Screate_simple"));
  PropertyListHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!dcpl.valid()) return Status::Failure(Hdf5Error("H5Pcreate"));
  const hsize_t chunk[1] = {chunk_rows};
  if (H5Pset_chunk(dcpl.get(), 1, chunk) < 0) return Status::Failure(Hdf5Error("H5Pset_chunk"));
  if (H5Pset_fill_value(dcpl.get(), memory_type.get(), fill.data()) < 0 ||
      H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0) {
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

// Creates a fixed 1-D dataset of `count` elements of `type`, its storage allocated at once.
Status CreateFixed(hid_t file, const char* name, hid_t type, hsize_t count,
                   DatasetHandle* dataset) {
  const hsize_t dims[1] = {count};
  DataspaceHandle space(H5Screate_simple(1, dims, nullptr));
  PropertyListHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_alloc_time"));
  }
  DatasetHandle created(
      H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!created.valid()) {
    return Status::Failure(Hdf5Error("H5Dcreate2") + " (/" + std::string(name) + ")");
  }
  *dataset = std::move(created);
  return Status::Ok();
}

// Writes `count` elements of `buffer` (of `memory_type`) to elements [first, first + count) of
// the 1-D `dataset`.
Status WriteRange(hid_t dataset, hid_t memory_type, const void* buffer, hsize_t first,
                  hsize_t count) {
  if (count == 0) return Status::Ok();
  DataspaceHandle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {first};
  const hsize_t counts[1] = {count};
  DataspaceHandle memory_space(H5Screate_simple(1, counts, nullptr));
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, counts, nullptr) < 0) {
    return Status::Failure(Hdf5Error("H5Sselect_hyperslab"));
  }
  if (H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, buffer) <
      0) {
    return Status::Failure(Hdf5Error("H5Dwrite"));
  }
  return Status::Ok();
}

// Reads the first `count` elements of the 1-D `dataset` into `buffer` (resized to count * size).
Status ReadFirst(hid_t dataset, hid_t memory_type, size_t size, hsize_t count,
                 std::vector<char>* buffer) {
  buffer->assign(size * count, 0);
  if (count == 0) return Status::Ok();
  DataspaceHandle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {0};
  const hsize_t counts[1] = {count};
  DataspaceHandle memory_space(H5Screate_simple(1, counts, nullptr));
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, counts, nullptr) < 0 ||
      H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT,
              buffer->data()) < 0) {
    return Status::Failure(Hdf5Error("H5Dread"));
  }
  return Status::Ok();
}

// H5Aiterate2 callback: copies one root attribute, whatever its type, to another file's root.
struct AttributeCopy {
  hid_t destination;
  Status status;
};

herr_t CopyRootAttribute(hid_t source, const char* name, const H5A_info_t*, void* data) {
  auto* copy = static_cast<AttributeCopy*>(data);
  AttributeHandle attribute(H5Aopen(source, name, H5P_DEFAULT));
  DatatypeHandle type(attribute.valid() ? H5Aget_type(attribute.get()) : H5I_INVALID_HID);
  DataspaceHandle space(attribute.valid() ? H5Aget_space(attribute.get()) : H5I_INVALID_HID);
  if (!type.valid() || !space.valid()) {
    copy->status = Status::Failure(Hdf5Error("H5Aget_type") + " (attribute '" + name + "')");
    return -1;
  }
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  std::vector<char> buffer(static_cast<size_t>(std::max<hssize_t>(points, 1)) *
                           H5Tget_size(type.get()));
  if (H5Aread(attribute.get(), type.get(), buffer.data()) < 0) {
    copy->status = Status::Failure(Hdf5Error("H5Aread") + " (attribute '" + name + "')");
    return -1;
  }
  AttributeHandle created(
      H5Acreate2(copy->destination, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  const bool written = created.valid() && H5Awrite(created.get(), type.get(), buffer.data()) >= 0;
  if (H5Tdetect_class(type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(type.get()) > 0) {
    H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, buffer.data());
  }
  if (!written) {
    copy->status = Status::Failure(Hdf5Error("H5Awrite") + " (attribute '" + name + "')");
    return -1;
  }
  return 0;
}

// Checks a table before it is staged (WriteTable writes it later).
Status CheckTable(const MetricTable& table) {
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

// File access: the default (sec2) driver, v1.8 format, and no HDF5 file locking, so that readers
// (h5py, pandas, `hpo report`) open the study while the writer has it open (STUDY.h5.lock keeps
// writers apart).
Status MakeFileAccess(PropertyListHandle* fapl) {
  PropertyListHandle created(H5Pcreate(H5P_FILE_ACCESS));
  if (!created.valid()) return Status::Failure(Hdf5Error("H5Pcreate"));
  if (H5Pset_libver_bounds(created.get(), H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_libver_bounds"));
  }
  if (H5Pset_file_locking(created.get(), false, true) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_file_locking"));
  }
  *fapl = std::move(created);
  return Status::Ok();
}

// Dataset access with no chunk cache: writes go to the file within H5Dwrite.
Status MakeUncachedDatasetAccess(PropertyListHandle* dapl) {
  PropertyListHandle created(H5Pcreate(H5P_DATASET_ACCESS));
  if (!created.valid() || H5Pset_chunk_cache(created.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0,
                                             H5D_CHUNK_CACHE_W0_DEFAULT) < 0) {
    return Status::Failure(Hdf5Error("H5Pset_chunk_cache"));
  }
  *dapl = std::move(created);
  return Status::Ok();
}

// Failure "writing PATH: reason" when `path` cannot be opened for writing (a read-only file
// system), which H5Fopen would only call "unable to open file".
Status CheckWritable(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::Failure("writing " + path + ": " + std::strerror(errno));
  ::close(fd);
  return Status::Ok();
}

// Capacity for `rows` rows: at least twice `current` (so rewrites are O(1) per row amortized),
// in whole chunks.
hsize_t GrownCapacity(hsize_t current, hsize_t rows, hsize_t chunk_rows) {
  const hsize_t wanted = std::max({rows, 2 * current, chunk_rows});
  return (wanted + chunk_rows - 1) / chunk_rows * chunk_rows;
}

// The writer of one study file; see the protocol at the top of this file.
class Hdf5StudyWriter final : public StudyWriter {
 public:
  Hdf5StudyWriter(std::string path, StudyLayout layout)
      : path_(std::move(path)),
        layout_(std::move(layout)),
        trials_schema_(study_internal::TrialsSchema(layout_)),
        curves_schema_(study_internal::CurvesSchema(layout_)) {}

  // Closes the study, compacting it first unless Close did (see StudyWriter::Close).
  ~Hdf5StudyWriter() override { (void)Close(); }

  Status Close() override {
    ScopedErrorSilencer silencer;
    if (failed_.ok() && file_.valid() && published_any_ && !needs_rewrite_ &&
        (committed_trials_ != trial_capacity_ || committed_curves_ != curve_capacity_ ||
         !slot_attributes_.empty())) {
      staged_trials_ = staged_curves_ = 0;
      pending_tables_.clear();
      failed_ = Rewrite(/*include_staged=*/false, committed_trials_, committed_curves_,
                        kMinimumSlotBytes);
    }
    CloseFile();
    return failed_;
  }

  Status Lock() { return lock_.Acquire(path_); }

  // Builds the empty study and makes it STUDY.h5.
  Status Initialize(const StudyAttributes& attributes) {
    initial_attributes_ = attributes;
    published_any_ = true;
    return Rewrite(/*include_staged=*/false, kTrialsChunkRows, kCurvesChunkRows, kMinimumSlotBytes);
  }

  // Opens the published study to append to it; BadInput when it is not a study file with this
  // writer's layout. Writes nothing.
  Status Load() {
    struct stat info;
    if (::stat(path_.c_str(), &info) != 0) {
      return Status::BadInput(path_ + ": cannot open the study file: " + std::strerror(errno));
    }
    if (H5Fis_hdf5(path_.c_str()) <= 0) return Status::BadInput(path_ + ": not an HDF5 file");
    HPO_RETURN_IF_ERROR(OpenFile(/*writable=*/false));
    bool present = false;
    bool torn = false;
    CommitRecord record;
    HPO_RETURN_IF_ERROR(
        study_internal::ReadPublished(file_.get(), &present, &record, &slot_attributes_, &torn)
            .WithContext(path_));
    needs_rewrite_ = legacy_trials_;
    if (!present) {
      // Written before the appendable layout: every row is the study; the first publish rewrites.
      committed_trials_ = trial_capacity_;
      committed_curves_ = curve_capacity_;
      needs_rewrite_ = true;
      slot_bytes_ = kMinimumSlotBytes;
      return Status::Ok();
    }
    if (static_cast<hsize_t>(record.trials) > trial_capacity_ ||
        static_cast<hsize_t>(record.curves) > curve_capacity_ || !state_.valid()) {
      return Status::BadInput(path_ + ": /published counts more rows than the tables have");
    }
    committed_trials_ = static_cast<hsize_t>(record.trials);
    committed_curves_ = static_cast<hsize_t>(record.curves);
    sequence_ = record.sequence;
    DataspaceHandle space(H5Dget_space(state_.get()));
    slot_bytes_ = static_cast<hsize_t>(H5Sget_simple_extent_npoints(space.get())) / 2;
    return Status::Ok();
  }

  Status Stage(const TrialResult& result) override {
    std::vector<char>& trial_rows = staged_trial_rows_;
    std::vector<char>& curve_rows = staged_curve_rows_;
    const size_t trial_bytes = trial_rows.size();
    const size_t curve_bytes = curve_rows.size();
    trial_rows.resize(trial_bytes + trials_schema_.row_size(), 0);
    Status status = EncodeTrial(result, trial_rows.data() + trial_bytes);
    const size_t metrics = layout_.metric_names.size();
    for (size_t i = 0; status.ok() && i < result.curve.size(); ++i) {
      const EpochMetrics& epoch = result.curve[i];
      if (epoch.values.size() != metrics) {
        status = Status::Failure("trial " + std::to_string(result.trial_id) + ": curve entry " +
                                 std::to_string(i) + " (epoch " + std::to_string(epoch.epoch) +
                                 ") has " + std::to_string(epoch.values.size()) +
                                 " values, the study has " + std::to_string(metrics) + " metrics");
        break;
      }
      curve_rows.resize(curve_rows.size() + curves_schema_.row_size(), 0);
      char* row = curve_rows.data() + curve_rows.size() - curves_schema_.row_size();
      curves_schema_.PutInt64(row, 0, result.trial_id);
      curves_schema_.PutInt64(row, 1, epoch.epoch);
      for (size_t m = 0; m < metrics; ++m) {
        curves_schema_.PutFloat64(row, study_internal::kCurvesLeadingFields + m, epoch.values[m]);
      }
    }
    if (!status.ok()) {  // nothing of the trial stays staged
      trial_rows.resize(trial_bytes);
      curve_rows.resize(curve_bytes);
      return status.WithContext(path_);
    }
    staged_trials_ += 1;
    staged_curves_ += result.curve.size();
    return Status::Ok();
  }

  Status StageTable(const MetricTable& table) override {
    HPO_RETURN_IF_ERROR(CheckTable(table).WithContext(path_));
    for (MetricTable& staged : pending_tables_) {
      if (staged.name == table.name) {
        staged = table;
        return Status::Ok();
      }
    }
    pending_tables_.push_back(table);
    return Status::Ok();
  }

  Status Publish(const std::map<std::string, StudyAttribute>& attributes) override {
    ScopedErrorSilencer silencer;
    for (const auto& [name, value] : attributes) {
      if (name.empty()) return Status::Failure(path_ + ": attribute name is empty");
    }
    if (!failed_.ok()) return failed_;
    failed_ = PublishStaged(attributes);
    if (!failed_.ok()) CloseFile();
    return failed_;
  }

 private:
  // Publish, once the attributes are checked: in place or by a rewrite.
  Status PublishStaged(const std::map<std::string, StudyAttribute>& attributes) {
    published_any_ = true;
    for (const auto& [name, value] : attributes) {
      slot_attributes_[name] = value;
      if (!study_internal::CanEncodeStateName(name)) unencodable_ = true;
    }
    const hsize_t trials = committed_trials_ + staged_trials_;
    const hsize_t curves = committed_curves_ + staged_curves_;
    const std::string state =
        unencodable_ ? std::string() : study_internal::EncodeStateAttributes(slot_attributes_);
    if (needs_rewrite_ || unencodable_ || !pending_tables_.empty() || trials > trial_capacity_ ||
        curves > curve_capacity_ || state.size() > slot_bytes_) {
      return Rewrite(
          /*include_staged=*/true,
          trials > trial_capacity_ ? GrownCapacity(trial_capacity_, trials, kTrialsChunkRows)
                                   : trial_capacity_,
          curves > curve_capacity_ ? GrownCapacity(curve_capacity_, curves, kCurvesChunkRows)
                                   : curve_capacity_,
          std::max<hsize_t>(slot_bytes_, 2 * state.size()));
    }
    return PublishInPlace(state);
  }

  Status MakeMemoryTypes() {
    HPO_RETURN_IF_ERROR(trials_schema_.MakeMemoryType(&trials_memory_type_));
    HPO_RETURN_IF_ERROR(curves_schema_.MakeMemoryType(&curves_memory_type_));
    return study_internal::MakeCommitType(/*file=*/false, &commit_memory_type_);
  }

  void CloseFile() {
    trials_.reset();
    curves_.reset();
    published_.reset();
    state_.reset();
    file_.reset();
    writable_ = false;
  }

  // Opens STUDY.h5 and its datasets; the capacities are the tables' extents.
  Status OpenFile(bool writable) {
    CloseFile();
    if (writable) HPO_RETURN_IF_ERROR(CheckWritable(path_));
    PropertyListHandle fapl;
    HPO_RETURN_IF_ERROR(MakeFileAccess(&fapl));
    file_.reset(H5Fopen(path_.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()));
    if (!file_.valid()) return Status::BadInput(path_ + ": " + Hdf5Error("H5Fopen"));
    writable_ = writable;
    legacy_trials_ = false;
    Status trials_opened =
        OpenTable(study_internal::kTrialsDataset, trials_schema_, &trials_, &trial_capacity_);
    if (!trials_opened.ok() &&
        OpenTable(study_internal::kTrialsDataset, study_internal::LegacyTrialsSchema(layout_),
                  &trials_, &trial_capacity_)
            .ok()) {
      // Written before start_time_s: readable, and the first publish rewrites it with the column.
      legacy_trials_ = true;
      trials_opened = Status::Ok();
    }
    HPO_RETURN_IF_ERROR(trials_opened);
    HPO_RETURN_IF_ERROR(
        OpenTable(study_internal::kCurvesDataset, curves_schema_, &curves_, &curve_capacity_));
    if (H5Lexists(file_.get(), study_internal::kPublishedDataset, H5P_DEFAULT) > 0) {
      published_.reset(H5Dopen2(file_.get(), study_internal::kPublishedDataset, dapl_.get()));
      state_.reset(H5Dopen2(file_.get(), study_internal::kStateDataset, dapl_.get()));
      if (!published_.valid() || !state_.valid()) {
        return Status::BadInput(path_ + ": /published or /state does not open");
      }
    }
    return MakeMemoryTypes();
  }

  // Opens an existing table and checks that its row type is this layout's.
  Status OpenTable(const char* name, const RowSchema& schema, DatasetHandle* dataset,
                   hsize_t* rows) {
    const std::string where = path_ + ": /" + name;
    if (!dapl_.valid()) HPO_RETURN_IF_ERROR(MakeUncachedDatasetAccess(&dapl_));
    DatasetHandle opened(H5Dopen2(file_.get(), name, dapl_.get()));
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

  // The in-place publish of the protocol: rows and state, flush, then the record, flush.
  Status PublishInPlace(const std::string& state) {
    if (!writable_) HPO_RETURN_IF_ERROR(OpenFile(/*writable=*/true));
    CommitRecord record;
    record.sequence = sequence_ + 1;
    record.trials = static_cast<int64_t>(committed_trials_ + staged_trials_);
    record.curves = static_cast<int64_t>(committed_curves_ + staged_curves_);
    const hsize_t slot = static_cast<hsize_t>(record.sequence % 2);
    record.state_offset = static_cast<int64_t>(slot * slot_bytes_);
    record.state_size = static_cast<int64_t>(state.size());
    record.state_checksum = study_internal::Fnv1a64(state.data(), state.size());
    record.checksum = study_internal::RecordChecksum(record);
    HPO_RETURN_IF_ERROR(WriteRange(trials_.get(), trials_memory_type_.get(),
                                   staged_trial_rows_.data(), committed_trials_, staged_trials_)
                            .WithContext("writing " + path_ + " (/trials)"));
    HPO_RETURN_IF_ERROR(WriteRange(curves_.get(), curves_memory_type_.get(),
                                   staged_curve_rows_.data(), committed_curves_, staged_curves_)
                            .WithContext("writing " + path_ + " (/curves)"));
    HPO_RETURN_IF_ERROR(WriteRange(state_.get(), H5T_NATIVE_UINT8, state.data(),
                                   static_cast<hsize_t>(record.state_offset), state.size())
                            .WithContext("writing " + path_ + " (/state)"));
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) {
      return Status::Failure("writing " + path_ + ": " + Hdf5Error("H5Fflush"));
    }
    HPO_RETURN_IF_ERROR(WriteRange(published_.get(), commit_memory_type_.get(), &record, slot, 1)
                            .WithContext("writing " + path_ + " (/published)"));
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) {
      return Status::Failure("writing " + path_ + ": " + Hdf5Error("H5Fflush"));
    }
    Committed(record.sequence);
    return Status::Ok();
  }

  // The staged rows are in the study now.
  void Committed(int64_t sequence) {
    sequence_ = sequence;
    committed_trials_ += staged_trials_;
    committed_curves_ += staged_curves_;
    staged_trials_ = staged_curves_ = 0;
    staged_trial_rows_.clear();
    staged_curve_rows_.clear();
  }

  // The rewrite of the protocol: builds the file in memory and writes it over STUDY.h5.
  Status Rewrite(bool include_staged, hsize_t trial_capacity, hsize_t curve_capacity,
                 hsize_t slot_bytes) {
    std::vector<char> image;
    HPO_RETURN_IF_ERROR(Build(include_staged, trial_capacity, curve_capacity, slot_bytes, &image));
    HPO_RETURN_IF_ERROR(WriteFileAtomically(path_, image.data(), image.size()));
    if (!include_staged) staged_trials_ = staged_curves_ = 0;
    Committed(sequence_ + 1);
    slot_attributes_.clear();
    unencodable_ = false;
    pending_tables_.clear();
    needs_rewrite_ = false;
    slot_bytes_ = slot_bytes;
    return OpenFile(/*writable=*/true);
  }

  // The whole study (see Rewrite) as a file's bytes, built in memory.
  Status Build(bool include_staged, hsize_t trial_capacity, hsize_t curve_capacity,
               hsize_t slot_bytes, std::vector<char>* image) {
    const hsize_t new_trials = include_staged ? staged_trials_ : 0;
    const hsize_t new_curves = include_staged ? staged_curves_ : 0;
    const std::string what = path_ + " (built in memory)";
    PropertyListHandle fapl;
    HPO_RETURN_IF_ERROR(MakeFileAccess(&fapl));
    if (H5Pset_fapl_core(fapl.get(), kImageIncrementBytes, /*backing_store=*/false) < 0) {
      return Status::Failure(what + ": " + Hdf5Error("H5Pset_fapl_core"));
    }
    FileHandle out(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!out.valid()) return Status::Failure(what + ": " + Hdf5Error("H5Fcreate"));
    DatasetHandle trials;
    DatasetHandle curves;
    HPO_RETURN_IF_ERROR(CreateTable(out.get(), study_internal::kTrialsDataset, trials_schema_,
                                    kTrialsChunkRows, trial_capacity, &trials));
    HPO_RETURN_IF_ERROR(CreateTable(out.get(), study_internal::kCurvesDataset, curves_schema_,
                                    kCurvesChunkRows, curve_capacity, &curves));
    HPO_RETURN_IF_ERROR(WriteRows(trials.get(), curves.get(), new_trials, new_curves));
    HPO_RETURN_IF_ERROR(WriteRootAttributes(out.get()));
    HPO_RETURN_IF_ERROR(WriteTables(out.get()));
    DatasetHandle state;
    DatasetHandle published;
    HPO_RETURN_IF_ERROR(
        CreateCommitDatasets(out.get(), slot_bytes, new_trials, new_curves, &state, &published));
    trials.reset();
    curves.reset();
    state.reset();
    published.reset();
    // H5Fget_file_image copies what the driver holds, not what the metadata cache holds.
    if (H5Fflush(out.get(), H5F_SCOPE_LOCAL) < 0) {
      return Status::Failure(what + ": " + Hdf5Error("H5Fflush"));
    }
    const ssize_t size = H5Fget_file_image(out.get(), nullptr, 0);
    if (size < 0) return Status::Failure(what + ": " + Hdf5Error("H5Fget_file_image"));
    image->resize(static_cast<size_t>(size));
    if (H5Fget_file_image(out.get(), image->data(), image->size()) != size) {
      return Status::Failure(what + ": " + Hdf5Error("H5Fget_file_image"));
    }
    HPO_RETURN_IF_ERROR(RestoreSuperblockChecksum(what, image));
    if (H5Fclose(out.release()) < 0) return Status::Failure(what + ": " + Hdf5Error("H5Fclose"));
    return Status::Ok();
  }

  // Into the tables Build creates: the committed rows of the open file (none for the first build),
  // then `new_trials` and `new_curves` of the staged ones.
  Status WriteRows(hid_t trials, hid_t curves, hsize_t new_trials, hsize_t new_curves) {
    if (!trials_memory_type_.valid()) HPO_RETURN_IF_ERROR(MakeMemoryTypes());
    std::vector<char> rows;
    if (file_.valid() && legacy_trials_) {
      HPO_RETURN_IF_ERROR(ReadLegacyTrials(&rows));
    } else if (file_.valid()) {
      HPO_RETURN_IF_ERROR(ReadFirst(trials_.get(), trials_memory_type_.get(),
                                    trials_schema_.row_size(), committed_trials_, &rows));
    }
    if (file_.valid()) {
      HPO_RETURN_IF_ERROR(
          WriteRange(trials, trials_memory_type_.get(), rows.data(), 0, committed_trials_));
      HPO_RETURN_IF_ERROR(ReadFirst(curves_.get(), curves_memory_type_.get(),
                                    curves_schema_.row_size(), committed_curves_, &rows));
      HPO_RETURN_IF_ERROR(
          WriteRange(curves, curves_memory_type_.get(), rows.data(), 0, committed_curves_));
    }
    HPO_RETURN_IF_ERROR(WriteRange(trials, trials_memory_type_.get(), staged_trial_rows_.data(),
                                   committed_trials_, new_trials));
    return WriteRange(curves, curves_memory_type_.get(), staged_curve_rows_.data(),
                      committed_curves_, new_curves);
  }

  // Into the file Build writes, the root attributes: the old file's (or the initial ones), then the
  // state's over them.
  Status WriteRootAttributes(hid_t out) {
    if (file_.valid()) {
      AttributeCopy copy{out, Status::Ok()};
      if (H5Aiterate2(file_.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CopyRootAttribute, &copy) <
          0) {
        return copy.status.ok() ? Status::Failure(Hdf5Error("H5Aiterate2")) : copy.status;
      }
    } else {
      const std::pair<const char*, StudyAttribute> root_attributes[] = {
          {study_internal::kConfigAttribute, initial_attributes_.config},
          {study_internal::kMetricNameAttribute, initial_attributes_.metric_name},
          {study_internal::kMetricGoalAttribute, initial_attributes_.metric_goal},
          {study_internal::kWorldSizeAttribute, initial_attributes_.world_size},
          {study_internal::kStartTimeAttribute, initial_attributes_.start_time},
          {study_internal::kVersionAttribute, initial_attributes_.version},
      };
      for (const auto& [name, value] : root_attributes) {
        HPO_RETURN_IF_ERROR(WriteAttribute(out, name, value));
      }
      if (!layout_.further_objectives.empty()) {
        std::string goals;
        for (const StudyObjective& objective : layout_.further_objectives) {
          goals += (goals.empty() ? "" : " ") + objective.goal;
        }
        HPO_RETURN_IF_ERROR(
            WriteAttribute(out, study_internal::kObjectiveGoalsAttribute, StudyAttribute(goals)));
      }
    }
    for (const auto& [name, value] : slot_attributes_) {
      HPO_RETURN_IF_ERROR(WriteAttribute(out, name, value));
    }
    return Status::Ok();
  }

  // Into the file Build writes, the tables: the old file's that are not replaced, then the staged
  // ones.
  Status WriteTables(hid_t out) {
    if (file_.valid()) {
      std::vector<std::string> names;
      hsize_t index = 0;
      if (H5Literate(file_.get(), H5_INDEX_NAME, H5_ITER_INC, &index, CollectLinkName, &names) <
          0) {
        return Status::Failure(Hdf5Error("H5Literate"));
      }
      for (const std::string& name : names) {
        if (name.rfind(study_internal::kTablePrefix, 0) != 0) continue;
        const bool replaced = std::any_of(
            pending_tables_.begin(), pending_tables_.end(), [&](const MetricTable& table) {
              return study_internal::kTablePrefix + table.name == name;
            });
        if (replaced) continue;
        if (H5Ocopy(file_.get(), name.c_str(), out, name.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
          return Status::Failure(Hdf5Error("H5Ocopy") + " (/" + name + ")");
        }
      }
    }
    for (const MetricTable& table : pending_tables_) {
      HPO_RETURN_IF_ERROR(WriteTable(out, table));
    }
    return Status::Ok();
  }

  // In the file Build writes, the state slots (empty: the state is in the attributes now) and first
  // record, which counts the committed rows and `new_trials` and `new_curves` more; the datasets
  // stay open for Build to close.
  Status CreateCommitDatasets(hid_t out, hsize_t slot_bytes, hsize_t new_trials, hsize_t new_curves,
                              DatasetHandle* state, DatasetHandle* published) {
    HPO_RETURN_IF_ERROR(
        CreateFixed(out, study_internal::kStateDataset, H5T_STD_U8LE, 2 * slot_bytes, state));
    DatatypeHandle commit_file_type;
    HPO_RETURN_IF_ERROR(study_internal::MakeCommitType(/*file=*/true, &commit_file_type));
    HPO_RETURN_IF_ERROR(
        CreateFixed(out, study_internal::kPublishedDataset, commit_file_type.get(), 2, published));
    CommitRecord record;
    record.sequence = sequence_ + 1;
    record.trials = static_cast<int64_t>(committed_trials_ + new_trials);
    record.curves = static_cast<int64_t>(committed_curves_ + new_curves);
    record.state_offset = static_cast<int64_t>(record.sequence % 2 * slot_bytes);
    record.state_checksum = study_internal::Fnv1a64(nullptr, 0);
    record.checksum = study_internal::RecordChecksum(record);
    return WriteRange(published->get(), commit_memory_type_.get(), &record,
                      static_cast<hsize_t>(record.sequence % 2), 1);
  }

  // Fills one /trials row from `result`, checking every layout column against its params.
  // The committed rows of a /trials written before start_time_s, in this layout's rows (its row
  // type is a prefix of this one's), with start_time_s NaN: the time is unknown.
  Status ReadLegacyTrials(std::vector<char>* rows) const {
    const RowSchema legacy = study_internal::LegacyTrialsSchema(layout_);
    DatatypeHandle memory;
    HPO_RETURN_IF_ERROR(legacy.MakeMemoryType(&memory));
    std::vector<char> old_rows;
    HPO_RETURN_IF_ERROR(
        ReadFirst(trials_.get(), memory.get(), legacy.row_size(), committed_trials_, &old_rows));
    rows->assign(trials_schema_.row_size() * committed_trials_, 0);
    const size_t start_time = trials_schema_.fields().size() - 1;
    for (hsize_t r = 0; r < committed_trials_; ++r) {
      char* row = rows->data() + r * trials_schema_.row_size();
      std::copy_n(old_rows.data() + r * legacy.row_size(), legacy.row_size(), row);
      trials_schema_.PutFloat64(row, start_time, std::numeric_limits<double>::quiet_NaN());
    }
    return Status::Ok();
  }

  Status EncodeTrial(const TrialResult& result, char* row) const {
    const std::string trial = "trial " + std::to_string(result.trial_id);
    if (result.trial_id < 0) return Status::Failure(trial + ": trial ids are not negative");
    trials_schema_.PutInt64(row, 0, result.trial_id);
    trials_schema_.PutString(row, 1, TrialStatusName(result.status));
    trials_schema_.PutFloat64(row, 2, result.objective);
    const size_t params_start = study_internal::ParamsStart(layout_);
    for (size_t j = 0; j < layout_.further_objectives.size(); ++j) {
      trials_schema_.PutFloat64(row, study_internal::kTrialsLeadingFields + j,
                                j < result.further_objectives.size()
                                    ? result.further_objectives[j]
                                    : std::numeric_limits<double>::quiet_NaN());
    }
    for (size_t p = 0; p < layout_.params.size(); ++p) {
      const StudyParamColumn& column = layout_.params[p];
      const size_t index = params_start + p;
      const ParamValue* value = FindParam(result.params, column.name);
      if (value == nullptr && column.conditional) {
        study_internal::PutAbsentParam(trials_schema_, column.type, index, row);
        continue;
      }
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
    const size_t tail = params_start + layout_.params.size();
    trials_schema_.PutInt64(row, tail, result.epochs);
    trials_schema_.PutFloat64(row, tail + 1, result.duration_s);
    trials_schema_.PutInt64(row, tail + 2, result.group);
    trials_schema_.PutString(
        row, tail + 3,
        study_internal::FitMessage(result.message, study_internal::kMessageWidth - 1));
    trials_schema_.PutFloat64(row, tail + 4, result.start_time_s);
    if (layout_.lineage) {
      trials_schema_.PutInt64(row, tail + 5, result.parent_trial);
      trials_schema_.PutInt64(row, tail + 6, result.parent_epoch);
    }
    return Status::Ok();
  }

  const std::string path_;
  StudyLock lock_;
  const StudyLayout layout_;
  const RowSchema trials_schema_;
  const RowSchema curves_schema_;
  StudyAttributes initial_attributes_;  // Create only: the root attributes of the first build
  FileHandle file_;                     // STUDY.h5 as last published
  bool writable_ = false;
  Status failed_;            // the publish (or compaction) that failed; then nothing is written
  PropertyListHandle dapl_;  // the tables' dataset access: no chunk cache
  DatasetHandle trials_;
  DatasetHandle curves_;
  DatasetHandle published_;
  DatasetHandle state_;
  DatatypeHandle trials_memory_type_;
  DatatypeHandle curves_memory_type_;
  DatatypeHandle commit_memory_type_;
  hsize_t trial_capacity_ = 0;  // rows of /trials (the extent)
  hsize_t curve_capacity_ = 0;
  hsize_t slot_bytes_ = 0;  // bytes of each of /state's two slots
  hsize_t committed_trials_ = 0;
  hsize_t committed_curves_ = 0;
  int64_t sequence_ = 0;        // of the record in effect
  bool needs_rewrite_ = false;  // the file predates the appendable layout or start_time_s
  bool legacy_trials_ = false;  // its /trials predates start_time_s
  bool published_any_ = false;  // by this writer: only then does the destructor compact
  bool unencodable_ = false;    // slot_attributes_ has a name the state cannot hold
  // Root attributes published since the last rewrite (the state), and staged work.
  std::map<std::string, StudyAttribute> slot_attributes_;
  std::vector<MetricTable> pending_tables_;
  std::vector<char> staged_trial_rows_;
  std::vector<char> staged_curve_rows_;
  hsize_t staged_trials_ = 0;
  hsize_t staged_curves_ = 0;
};

}  // namespace

Status StudyWriter::Create(const std::string& path, const StudyLayout& layout,
                           const StudyAttributes& attributes,
                           std::unique_ptr<StudyWriter>* writer) {
  HPO_RETURN_IF_ERROR(ValidateLayout(layout).WithContext(path));
  // Claim the path exclusively first: this refuses an existing file without touching it and
  // reports why a folder cannot take the file; the first build then replaces the empty file.
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
