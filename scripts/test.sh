#!/usr/bin/env bash
# Installs what is missing, builds both configurations and runs the tests (unit, MPI, deployment)
# with ctest in each: every test in the CPU build (build/, Debian's libtorch 1.13), and in the CUDA
# build (build-cuda/, PyPI's CUDA libtorch 2.x) every test but those labelled torch_free, whose
# outcome does not depend on the libtorch linked (command trials, which the torch-free `hpo` runs;
# hosts in namespaces, Slurm, manifests, the bad-config table, the config fuzzer, the heartbeat,
# the report's pages). Neither builds the benchmarks that no test runs (HPO_BUILD_BENCHMARKS=OFF:
# scripts/build.sh builds them, bench/gpu/run.sh on a GPU machine); the CUDA build leaves out
# hpo_core's unit tests and benchmarks too (HPO_BUILD_CORE_CHECKS=OFF: they link hpo_core alone,
# which builds the same in both). Without a GPU the CUDA build
# trains on the CPU, and its GPU tests (label gpu) report themselves skipped, with the reason. One
# after the other: on 2 cores, running them side by side would only slow both and load the
# timing-sensitive tests. When a test fails, the
# last lines name each failed test with the end of its output.
#
# The container image's test (label image, tests/deploy/test_image.py) builds the image, about 15
# minutes on 2 cores, so it runs only when asked, where buildah, podman, runc and mmdebstrap are
# installed (CI does not ask): HPO_IMAGE_TEST=1 scripts/test.sh --cpu-only -L image
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

# The end of each failed test's output in DIR's last ctest run, after its name.
report_failures() {
  local dir=$1 name
  [ -f "$dir/Testing/Temporary/LastTestsFailed.log" ] || return 0
  while IFS=: read -r _ name; do
    echo "---- $dir: $name failed; the end of its output:"
    awk -v name="$name" 'index($0, " Testing: ") && substr($0, index($0, " Testing: ") + 10) == name {
        on = 1; next
      }
      on && /^<end of output>$/ {exit} on' "$dir/Testing/Temporary/LastTest.log" | tail -n 40
  done <"$dir/Testing/Temporary/LastTestsFailed.log"
}

failed=()
for configuration in "${configurations[@]}"; do
  if [ "$configuration" = cpu ]; then
    build_args=(-DHPO_BUILD_BENCHMARKS=OFF) dir=build select=()
  else
    build_args=(--cuda -DHPO_BUILD_CORE_CHECKS=OFF -DHPO_BUILD_BENCHMARKS=OFF) dir=build-cuda
    select=(-LE torch_free)
  fi
  start=$SECONDS
  scripts/build.sh "${build_args[@]}"
  echo "== $configuration build: $((SECONDS - start)) s"
  start=$SECONDS
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j "$(nproc)" "${select[@]}" "$@" ||
    failed+=("$dir")
  echo "== $configuration tests ($dir): $((SECONDS - start)) s"
done
if ((${#failed[@]})); then
  for dir in "${failed[@]}"; do report_failures "$dir"; done
  echo "tests failed in: ${failed[*]}" >&2
  exit 1
fi
