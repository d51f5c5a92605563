#!/usr/bin/env bash
# Builds the config-parser fuzz target with clang++ (libFuzzer + ASan + UBSan) and fuzzes it.
#
#   tests/fuzz/run_fuzz.sh BUILD_DIR [LIBFUZZER_FLAG...]
#
# BUILD_DIR holds the clang build, the working corpus and any crash-*/timeout-*/leak-* inputs.
# By default it runs a fixed 20000 executions with seed 1 over the seed corpus (tests/fuzz/corpus,
# configs/, tests/mpi/configs/, bench/configs/) and the dictionary config.dict; extra flags override
# those, e.g. `-runs=-1 -max_total_time=600 -jobs=2` to fuzz for ten minutes (-seed=0: random).
# HPO_FUZZ_WALL_LIMIT_S kills the fuzzing run after that many seconds (default: 480 for the fixed
# run, none when flags are given; 0: none). Exit codes: 0 no finding; 1 a crash, hang, leak or sanitizer report (the input
# is named in the output; copy it to tests/fuzz/crashes/); 77 clang++ or the libFuzzer runtime is
# not installed (ctest reports the test as skipped).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: run_fuzz.sh BUILD_DIR [LIBFUZZER_FLAG...]}
shift
mkdir -p "$build"
build=$(cd "$build" && pwd)

cxx=${HPO_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "SKIP: $cxx not found (apt-get install clang libclang-rt-14-dev)"
  exit 77
fi
# The libFuzzer and sanitizer runtimes (libclang-rt-*-dev) must link.
probe=$build/probe
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
  "$cxx" -x c++ -fsanitize=fuzzer,address,undefined - -o "$probe" >"$probe.log" 2>&1; then
  cat "$probe.log"
  echo "SKIP: $cxx cannot link -fsanitize=fuzzer,address,undefined (install libclang-rt-14-dev)"
  exit 77
fi

cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None >/dev/null
cmake --build "$build" -j "${HPO_FUZZ_BUILD_JOBS:-2}"

# A fresh working corpus each run (libFuzzer adds new inputs to the first folder), so a run's cost
# does not grow with the runs before it; the seed folders are only read.
work=$build/corpus
rm -rf "$work"
mkdir -p "$work"
seeds=("$here/corpus")
for folder in "$root/configs" "$root/tests/mpi/configs" "$root/bench/configs"; do
  if [ -d "$folder" ]; then seeds+=("$folder"); fi
done

# Its own sanitizer options, not those of the build it runs under (scripts/test-sanitizers.sh).
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
unset LSAN_OPTIONS
# libFuzzer's own default exit code for a finding is 77, ctest's "skipped": make findings 1. A
# hang is caught by -timeout before its memory reaches -rss_limit_mb (libFuzzer's out-of-memory
# report profiles the whole heap, which takes minutes); `timeout` guards the wall clock anyway.
limits=(-rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$build/")
start=$(date +%s)
status=0
# Regression: every input that once crashed or hung (tests/fuzz/crashes/) must now pass.
mapfile -t known < <(find "$here/crashes" -type f ! -name README.md | sort)
if ((${#known[@]})); then
  timeout -k 10 120 "$build/fuzz_config" -timeout=5 "${limits[@]}" "${known[@]}" || status=$?
fi
wall_limit=${HPO_FUZZ_WALL_LIMIT_S:-$(($# ? 0 : 480))}
if [ "$status" -eq 0 ]; then
  timeout -k 10 "$wall_limit" "$build/fuzz_config" -runs=20000 -max_len=4096 \
    -timeout=10 -seed=1 -print_final_stats=1 "${limits[@]}" -dict="$here/config.dict" "$@" \
    "$work" "${seeds[@]}" || status=$?
fi
echo "fuzz_config: exit $status after $(($(date +%s) - start)) s"
if [ "$status" -ne 0 ]; then
  ls "$build"/crash-* "$build"/timeout-* "$build"/leak-* "$build"/oom-* 2>/dev/null || true
  echo "FAIL: reproduce with $build/fuzz_config FILE; keep the input under tests/fuzz/crashes/"
  exit 1
fi
