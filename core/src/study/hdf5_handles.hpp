// RAII helpers for the HDF5 C API, private to the study file code. Not thread-safe (neither is the
// serial HDF5 library this project links).
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

namespace hpo::study_internal {

// Owns one HDF5 identifier and closes it with `Close` when destroyed. Move-only; an invalid
// (negative) id is never closed, so a failed H5*create/open call can be stored unchecked.
template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }

  Handle(Handle&& other) noexcept : id_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.release();
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

  // Gives up ownership without closing.
  hid_t release() {
    hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

  // Closes the id now (if valid) and takes `id` instead.
  void reset(hid_t id = H5I_INVALID_HID) {
    if (id_ >= 0) Close(id_);
    id_ = id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using FileHandle = Handle<H5Fclose>;
using DatasetHandle = Handle<H5Dclose>;
using DataspaceHandle = Handle<H5Sclose>;
using DatatypeHandle = Handle<H5Tclose>;
using AttributeHandle = Handle<H5Aclose>;
using PropertyListHandle = Handle<H5Pclose>;

// Turns off HDF5's automatic printing of its error stack for the lifetime of the object and
// restores the previous handler afterwards, so users see only our Status messages.
class ScopedErrorSilencer {
 public:
  ScopedErrorSilencer() {
    H5Eget_auto2(H5E_DEFAULT, &saved_func_, &saved_data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~ScopedErrorSilencer() { H5Eset_auto2(H5E_DEFAULT, saved_func_, saved_data_); }

  ScopedErrorSilencer(const ScopedErrorSilencer&) = delete;
  ScopedErrorSilencer& operator=(const ScopedErrorSilencer&) = delete;

 private:
  H5E_auto2_t saved_func_ = nullptr;
  void* saved_data_ = nullptr;
};

// "<call> failed: <the innermost HDF5 error description>". Call it right after the failing HDF5
// call: any later HDF5 call clears the error stack.
std::string Hdf5Error(const char* call);

// H5Literate callback: appends each link's name to the std::vector<std::string> `names` points to.
herr_t CollectLinkName(hid_t group, const char* name, const H5L_info_t* info, void* names);

}  // namespace hpo::study_internal
