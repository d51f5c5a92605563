// Private to hpo_core and the libraries above it: the line that tells scripts/hpo-mpirun a job is
// ending and with which exit code. The wrapper matches its text, so every writer takes it from
// here: AbortJob, the job deadlines, and rank 0 at a wrapped sweep's end.
#pragma once

#include <string>

namespace hpo {

// "hpo: ending the job with exit code N", without a newline.
inline std::string JobEndLine(int code) {
  return "hpo: ending the job with exit code " + std::to_string(code);
}

}  // namespace hpo
