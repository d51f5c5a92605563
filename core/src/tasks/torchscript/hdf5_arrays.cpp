#include "tasks/torchscript/hdf5_arrays.hpp"

#include <hdf5.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

#include "study/hdf5_handles.hpp"

namespace hpo {

using study_internal::DatasetHandle;
using study_internal::DataspaceHandle;
using study_internal::DatatypeHandle;
using study_internal::FileHandle;
using study_internal::Hdf5Error;
using study_internal::ScopedErrorSilencer;

struct Hdf5ArrayFile::Handles {
  FileHandle file;
};

namespace {

constexpr char kHdf5Signature[] = "\211HDF\r\n\032\n";
constexpr size_t kHdf5SignatureSize = sizeof(kHdf5Signature) - 1;

// h5py stores numpy's bool as this enum over int8; HDF5 converts enums by member name.
DatatypeHandle NumpyBoolType() {
  DatatypeHandle type(H5Tenum_create(H5T_NATIVE_SCHAR));
  const signed char false_value = 0;
  const signed char true_value = 1;
  H5Tenum_insert(type.get(), "FALSE", &false_value);
  H5Tenum_insert(type.get(), "TRUE", &true_value);
  return type;
}

// True for an enum with exactly the members FALSE = 0 and TRUE = 1 over a one-byte integer.
bool IsNumpyBool(hid_t enum_type) {
  DatatypeHandle base(H5Tget_super(enum_type));
  if (!base.valid() || H5Tget_size(base.get()) != 1 || H5Tget_nmembers(enum_type) != 2) {
    return false;
  }
  signed char false_value = -1;
  signed char true_value = -1;
  return H5Tenum_valueof(enum_type, "FALSE", &false_value) >= 0 &&
         H5Tenum_valueof(enum_type, "TRUE", &true_value) >= 0 && false_value == 0 &&
         true_value == 1;
}

// What a dataset of a type class that is never numeric holds, for messages.
const char* NonNumericClassText(H5T_class_t type_class) {
  switch (type_class) {
    case H5T_STRING:
      return "strings, which are not numbers: encode them as integers";
    case H5T_COMPOUND:
      return "compound records (a structured array or complex numbers): store one numeric array "
             "per dataset";
    case H5T_VLEN:
      return "variable-length sequences: store a fixed-shape numeric array";
    case H5T_ARRAY:
      return "array-typed elements: store them as extra dimensions of a numeric array";
    case H5T_OPAQUE:
      return "opaque bytes";
    case H5T_BITFIELD:
      return "bitfields";
    case H5T_REFERENCE:
      return "object or region references";
    case H5T_TIME:
      return "times";
    default:
      return "elements of an unknown type class";
  }
}

// Chooses the memory type to read a dataset of `file_type` into and the ElementType it gives.
// Messages leave out the file and dataset.
Status ChooseMemoryType(hid_t file_type, ElementType* type, DatatypeHandle* memory_type) {
  const H5T_class_t type_class = H5Tget_class(file_type);
  const size_t size = H5Tget_size(file_type);
  hid_t native = H5I_INVALID_HID;
  if (type_class == H5T_FLOAT) {
    if (size == 4) {
      *type = ElementType::kFloat32;
      native = H5T_NATIVE_FLOAT;
    } else if (size == 8) {
      *type = ElementType::kFloat64;
      native = H5T_NATIVE_DOUBLE;
    } else if (size == 2) {
      return Status::BadInput("float16 is not supported: store float32 (x.astype(np.float32))");
    } else {
      return Status::BadInput(std::to_string(size) +
                              "-byte floats are not supported: store float32 or float64");
    }
  } else if (type_class == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(file_type) == H5T_SGN_2;
    struct IntegerType {
      size_t size;
      bool is_signed;
      ElementType type;
      hid_t native;
    };
    const IntegerType kIntegerTypes[] = {
        {1, true, ElementType::kInt8, H5T_NATIVE_INT8},
        {2, true, ElementType::kInt16, H5T_NATIVE_INT16},
        {4, true, ElementType::kInt32, H5T_NATIVE_INT32},
        {8, true, ElementType::kInt64, H5T_NATIVE_INT64},
        {1, false, ElementType::kUInt8, H5T_NATIVE_UINT8},
        {2, false, ElementType::kInt32, H5T_NATIVE_INT32},  // uint16 widened
        {4, false, ElementType::kInt64, H5T_NATIVE_INT64},  // uint32 widened
    };
    for (const IntegerType& known : kIntegerTypes) {
      if (known.size == size && known.is_signed == is_signed) {
        *type = known.type;
        native = known.native;
        break;
      }
    }
    if (native < 0 && size == 8 && !is_signed) {
      return Status::BadInput("uint64 is not supported: store int64 if every value is below 2**63");
    }
    if (native < 0) {
      return Status::BadInput(std::to_string(size) + "-byte " + (is_signed ? "" : "un") +
                              "signed integers are not supported");
    }
  } else if (type_class == H5T_ENUM) {
    if (!IsNumpyBool(file_type)) {
      return Status::BadInput(
          "an enum type other than numpy's bool (as h5py writes it: FALSE = 0, TRUE = 1) is not "
          "supported: store integers");
    }
    *type = ElementType::kBool;
    *memory_type = NumpyBoolType();
    if (!memory_type->valid()) return Status::Failure(Hdf5Error("H5Tenum_create"));
    return Status::Ok();
  } else {
    return Status::BadInput(std::string("the dataset holds ") + NonNumericClassText(type_class));
  }
  memory_type->reset(H5Tcopy(native));
  if (!memory_type->valid()) return Status::Failure(Hdf5Error("H5Tcopy"));
  return Status::Ok();
}

// Reads the shape of `dataset`; messages leave out the file and dataset.
Status ReadShape(hid_t dataset, std::vector<int64_t>* shape) {
  DataspaceHandle space(H5Dget_space(dataset));
  if (!space.valid()) return Status::BadInput(Hdf5Error("H5Dget_space"));
  switch (H5Sget_simple_extent_type(space.get())) {
    case H5S_SIMPLE:
      break;
    case H5S_SCALAR:
      return Status::BadInput(
          "a scalar (0-d) dataset: data arrays need at least one dimension, "
          "the samples");
    case H5S_NULL:
      return Status::BadInput("a dataset with a null dataspace (no elements, no shape)");
    default:
      return Status::BadInput(Hdf5Error("H5Sget_simple_extent_type"));
  }
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1) return Status::BadInput(Hdf5Error("H5Sget_simple_extent_ndims"));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) {
    return Status::BadInput(Hdf5Error("H5Sget_simple_extent_dims"));
  }
  shape->assign(dims.begin(), dims.end());
  return Status::Ok();
}

}  // namespace

bool HasHdf5Signature(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return false;
  std::ifstream file(path, std::ios::binary);
  std::array<char, kHdf5SignatureSize> bytes{};
  for (uintmax_t offset = 0; offset + kHdf5SignatureSize <= size;
       offset = offset == 0 ? 512 : offset * 2) {
    if (!file.seekg(static_cast<std::streamoff>(offset)) ||
        !file.read(bytes.data(), bytes.size())) {
      return false;
    }
    if (std::memcmp(bytes.data(), kHdf5Signature, kHdf5SignatureSize) == 0) return true;
  }
  return false;
}

Hdf5ArrayFile::Hdf5ArrayFile() = default;
Hdf5ArrayFile::~Hdf5ArrayFile() = default;
Hdf5ArrayFile::Hdf5ArrayFile(Hdf5ArrayFile&& other) noexcept = default;
Hdf5ArrayFile& Hdf5ArrayFile::operator=(Hdf5ArrayFile&& other) noexcept = default;

Status Hdf5ArrayFile::Open(const std::string& path, Hdf5ArrayFile* file) {
  ScopedErrorSilencer silencer;
  FileHandle handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!handle.valid()) {
    return Status::BadInput(path + ": cannot open as an HDF5 file: " + Hdf5Error("H5Fopen"));
  }
  file->path_ = path;
  file->handles_ = std::make_unique<Handles>();
  file->handles_->file = std::move(handle);
  return Status::Ok();
}

bool Hdf5ArrayFile::Contains(const std::string& name) const {
  ScopedErrorSilencer silencer;
  for (size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1)) {
    if (H5Lexists(handles_->file.get(), name.substr(0, slash).c_str(), H5P_DEFAULT) <= 0) {
      return false;
    }
  }
  return H5Lexists(handles_->file.get(), name.c_str(), H5P_DEFAULT) > 0;
}

Status Hdf5ArrayFile::Read(const std::string& name, NumericArray* array) const {
  const std::string where = path_ + ": " + name;
  ScopedErrorSilencer silencer;
  DatasetHandle dataset(H5Dopen2(handles_->file.get(), name.c_str(), H5P_DEFAULT));
  if (!dataset.valid()) {
    return Status::BadInput(where + ": cannot open as a dataset: " + Hdf5Error("H5Dopen2"));
  }
  DatatypeHandle file_type(H5Dget_type(dataset.get()));
  if (!file_type.valid()) return Status::BadInput(where + ": " + Hdf5Error("H5Dget_type"));

  NumericArray result;
  DatatypeHandle memory_type;
  HPO_RETURN_IF_ERROR(
      ChooseMemoryType(file_type.get(), &result.type, &memory_type).WithContext(where));
  HPO_RETURN_IF_ERROR(ReadShape(dataset.get(), &result.shape).WithContext(where));
  int64_t size = static_cast<int64_t>(ElementSize(result.type));
  for (int64_t dimension : result.shape) {
    if (__builtin_mul_overflow(size, dimension, &size)) {
      return Status::BadInput(where + ": shape " + ShapeString(result.shape) + " is too large");
    }
  }
  result.bytes.resize(static_cast<size_t>(size));
  if (size > 0 && H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                          result.bytes.data()) < 0) {
    return Status::BadInput(where + ": cannot read: " + Hdf5Error("H5Dread"));
  }
  *array = std::move(result);
  return Status::Ok();
}

}  // namespace hpo
