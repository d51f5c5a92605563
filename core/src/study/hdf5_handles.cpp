#include "hdf5_handles.hpp"

namespace hpo::study_internal {

namespace {

// H5Ewalk2 callback: keeps the description of the innermost (first visited, walking upward) error.
herr_t KeepInnermost(unsigned n, const H5E_error2_t* error, void* client_data) {
  if (n == 0 && error->desc != nullptr) *static_cast<std::string*>(client_data) = error->desc;
  return 0;
}

}  // namespace

std::string Hdf5Error(const char* call) {
  std::string description;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, KeepInnermost, &description);
  if (description.empty()) return std::string(call) + " failed";
  return std::string(call) + " failed: " + description;
}

}  // namespace hpo::study_internal
