// Whole-file reads and atomic whole-file replacement (POSIX). Free functions over paths; safe to
// call from any thread on different paths.
#pragma once

#include <cstddef>
#include <string>

#include "hpo/status.hpp"

namespace hpo {

// Reads the whole file at `path` into `bytes`. BadInput "PATH: cannot read WHAT: reason" when it
// cannot (`what` names the file's role in messages: "config", "study").
Status ReadWholeFile(const std::string& path, const std::string& what, std::string* bytes);

// Writes `size` bytes to PATH.tmp, fsyncs it and renames it over `path`, so a reader sees the old
// or the new file, never a part. Failure "writing PATH: reason" (e.g. "No space left on device")
// when a step fails; the temporary is removed and `path` is left as it was.
Status WriteFileAtomically(const std::string& path, const void* data, size_t size);

}  // namespace hpo
