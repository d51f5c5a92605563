// A stand-in for OpenBLAS's openblas_get_corename, preloaded (LD_PRELOAD) by
// test_torch_free_launcher.py: it answers "Prescott", what OpenBLAS chooses on a CPU it does not
// know, and prints the OPENBLAS_CORETYPE of the process that asked, so the test sees whether
// hpo-torch restarted with other kernels (runtime/blas_kernels.hpp).
#include <cstdio>
#include <cstdlib>

extern "C" char* openblas_get_corename() {
  const char* chosen = std::getenv("OPENBLAS_CORETYPE");
  std::fprintf(stderr, "generic-openblas: asked with OPENBLAS_CORETYPE=%s\n",
               chosen != nullptr ? chosen : "(unset)");
  static char generic[] = "Prescott";
  return generic;
}
