#!/usr/bin/env bash
# The benchmark harness: runs every benchmark under bench/ with mpirun on this machine and checks
# their results. Results are recorded by hand in bench/RESULTS.md.
#   bench/run.sh [BUILD_DIR]        (default: build; needs the hpo_bench_* targets)
# Environment knobs: REPS (DDP repetitions, default 3), TRAIN_SAMPLES (default 20000), EPOCHS
# (default 1), DISPATCH_TRIALS (default 2000).
#
# (a) DDP throughput of one fashion_mnist trial as 1 rank x 2 threads, 2 ranks x 1 thread and
#     1 rank x 1 thread, interleaved for REPS repetitions so every configuration sees the same
#     machine noise; prints the median samples/s of each and the scaling efficiencies.
# (b) Dispatch overhead with 4 ranks, groups of 1 and of 2.
# (c) Coordinator overhead (10,000 no-op trials) and slot utilization (200 sleep trials).
# (d) Search quality (TPE vs random vs Sobol) and TPE suggestion cost, without MPI.
# (e) The DDP step with and without overlapped allreduce, 2 and 1 ranks; allreduce bus bandwidth
#     of the gradient path vs raw MPI_Allreduce, 1 KiB .. 256 MiB, 2 ranks.
# The Fashion-MNIST compute-to-target comparison takes minutes per sweep and runs on its own:
#   /usr/bin/python3 bench/compute_to_target.py build/hpo --seeds 1,2,3
# Prints machine info first. Exits 1 when a benchmark fails or any result line says check=FAILED.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${REPS:-3}
train_samples=${TRAIN_SAMPLES:-20000}
epochs=${EPOCHS:-1}
dispatch_trials=${DISPATCH_TRIALS:-2000}
for target in hpo_bench_ddp hpo_bench_dispatch hpo_bench_ddp_overlap hpo_bench_busbw; do
  if [ ! -x "$build/bench/$target" ]; then
    echo "run.sh: $build/bench/$target not found; build it first:" >&2
    echo "  cmake -S . -B $build && cmake --build $build --target $target" >&2
    exit 2
  fi
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# libgomp's threads spin while waiting for work by default; with more than one thread per rank on
# a busy machine that makes training about 10x slower. Passive waiting sleeps instead.
export OMP_WAIT_POLICY=passive

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "nproc: $(nproc)"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
echo "uptime: $(uptime)"
echo "mpirun: $(mpirun --version | head -n 1)"
echo

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

# Runs one benchmark on $1 ranks; its output goes to the terminal and its result lines to $log.
run_bench() {
  local ranks=$1
  shift
  echo "+ mpirun --oversubscribe --bind-to none -np $ranks $*"
  if ! mpirun --oversubscribe --bind-to none -np "$ranks" "$@" | tee -a "$log"; then
    echo "run.sh: the benchmark above failed" >&2
    failed=1
  fi
}

# The median samples_per_s of the DDP runs with $1 ranks x $2 threads; empty when there are none.
median_samples_per_s() {
  grep "^bench=ddp_throughput ranks=$1 threads_per_rank=$2 " "$log" |
    sed -E 's/.* samples_per_s=([^ ]+).*/\1/' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR > 0) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

echo "== (a) DDP throughput: $reps repetitions of 1x2, 2x1, 1x1 (ranks x threads), interleaved"
for ((rep = 1; rep <= reps; ++rep)); do
  for config in "1 2" "2 1" "1 1"; do
    read -r ranks threads <<<"$config"
    run_bench "$ranks" "$build/bench/hpo_bench_ddp" --threads "$threads" \
      --train-samples "$train_samples" --epochs "$epochs"
  done
done
one_by_two=$(median_samples_per_s 1 2)
two_by_one=$(median_samples_per_s 2 1)
one_by_one=$(median_samples_per_s 1 1)
awk -v a="$one_by_two" -v b="$two_by_one" -v c="$one_by_one" 'BEGIN {
  if (a == "" || b == "" || c == "") { print "no medians: a configuration produced no result"; exit }
  printf "median samples/s: 1x2 %.1f, 2x1 %.1f, 1x1 %.1f\n", a, b, c
  printf "scaling efficiency 2x1 / 1x2: %.3f\n", b / a
  printf "scaling efficiency 2x1 / (2 x 1x1): %.3f\n", b / (2 * c)
}'
echo

echo "== (b) dispatch overhead: 4 ranks, $dispatch_trials no-op trials"
for ranks_per_trial in 1 2; do
  run_bench 4 "$build/bench/hpo_bench_dispatch" "$dispatch_trials" "$ranks_per_trial"
done

echo "== (c) coordinator overhead: 4 ranks, 10000 no-op trials; slot utilization: 200 trials of"
echo "   0.1-1 s sleeps on 4 groups"
run_bench 4 "$build/bench/hpo_bench_dispatch" 10000 1
run_bench 4 "$build/bench/hpo_bench_dispatch" 200 1 0.1 1.0

echo "== (d) search quality (Branin, Hartmann-6, multi-fidelity curves) and TPE suggestion cost"
for bench in hpo_bench_search_quality hpo_bench_tpe_cost; do
  echo "+ $build/bench/$bench"
  if ! "$build/bench/$bench" | tee -a "$log"; then
    echo "run.sh: the benchmark above failed" >&2
    failed=1
  fi
done

echo "== (e) DDP step with overlapped allreduce (256 KiB buckets), 2 and 1 ranks; allreduce busbw"
for ranks in 2 1; do
  run_bench "$ranks" "$build/bench/hpo_bench_ddp_overlap" --steps 30 --reps 3 --bucket-kb 256 \
    --first-bucket-kb 16
done
run_bench 2 "$build/bench/hpo_bench_busbw"

if grep -q "check=FAILED" "$log"; then
  echo "run.sh: a benchmark's self-check failed" >&2
  failed=1
fi
exit "$failed"
