// Private to hpo_core: one diagnostic line on stderr. No MPI, no torch.
#pragma once

#include <cstdio>
#include <string>

namespace hpo {

// Writes `line` and a newline to stderr with one write. The ranks of a job share mpirun's stderr,
// which forwards each rank's output as it reads it, so a line written in pieces (each `<<` of an
// unbuffered std::cerr is one write) can be cut by another rank's: every hpo warning, note and
// error goes through here.
inline void PrintDiagnostic(const std::string& line) {
  const std::string text = line + '\n';
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace hpo
