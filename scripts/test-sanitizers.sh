#!/usr/bin/env bash
# Builds hpo-mpi with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/
# (RelWithDebInfo, -DHPO_SANITIZE=ON) and runs every test there with ctest, the MPI tests under
# mpirun as in scripts/test.sh. A sanitizer report fails the test it came from.
#
#   scripts/test-sanitizers.sh [CTEST_ARG...]      e.g. scripts/test-sanitizers.sh -L unit
#
# Extra arguments go to ctest. Needs what scripts/install-deps.sh installs. HPO_JOBS (default:
# the number of cores) caps the build and ctest parallelism. Leaks that LeakSanitizer finds in
# Open MPI, libtorch and HDF5 are suppressed by tests/sanitizers/lsan.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${HPO_JOBS:-$(nproc)}
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHPO_SANITIZE=ON
cmake --build build-asan -j "$jobs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build-asan --output-on-failure --timeout 1800 -j "$jobs" "$@"
