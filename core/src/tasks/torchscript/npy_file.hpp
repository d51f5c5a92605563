// Reader for numpy's .npy files (numpy.lib.format, versions 1.0, 2.0 and 3.0), without Python or
// torch. Free function; safe to call from any thread on different arrays.
#pragma once

#include <string>

#include "hpo/status.hpp"
#include "tasks/torchscript/numeric_array.hpp"

namespace hpo {

// Reads the .npy file at `path` into `array` (replacing its contents). The header dictionary must
// hold exactly 'descr', 'fortran_order' and 'shape', in any order, with the spacing and padding
// numpy writes (and Python 2's "3L" integers). Accepted descr: '<f4' '<f8' '|i1' '|u1' '<i2' '<i4'
// '<i8' '|b1' ('=' or '<' in place of '|' too); '<u2' and '<u4' are widened to int32 and int64.
// The data must be exactly product(shape) * itemsize bytes, read in one go into array->bytes.
// BadInput "PATH: why" for: a missing file, bad magic, an unknown version, a malformed or
// truncated header, truncated or trailing data, fortran_order True, big-endian data, a 0-d array,
// uint64, float16, complex, object, string, datetime or structured dtypes.
Status ReadNpyFile(const std::string& path, NumericArray* array);

}  // namespace hpo
