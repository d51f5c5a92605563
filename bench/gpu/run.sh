#!/usr/bin/env bash
# The one script for a GPU machine that has a CUDA PyTorch 2.x (python3), nvcc and NCCL but none of
# Debian's packages: builds the CUDA configuration against that PyTorch and the Debian packages
# carried beside the tree (bench/gpu/pack-deps.sh, run where apt works, fills .gpu-deps/debs),
# then runs, writing every line to one results file, by stage:
#   build:     1. ctest -L gpu                      (tests/gpu: NCCL against MPI, streams, DDP)
#              2. hpo_bench_nccl_busbw on every GPU  (hpo's paths against raw ncclAllReduce)
#   finetune:  3. finetune_sweep.py                  (the seed users' Hugging Face sweep at their
#                                                     size, K=1,2,4 trials per GPU; the build
#                                                     stage's build, on the same machine)
#   all:       build, then shared_gpu_throughput.py K=1,2,4 (the built-in CNN), then finetune
# Goals: hpo_vs_raw and gradient_vs_raw >= 0.9 at large messages; trials_per_hour at K=4 >= 2x K=1.
#
#   bench/gpu/run.sh [--dry-run] [--stage build|finetune|all]      (default: all)
#
# With the device tool (64 MiB sent a call, 15 minutes of device time in all), after
# bench/gpu/pack-deps.sh and bench/gpu/pack-finetune.sh here:
#   call 1, carry .gpu-deps and .gpu-carry/1:  bench/gpu/run.sh --stage build     (about 4 min)
#   call 2, carry .gpu-carry/2:                true     (the model wheel's first part)
#   call 3, carry .gpu-carry/3:                bench/gpu/run.sh --stage finetune  (at most 7 min)
# A warm machine keeps the build and what earlier calls carried (git ignores them), so each call
# must come within the machine's idle time of the last; a bare machine starts again at call 1.
#
# --dry-run (any machine, no GPU needed): unpacks and builds exactly as on the GPU machine, checks
# that the built programs load their libraries from the carried packages, and prints the commands
# it would run instead of running them. The results file is $OUT/gpu-results.txt where OUT is set
# (the device tool's folder; the fine-tuning sweep's study and logs go there too), else
# bench/gpu/results-DATE.txt. Knobs: HPO_GPU_DEPS (default .gpu-deps), HPO_TORCH_PYTHON (default
# python3), BUILD_DIR (default build-gpu), JOBS, FINETUNE_BUDGET_S (the finetune stage's seconds,
# default 420), FINETUNE_ARGS (more finetune_sweep.py flags).
set -euo pipefail
cd "$(dirname "$0")/../.."
dry_run=0
stage=all
while (($#)); do
  case $1 in
    --dry-run) dry_run=1 ;;
    --stage)
      stage=${2:-}
      shift
      ;;
    *) stage=invalid ;;
  esac
  shift
done
case $stage in
  build | finetune | all) ;;
  *)
    echo "usage: bench/gpu/run.sh [--dry-run] [--stage build|finetune|all]" >&2
    exit 2
    ;;
esac
deps=$(realpath -m "${HPO_GPU_DEPS:-.gpu-deps}")
python=${HPO_TORCH_PYTHON:-python3}
build=${BUILD_DIR:-build-gpu}
jobs=${JOBS:-$(nproc)}
if [ -n "${OUT:-}" ]; then results=$OUT/gpu-results.txt; else results=bench/gpu/results-$(date -u +%Y%m%d-%H%M%S).txt; fi
mkdir -p "$(dirname "$results")"
: > "$results"
started=$SECONDS
say() { echo "$*" | tee -a "$results"; }
step() { say "== $* (at $((SECONDS - started)) s)"; }
trap 'say "run.sh: failed at line $LINENO: $BASH_COMMAND"' ERR

step "machine"
say "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "cpus: $(nproc)"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$results"
else
  say "gpu: none (nvidia-smi not found)"
fi
say "torch: $("$python" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())')"
# The torch folder and its cmake package (TorchConfig's find_library looks in PREFIX/lib first).
torch_prefix=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__) + ";" + torch.utils.cmake_prefix_path)')
say "nvcc: $(nvcc --version 2>/dev/null | tail -n 1 || echo 'not found')"

step "dependencies"
libs=$deps/root/usr/lib/x86_64-linux-gnu
if [ -d "$deps/debs" ]; then
  rm -rf "$deps/root"
  mkdir -p "$deps/root"
  cache=$(ldconfig -p)
  system_libs=$(awk '{print $1}' <<< "$cache" | sort -u)
  unpacked=0
  for deb in "$deps"/debs/*.deb; do
    name=$(basename "$deb")
    # A library package whose every shared object the machine already has stays packed, so the
    # machine's own (possibly newer) copies serve every program. -dev and program packages unpack,
    # and so do the libraries hpo links directly, since their CMake packages name the exact file.
    if [[ $name != *-dev_* && $name != openmpi-* && $name != libboost-* && $name != libyaml-cpp* &&
          $name != libhdf5-* && $name != libopenmpi* && -z ${HPO_GPU_DEPS_KEEP_ALL:-} ]]; then
      objects=$(dpkg-deb -c "$deb" | awk '{print $NF}' | { grep -E '/lib[^/]*\.so\.[0-9]' || true; } | xargs -r -n1 basename | sort -u)
      if [ -n "$objects" ] && [ -z "$(comm -23 <(echo "$objects") <(echo "$system_libs"))" ]; then
        continue
      fi
    fi
    dpkg-deb -x "$deb" "$deps/root"
    unpacked=$((unpacked + 1))
  done
  # Debian's alternatives are not set up by unpacking: name the Open MPI programs, and point -dev
  # links whose library stayed packed at the machine's copy.
  for program in mpirun mpiexec mpicc; do
    ln -sf "$program.openmpi" "$deps/root/usr/bin/$program"
  done
  for link in "$libs"/*.so; do
    if [ -L "$link" ] && [ ! -e "$link" ]; then
      target=$(basename "$(readlink "$link")")
      system=$(awk -v name="${target%%.so.*}.so." 'index($1, name) == 1 {print $NF; exit}' <<< "$cache")
      if [ -n "$system" ]; then ln -sf "$system" "$link"; fi
    fi
  done
  export OPAL_PREFIX=$deps/root/usr
  export PATH=$deps/root/usr/bin:$PATH
  export LD_LIBRARY_PATH=$libs/openmpi/lib:$libs/hdf5/serial:$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  debs=("$deps"/debs/*.deb)
  say "unpacked $unpacked of ${#debs[@]} packages into $deps/root"
  cmake_deps=(-DCMAKE_PREFIX_PATH="$deps/root/usr;$torch_prefix"
              -DMPI_C_COMPILER="$deps/root/usr/bin/mpicc.openmpi"
              -DHDF5_ROOT="$libs/hdf5/serial" -DCMAKE_IGNORE_PREFIX_PATH=/usr)
else
  say "no $deps/debs: using the packages installed on this machine"
  cmake_deps=(-DCMAKE_PREFIX_PATH="$torch_prefix")
fi

if [ "$stage" = finetune ]; then
  step "build ($build, from the build stage on this machine)"
  if [ ! -x "$build/hpo" ]; then
    say "no $build/hpo: run bench/gpu/run.sh --stage build on this machine first"
    exit 1
  fi
else
  step "build ($build, -j $jobs)"
  mkdir -p "$build"
  targets=(hpo hpo_with_faults hpo_gpu_tests hpo_gpu_trainer_tests hpo_gpu_ddp_tests hpo_bench_nccl_busbw)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHPO_CUDA=ON -DTORCH_CUDA_ARCH_LIST="8.0;9.0" \
    -DHPO_PYTHON3="$(command -v "$python")" "${cmake_deps[@]}" > "$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 1; }
  cmake --build "$build" -j "$jobs" --target "${targets[@]}" > "$build/build.log" 2>&1 ||
    { tail -n 60 "$build/build.log" | tee -a "$results"; exit 1; }
  { grep -E "warning|error" "$build/build.log" || true; } | tee -a "$results"
fi
for program in "$build/hpo" "$build/bench/hpo_bench_nccl_busbw"; do
  missing=$(ldd "$program" | grep "not found" || true)
  if [ -n "$missing" ]; then say "$program cannot load: $missing"; exit 1; fi
done
say "libraries of hpo:"
ldd "$build/hpo" | grep -E "libmpi|libhdf5|libyaml|boost|libtorch_cuda|libnccl|libcudart" | tee -a "$results"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$("$python" -c 'import torch; print(torch.cuda.device_count())')
ranks=1
while ((ranks * 2 <= gpus)); do ranks=$((ranks * 2)); done
# A bare image's PMIx lacks its compression plug-in; the warning it prints says nothing of ours.
export PMIX_MCA_pcompress_base_silence_warning=1
commands=()
if [ "$stage" != finetune ]; then
  commands+=("ctest --test-dir $build -L gpu --output-on-failure --timeout 300")
  # On one GPU NCCL's allreduce is a local copy or nothing: bus bandwidth needs two GPUs or more.
  if ((ranks >= 2)); then
    commands+=("mpirun -np $ranks $build/bench/hpo_bench_nccl_busbw --max-mb 256")
  else
    say "hpo_bench_nccl_busbw: not run, it needs 2 GPUs or more ($gpus here)"
  fi
fi
if [ "$stage" = all ]; then
  commands+=("$python bench/gpu/shared_gpu_throughput.py $build/hpo --ks 1,2,4 --trials 8 --train-samples 30000 --epochs 2")
fi
finetune_work=$(mktemp -d /tmp/hpo-finetune-XXXXXX)
if [ "$stage" = all ] && [ ! -d .gpu-carry ]; then
  say "finetune_sweep.py: not run, no .gpu-carry here (bench/gpu/pack-finetune.sh packs it)"
elif [ "$stage" != build ]; then
  # FINETUNE_BUDGET_S (default 420): the finetune stage's whole call, less what the steps above
  # took (with the machine's start and calls 1 and 2, the three calls fit the 15 minutes of device
  # time); in the stage `all`, the sweep's own.
  budget=${FINETUNE_BUDGET_S:-420}
  if [ "$stage" = finetune ]; then budget=$((budget - (SECONDS - started))); fi
  commands+=("$python bench/gpu/finetune_sweep.py $build/hpo --work $finetune_work --budget-s $budget ${FINETUNE_ARGS:-}")
fi
status=0
for command in "${commands[@]}"; do
  step "$command"
  if ((dry_run)); then
    say "(dry run: not run)"
  else
    HPO_TORCH_PYTHON=$(command -v "$python") $command 2>&1 | tee -a "$results" || status=1
  fi
done
if [ -f "$finetune_work/sweep/study.h5" ] && [ -n "${OUT:-}" ]; then
  cp "$finetune_work/sweep/study.h5" "$OUT/finetune-study.h5"
  tar -C "$finetune_work" -cJf "$OUT/finetune-logs.tar.xz" --exclude=site --exclude=data \
    --exclude='*.whl' --exclude=models --exclude=checkpoints .
fi
step "done, exit $status; results in $results"
exit $status
