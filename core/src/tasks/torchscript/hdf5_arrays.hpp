// Reads numeric datasets of a user's HDF5 file into NumericArrays, without torch. The interface
// keeps <hdf5.h> out of its includers. Not thread-safe (neither is the serial HDF5 library).
#pragma once

#include <memory>
#include <string>

#include "hpo/status.hpp"
#include "tasks/torchscript/numeric_array.hpp"

namespace hpo {

// True when the file at `path` carries the HDF5 signature "\211HDF\r\n\032\n" where HDF5 looks for
// it (offset 0, 512, 1024, 2048, ...); false for a file without it or one that cannot be read.
bool HasHdf5Signature(const std::string& path);

// An HDF5 file opened read-only. Move-only; closes the file when destroyed. Messages name the file
// and the dataset: "PATH: train/x: why".
//
// Element types: HDF5 floats of 4 and 8 bytes and integers of 1, 2, 4 and 8 bytes (in either byte
// order) map to the ElementType of the same width; uint16 and uint32 are widened to kInt32 and
// kInt64 by HDF5's conversion; h5py's numpy bool (an enum of FALSE = 0 and TRUE = 1 over int8)
// reads as kBool. Refused with BadInput: uint64, float16 and other float widths, other enums,
// strings, compound (structured or complex), variable-length, array, opaque, bitfield, reference
// and time types, scalar (0-d) and null dataspaces.
class Hdf5ArrayFile {
 public:
  Hdf5ArrayFile();
  ~Hdf5ArrayFile();
  Hdf5ArrayFile(Hdf5ArrayFile&& other) noexcept;
  Hdf5ArrayFile& operator=(Hdf5ArrayFile&& other) noexcept;
  Hdf5ArrayFile(const Hdf5ArrayFile&) = delete;
  Hdf5ArrayFile& operator=(const Hdf5ArrayFile&) = delete;

  // Opens `path` into `file`. BadInput "PATH: cannot open as an HDF5 file: why" when HDF5 cannot.
  static Status Open(const std::string& path, Hdf5ArrayFile* file);

  // True when something (a dataset, a group, a link) is stored under the slash-separated `name`,
  // e.g. "val/y"; false when it or one of its parent groups is missing.
  bool Contains(const std::string& name) const;

  // Reads the whole dataset `name` into `array` (replacing its contents) with one H5Dread into a
  // buffer of the matching native type.
  Status Read(const std::string& name, NumericArray* array) const;

  const std::string& path() const { return path_; }

 private:
  struct Handles;

  std::string path_;
  std::unique_ptr<Handles> handles_;
};

}  // namespace hpo
