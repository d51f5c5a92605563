#!/usr/bin/env bash
# Installs what is missing, builds both configurations and runs every test (unit, MPI, deployment)
# with ctest in each: the CPU build (build/, Debian's libtorch 1.13) and the CUDA build
# (build-cuda/, PyPI's CUDA libtorch 2.x). Without a GPU the CUDA build trains on the CPU, and its
# GPU tests (label gpu) report themselves skipped, with the reason. One after the other: on 2
# cores, running them side by side would only slow both and load the timing-sensitive tests.
#
#   scripts/test.sh [--cpu-only] [CTEST_ARG...]
set -euo pipefail
cd "$(dirname "$0")/.."
configurations=(cpu cuda)
if [ "${1:-}" = "--cpu-only" ]; then
  shift
  configurations=(cpu)
fi
if [ "${#configurations[@]}" -gt 1 ]; then scripts/install-deps.sh --cuda; else scripts/install-deps.sh; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=()
for configuration in "${configurations[@]}"; do
  if [ "$configuration" = cpu ]; then build_args=(); dir=build; else build_args=(--cuda); dir=build-cuda; fi
  start=$SECONDS
  scripts/build.sh "${build_args[@]}"
  echo "== $configuration build: $((SECONDS - start)) s"
  start=$SECONDS
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j "$(nproc)" "$@" ||
    failed+=("$configuration")
  echo "== $configuration tests ($dir): $((SECONDS - start)) s"
done
if ((${#failed[@]})); then
  echo "tests failed in: ${failed[*]}" >&2
  exit 1
fi
