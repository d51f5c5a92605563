#!/usr/bin/env bash
# The one script for a GPU machine that has a CUDA PyTorch 2.x (python3), nvcc and NCCL but none of
# Debian's packages: builds the CUDA configuration against that PyTorch and the Debian packages
# carried beside the tree (bench/gpu/pack-deps.sh, run where apt works, fills .gpu-deps/debs),
# then runs, in this order, writing every line to one results file:
#   1. ctest -L gpu                      (tests/gpu: NCCL against MPI, streams, shared GPUs, DDP)
#   2. hpo_bench_nccl_busbw on every GPU  (hpo's allreduce paths against raw ncclAllReduce)
#   3. shared_gpu_throughput.py K=1,2,4  (trials/hour and images/s of the built-in CNN)
# in under 10 minutes on a 16-core machine. Goals: hpo_vs_raw and gradient_vs_raw >= 0.9 at large
# messages; trials_per_hour at K=4 >= 2x K=1.
#
#   bench/gpu/run.sh [--dry-run]
#
# --dry-run (any machine, no GPU needed): unpacks and builds exactly as on the GPU machine, checks
# that the built programs load their libraries from the carried packages, and prints the commands
# it would run instead of running them. The results file is $OUT/gpu-results.txt where OUT is set
# (the device tool's folder), else bench/gpu/results-DATE.txt. Knobs: HPO_GPU_DEPS (default
# .gpu-deps), HPO_TORCH_PYTHON (default python3), BUILD_DIR (default build-gpu), JOBS.
set -euo pipefail
cd "$(dirname "$0")/../.."
dry_run=0
if [ "${1:-}" = "--dry-run" ]; then dry_run=1; fi
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
  say "unpacked $unpacked of $(ls "$deps"/debs/*.deb | wc -l) packages into $deps/root"
  cmake_deps=(-DCMAKE_PREFIX_PATH="$deps/root/usr;$torch_prefix"
              -DMPI_C_COMPILER="$deps/root/usr/bin/mpicc.openmpi"
              -DHDF5_ROOT="$libs/hdf5/serial" -DCMAKE_IGNORE_PREFIX_PATH=/usr)
else
  say "no $deps/debs: using the packages installed on this machine"
  cmake_deps=(-DCMAKE_PREFIX_PATH="$torch_prefix")
fi

step "build ($build, -j $jobs)"
mkdir -p "$build"
targets=(hpo hpo_gpu_tests hpo_gpu_trainer_tests hpo_gpu_ddp_tests hpo_bench_nccl_busbw)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHPO_CUDA=ON -DTORCH_CUDA_ARCH_LIST="8.0;9.0" \
  -DHPO_PYTHON3="$(command -v "$python")" "${cmake_deps[@]}" > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" --target "${targets[@]}" > "$build/build.log" 2>&1 ||
  { tail -n 60 "$build/build.log" | tee -a "$results"; exit 1; }
{ grep -E "warning|error" "$build/build.log" || true; } | tee -a "$results"
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
commands=("ctest --test-dir $build -L gpu --output-on-failure --timeout 300")
# On one GPU NCCL's allreduce is a local copy or nothing: bus bandwidth needs two GPUs or more.
if ((ranks >= 2)); then
  commands+=("mpirun -np $ranks $build/bench/hpo_bench_nccl_busbw --max-mb 256")
else
  say "hpo_bench_nccl_busbw: not run, it needs 2 GPUs or more ($gpus here)"
fi
commands+=("$python bench/gpu/shared_gpu_throughput.py $build/hpo --ks 1,2,4 --trials 8 --train-samples 30000 --epochs 2")
status=0
for command in "${commands[@]}"; do
  step "$command"
  if ((dry_run)); then
    say "(dry run: not run)"
  else
    HPO_TORCH_PYTHON=$(command -v "$python") $command 2>&1 | tee -a "$results" || status=1
  fi
done
step "done, exit $status; results in $results"
exit $status
