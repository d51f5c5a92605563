// runtime/blas_kernels.hpp: which OpenBLAS core type a training process asks for.
#include "runtime/blas_kernels.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace hpo {
namespace {

TEST(BlasKernelsTest, AGenericFallbackOnAnAvx2CpuGetsTheHaswellKernels) {
  EXPECT_EQ(FasterBlasCoreType("Prescott", true, false), "Haswell");
  EXPECT_EQ(FasterBlasCoreType("prescott", true, false), "Haswell");
}

TEST(BlasKernelsTest, AKnownCoreACpuWithoutAvx2OrTheUsersChoiceIsLeftAlone) {
  EXPECT_FALSE(FasterBlasCoreType("Zen", true, false).has_value());
  EXPECT_FALSE(FasterBlasCoreType("Haswell", true, false).has_value());
  EXPECT_FALSE(FasterBlasCoreType("SkylakeX", true, false).has_value());
  EXPECT_FALSE(FasterBlasCoreType("Prescott", false, false).has_value());  // older than Haswell
  EXPECT_FALSE(FasterBlasCoreType("Prescott", true, true).has_value());    // OPENBLAS_CORETYPE set
  EXPECT_FALSE(FasterBlasCoreType("", true, false).has_value());
}

// The CPU build trains through Debian's libtorch, linked to libblas.so.3, which
// scripts/install-deps.sh makes OpenBLAS: UseFasterBlasKernels asks it by this name.
TEST(BlasKernelsTest, TheCpuBuildsTrainingProcessCanAskOpenBlasItsCore) {
  using CoreNameFn = char* (*)();
  const auto core_name = reinterpret_cast<CoreNameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (dlopen("libblas.so.3", RTLD_LAZY | RTLD_NOLOAD) == nullptr) {
    GTEST_SKIP() << "this libtorch does not link libblas.so.3 (PyPI's brings its own BLAS)";
  }
  ASSERT_NE(core_name, nullptr) << "libblas.so.3 is not OpenBLAS (update-alternatives)";
  ASSERT_NE(core_name(), nullptr);
  EXPECT_GT(std::strlen(core_name()), 0u);
}

}  // namespace
}  // namespace hpo
