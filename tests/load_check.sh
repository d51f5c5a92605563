#!/usr/bin/env bash
# The suites that start jobs (deploy, mpi) run beside what a shared CI machine may also
# be running: a 2-rank Fashion-MNIST training sweep, started again whenever it ends, and one more
# process that spins on a core. Every test must pass here as it does on a quiet machine: tests
# wait on progress, not on one wall-clock figure.
#
#   tests/load_check.sh [BUILD_DIR] [CTEST_ARGUMENT...]    (default: build -L 'deploy|mpi')
#
# Prints the load average every minute and a summary line at the end; writes the ctest log and the
# load samples to BUILD_DIR/load-check/. The background load (and every process it started) is
# ended on exit, also when this script is interrupted. Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
ctest_args=("$@")
if [ ${#ctest_args[@]} -eq 0 ]; then ctest_args=(-L 'deploy|mpi'); fi
if [ ! -x "$build/hpo" ]; then
  echo "load_check.sh: no $build/hpo: build first (scripts/build.sh)" >&2
  exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
work=$(realpath "$build")/load-check
rm -rf "$work"
mkdir -p "$work"
load_pids=()

stop_load() {
  for pid in "${load_pids[@]}"; do
    kill -TERM -- "-$pid" 2> /dev/null || true
  done
  sleep 2
  for pid in "${load_pids[@]}"; do
    kill -KILL -- "-$pid" 2> /dev/null || true
  done
}
trap stop_load EXIT
trap 'exit 130' INT TERM

# The training sweep: the quickstart's Fashion-MNIST CNN on 2 ranks, in its own session so that
# stop_load ends mpirun and both ranks together.
setsid bash -c '
  round=0
  while true; do
    round=$((round + 1))
    mpirun --oversubscribe --bind-to none -np 2 "$1/hpo" sweep --config configs/quickstart.yaml \
      --output "$2/sweep-$round" > "$2/sweep-$round.log" 2>&1 || true
    rm -rf "$2/sweep-$round"
  done' load-sweep "$(realpath "$build")" "$work" &
load_pids+=($!)
# One more busy process.
setsid bash -c 'while :; do :; done' &
load_pids+=($!)

setsid bash -c 'while sleep 60; do
    line="load-check: $(date -u +%H:%M:%S) load $(cut -d" " -f1-3 /proc/loadavg)"
    echo "$line"
    echo "$line" >> "$1/load.txt"
  done' load-samples "$work" &
load_pids+=($!)

started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
begin=$SECONDS
set +e
ctest --test-dir "$build" --output-on-failure "${ctest_args[@]}" 2>&1 | tee "$work/ctest.log"
status=${PIPESTATUS[0]}
set -e
summary=$(grep -E "tests passed|tests failed" "$work/ctest.log" | tail -n 1)
rounds=$(ls "$work" | grep -c '^sweep-.*\.log$' || true)
echo "load-check: started $started, $((SECONDS - begin)) s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end, $rounds training sweeps begun beside it: ${summary:-no ctest summary} (exit $status)"
exit "$status"
