// Private to hpo_runtime: the kernels of the OpenBLAS a training process loaded. Debian's libtorch
// links libblas.so.3, which scripts/install-deps.sh makes OpenBLAS; Debian 12's OpenBLAS (0.3.21)
// does not know CPUs newer than it (Intel's Emerald Rapids, family 6 model 207, among them) and
// runs its generic Prescott (SSE3) kernels there: sgemm about 5x and the CNN's training 1.2-1.4x
// slower than with its Haswell (AVX2) kernels (bench/RESULTS.md, `blas_kernels`).
#pragma once

#include <optional>
#include <string>

namespace hpo {

// The core type to give OpenBLAS (OPENBLAS_CORETYPE) instead of `chosen`, its own choice
// (openblas_get_corename()): "Haswell" when it fell back to "Prescott" on a CPU with AVX2 and FMA
// (the instructions Haswell's kernels use), else nullopt; always nullopt when the user set
// OPENBLAS_CORETYPE (`user_set`).
std::optional<std::string> FasterBlasCoreType(const std::string& chosen, bool cpu_has_avx2_fma,
                                              bool user_set);

// Called by a sweep's rank before MPI starts. Where this process loaded OpenBLAS (hpo-torch does,
// through libtorch; the torch-free hpo does not) and FasterBlasCoreType gives a core type: sets
// OPENBLAS_CORETYPE to it and replaces the process with itself (execv of /proc/self/exe with the
// same `argv`, so the launcher sees the same process), saying so once on rank 0 (`rank`, as the
// launcher numbers it). Returns otherwise, and when that exec fails (after saying so): OpenBLAS's
// own kernels are slower there, not wrong.
void UseFasterBlasKernels(char** argv, const std::string& rank);

}  // namespace hpo
