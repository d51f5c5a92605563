#include "runtime/blas_kernels.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/diagnostic.hpp"

namespace hpo {

namespace {

constexpr char kCoreTypeVariable[] = "OPENBLAS_CORETYPE";
constexpr char kGenericCore[] = "prescott";  // OpenBLAS's x86-64 fallback, in lower case
constexpr char kAvx2Core[] = "Haswell";

bool CpuHasAvx2AndFma() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's checks include the operating system's support for the AVX registers.
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

std::string Lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace

std::optional<std::string> FasterBlasCoreType(const std::string& chosen, bool cpu_has_avx2_fma,
                                              bool user_set) {
  if (user_set || !cpu_has_avx2_fma || Lower(chosen) != kGenericCore) return std::nullopt;
  return std::string(kAvx2Core);
}

void UseFasterBlasKernels(char** argv, const std::string& rank) {
  using CoreNameFn = char* (*)();
  const auto core_name = reinterpret_cast<CoreNameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (core_name == nullptr) return;  // no OpenBLAS in this process
  const char* chosen = core_name();
  const std::optional<std::string> faster =
      FasterBlasCoreType(chosen != nullptr ? chosen : "", CpuHasAvx2AndFma(),
                         std::getenv(kCoreTypeVariable) != nullptr);
  if (!faster) return;
  if (rank == "0") {
    PrintDiagnostic(std::string("hpo: OpenBLAS does not know this CPU and chose its generic ") +
                    chosen + " kernels; training runs with " + kCoreTypeVariable + "=" + *faster +
                    " (its AVX2 kernels, which this CPU supports); set " + kCoreTypeVariable +
                    " to choose otherwise");
  }
  setenv(kCoreTypeVariable, faster->c_str(), 1);
  execv("/proc/self/exe", argv);
  const std::string why = std::strerror(errno);
  unsetenv(kCoreTypeVariable);
  if (rank == "0") {
    PrintDiagnostic("hpo: warning: that restart failed (" + why +
                    "); training goes on with OpenBLAS's generic kernels, more slowly");
  }
}

}  // namespace hpo
