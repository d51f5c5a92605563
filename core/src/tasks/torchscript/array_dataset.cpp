#include "tasks/torchscript/array_dataset.hpp"

#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "tasks/torchscript/hdf5_arrays.hpp"
#include "tasks/torchscript/npy_file.hpp"

namespace hpo {
namespace {

constexpr char kTrain[] = "train";
constexpr char kValidation[] = "val";
constexpr char kTest[] = "test";

// Where the arrays of one data set are stored, an HDF5 file or a folder of .npy files, and how
// messages name them.
class ArrayStore {
 public:
  // A folder of .npy files.
  explicit ArrayStore(std::string folder) : path_(std::move(folder)) {}
  // An open HDF5 file.
  explicit ArrayStore(Hdf5ArrayFile file)
      : path_(file.path()), is_hdf5_(true), hdf5_(std::move(file)) {}

  // "val/x" in an HDF5 file, "val_x.npy" in a folder.
  std::string ShortName(const char* split, char axis) const {
    return is_hdf5() ? std::string(split) + "/" + axis : std::string(split) + "_" + axis + ".npy";
  }

  // "data.h5: val/x" or "data/val_x.npy".
  std::string Name(const char* split, char axis) const {
    if (is_hdf5()) return path_ + ": " + ShortName(split, axis);
    return (std::filesystem::path(path_) / ShortName(split, axis)).string();
  }

  // "data.h5: no dataset val/x" or "data: no file val_x.npy".
  std::string Missing(const char* split, char axis) const {
    return path_ + ": no " + (is_hdf5() ? "dataset " : "file ") + ShortName(split, axis);
  }

  bool Contains(const char* split, char axis) const {
    if (is_hdf5()) return hdf5_.Contains(ShortName(split, axis));
    std::error_code error;
    return std::filesystem::exists(Name(split, axis), error);
  }

  Status Read(const char* split, char axis, NumericArray* array) const {
    if (is_hdf5()) return hdf5_.Read(ShortName(split, axis), array);
    return ReadNpyFile(Name(split, axis), array);
  }

 private:
  bool is_hdf5() const { return is_hdf5_; }

  std::string path_;
  bool is_hdf5_ = false;
  Hdf5ArrayFile hdf5_;
};

// Reads the x and y of `split` into `loaded` (left empty when the store has neither).
Status LoadSplit(const ArrayStore& store, const char* split, std::optional<ArraySplit>* loaded) {
  const bool has_x = store.Contains(split, 'x');
  const bool has_y = store.Contains(split, 'y');
  loaded->reset();
  if (!has_x && !has_y) return Status::Ok();
  if (has_x != has_y) {
    const char present = has_x ? 'x' : 'y';
    const char absent = has_x ? 'y' : 'x';
    return Status::BadInput(store.Missing(split, absent) + ", though " +
                            store.ShortName(split, present) + " is there: a split needs both");
  }
  ArraySplit arrays;
  arrays.x_name = store.Name(split, 'x');
  arrays.y_name = store.Name(split, 'y');
  HPO_RETURN_IF_ERROR(store.Read(split, 'x', &arrays.x));
  HPO_RETURN_IF_ERROR(store.Read(split, 'y', &arrays.y));
  if (arrays.x.samples() != arrays.y.samples()) {
    return Status::BadInput(arrays.x_name + " has " + std::to_string(arrays.x.samples()) +
                            " samples but " + store.ShortName(split, 'y') + " has " +
                            std::to_string(arrays.y.samples()));
  }
  if (arrays.x.samples() == 0) {
    return Status::BadInput(arrays.x_name + ": no samples (shape " + ShapeString(arrays.x.shape) +
                            ")");
  }
  loaded->emplace(std::move(arrays));
  return Status::Ok();
}

std::vector<int64_t> SampleShape(const NumericArray& array) {
  return std::vector<int64_t>(array.shape.begin() + 1, array.shape.end());
}

// Checks that the samples of `other` look like those of `train`.
Status CheckLikeTrain(const ArraySplit& train, const ArraySplit& other) {
  if (SampleShape(other.x) != SampleShape(train.x)) {
    return Status::BadInput(other.x_name + ": samples of shape " +
                            ShapeString(SampleShape(other.x)) + ", but " + train.x_name +
                            " has samples of shape " + ShapeString(SampleShape(train.x)));
  }
  if (IsFloating(other.x.type) != IsFloating(train.x.type)) {
    return Status::BadInput(other.x_name + ": " + ElementTypeName(other.x.type) +
                            " elements, but " + train.x_name + " has " +
                            ElementTypeName(train.x.type) +
                            ": store both as floating point or both as integers");
  }
  return Status::Ok();
}

bool HasHdf5Extension(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  return extension == ".h5" || extension == ".hdf5" || extension == ".he5";
}

Status OpenStore(const std::string& path, std::optional<ArrayStore>* store) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) return Status::BadInput(path + ": no such file or folder");
  if (std::filesystem::is_directory(status)) {
    store->emplace(path);
    return Status::Ok();
  }
  if (HasHdf5Extension(path) || HasHdf5Signature(path)) {
    Hdf5ArrayFile file;
    HPO_RETURN_IF_ERROR(Hdf5ArrayFile::Open(path, &file));
    store->emplace(std::move(file));
    return Status::Ok();
  }
  if (std::filesystem::path(path).extension() == ".npy") {
    return Status::BadInput(path +
                            ": a single .npy file; give the folder that holds train_x.npy "
                            "and train_y.npy");
  }
  return Status::BadInput(path + ": neither an HDF5 file nor a folder of .npy files");
}

// The number of classes train's labels imply, and the array that holds them.
struct ClassLimit {
  int64_t classes;
  std::string train_name;
};

// Scans labels stored as `Label` (shape [N] or [N, 1]): each must be >= 0 and below the limit
// when there is one. Sets `largest` to the largest label (-1 for none).
template <typename Label>
Status ScanLabels(const ArraySplit& split, const ClassLimit* limit, int64_t* largest) {
  const NumericArray& y = split.y;
  if (y.shape.size() > 2 || (y.shape.size() == 2 && y.shape[1] != 1)) {
    return Status::BadInput(split.y_name + ": shape " + ShapeString(y.shape) +
                            ": class labels must have shape (N,) or (N, 1)");
  }
  const int64_t count = y.elements();
  int64_t most = -1;
  for (int64_t i = 0; i < count; ++i) {
    Label stored;
    std::memcpy(&stored, y.bytes.data() + i * sizeof(Label), sizeof(Label));
    const int64_t label = static_cast<int64_t>(stored);
    if (label < 0) {
      return Status::BadInput(split.y_name + ": label " + std::to_string(label) + " of sample " +
                              std::to_string(i) + " is negative: class labels count from 0");
    }
    if (limit != nullptr && label >= limit->classes) {
      return Status::BadInput(split.y_name + ": label " + std::to_string(label) + " of sample " +
                              std::to_string(i) + " is not below " +
                              std::to_string(limit->classes) + ", the number of classes in " +
                              limit->train_name);
    }
    if (label > most) most = label;
  }
  *largest = most;
  return Status::Ok();
}

// Checks the type, shape and values of one split's labels (see ScanLabels).
Status CheckLabels(const ArraySplit& split, const ClassLimit* limit, int64_t* largest) {
  switch (split.y.type) {
    case ElementType::kFloat32:
    case ElementType::kFloat64:
      return Status::BadInput(split.y_name + ": " + ElementTypeName(split.y.type) +
                              " labels: class labels must be integers or bool, e.g. "
                              "y.astype(np.int64)");
    case ElementType::kInt8:
      return ScanLabels<int8_t>(split, limit, largest);
    case ElementType::kUInt8:
    case ElementType::kBool:
      return ScanLabels<uint8_t>(split, limit, largest);
    case ElementType::kInt16:
      return ScanLabels<int16_t>(split, limit, largest);
    case ElementType::kInt32:
      return ScanLabels<int32_t>(split, limit, largest);
    case ElementType::kInt64:
      return ScanLabels<int64_t>(split, limit, largest);
  }
  return Status::Failure(split.y_name + ": an element type out of range");
}

// The number of regression outputs per sample `split` holds.
Status TargetOutputs(const ArraySplit& split, int64_t* outputs) {
  const NumericArray& y = split.y;
  if (y.type == ElementType::kBool) {
    return Status::BadInput(split.y_name +
                            ": bool targets: regression targets must be numbers "
                            "(float or integer); for two classes use a classification task");
  }
  if (y.shape.size() > 2 || (y.shape.size() == 2 && y.shape[1] == 0)) {
    return Status::BadInput(split.y_name + ": shape " + ShapeString(y.shape) +
                            ": regression targets must have shape (N,) or (N, k) with k > 0");
  }
  *outputs = y.shape.size() == 1 ? 1 : y.shape[1];
  return Status::Ok();
}

}  // namespace

Status LoadArrayDataset(const std::string& path, ArrayDataset* dataset) {
  std::optional<ArrayStore> store;
  HPO_RETURN_IF_ERROR(OpenStore(path, &store));
  for (char axis : {'x', 'y'}) {
    if (!store->Contains(kTrain, axis)) return Status::BadInput(store->Missing(kTrain, axis));
  }
  std::optional<ArraySplit> train;
  std::optional<ArraySplit> validation;
  std::optional<ArraySplit> test;
  HPO_RETURN_IF_ERROR(LoadSplit(*store, kTrain, &train));
  HPO_RETURN_IF_ERROR(LoadSplit(*store, kValidation, &validation));
  HPO_RETURN_IF_ERROR(LoadSplit(*store, kTest, &test));
  for (const std::optional<ArraySplit>* other : {&validation, &test}) {
    if (other->has_value()) HPO_RETURN_IF_ERROR(CheckLikeTrain(*train, **other));
  }
  dataset->train = std::move(*train);
  dataset->validation = std::move(validation);
  dataset->test = std::move(test);
  dataset->source = path;
  return Status::Ok();
}

Status CheckClassLabels(const ArrayDataset& dataset, int64_t* num_classes) {
  int64_t largest = -1;
  HPO_RETURN_IF_ERROR(CheckLabels(dataset.train, nullptr, &largest));
  const ClassLimit limit{largest + 1, dataset.train.y_name};
  for (const std::optional<ArraySplit>* other : {&dataset.validation, &dataset.test}) {
    if (!other->has_value()) continue;
    int64_t other_largest = -1;
    HPO_RETURN_IF_ERROR(CheckLabels(**other, &limit, &other_largest));
  }
  *num_classes = limit.classes;
  return Status::Ok();
}

Status CheckRegressionTargets(const ArrayDataset& dataset, int64_t* outputs) {
  int64_t train_outputs = 0;
  HPO_RETURN_IF_ERROR(TargetOutputs(dataset.train, &train_outputs));
  for (const std::optional<ArraySplit>* other : {&dataset.validation, &dataset.test}) {
    if (!other->has_value()) continue;
    int64_t other_outputs = 0;
    HPO_RETURN_IF_ERROR(TargetOutputs(**other, &other_outputs));
    if (other_outputs != train_outputs) {
      return Status::BadInput((*other)->y_name + ": " + std::to_string(other_outputs) +
                              " targets per sample, but " + dataset.train.y_name + " has " +
                              std::to_string(train_outputs));
    }
  }
  *outputs = train_outputs;
  return Status::Ok();
}

}  // namespace hpo
