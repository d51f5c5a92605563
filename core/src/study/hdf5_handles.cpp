#include "hdf5_handles.hpp"

#include <vector>

namespace hpo::study_internal {

namespace {

// H5Ewalk2 callback: keeps the description of the innermost (first visited, walking upward) error.
herr_t KeepInnermost(unsigned n, const H5E_error2_t* error, void* client_data) {
  if (n == 0 && error->desc != nullptr) *static_cast<std::string*>(client_data) = error->desc;
  return 0;
}

}  // namespace

herr_t CollectLinkName(hid_t, const char* name, const H5L_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->push_back(name);
  return 0;
}

std::string Hdf5Error(const char* call) {
  std::string description;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, KeepInnermost, &description);
  if (description.empty()) return std::string(call) + " failed";
  return std::string(call) + " failed: " + description;
}

}  // namespace hpo::study_internal
