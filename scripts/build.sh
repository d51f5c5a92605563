#!/usr/bin/env bash
# Configures and builds hpo-mpi (Release). Extra arguments go to cmake's configure.
#
#   scripts/build.sh [CMAKE_ARG...]          the CPU build, into build/ (Debian's libtorch)
#   scripts/build.sh --cuda [CMAKE_ARG...]   the CUDA build (HPO_CUDA=ON), into build-cuda/, on the
#                                            CUDA libtorch of scripts/install-deps.sh --cuda
#   scripts/build.sh --main [CMAKE_ARG...]   only `hpo`, into build/, without tests and benchmarks
#                                            (the main job; a later plain build adds them)
#
# HPO_TORCH_CUDA_VENV names another Python environment with a CUDA torch 2.x (default
# /opt/hpo-mpi/torch-cuda); HPO_BUILD_DIR another build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# ccache (when installed) compiles each translation unit once for both builds: the torch-free
# libraries (hpo_core, hpo_mpi, the runtime, the launcher) preprocess to the same text in build/
# and build-cuda/, so the CUDA build takes them from the cache. CCACHE_BASEDIR makes the
# checkout's absolute paths relative, so two build folders (and two clones) share entries.
compiler_launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  compiler_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ "${1:-}" = "--cuda" ]; then
  shift
  build_dir=${HPO_BUILD_DIR:-build-cuda}
  python=${HPO_TORCH_CUDA_VENV:-/opt/hpo-mpi/torch-cuda}/bin/python
  # The torch folder itself too: TorchConfig finds its libraries with find_library, which looks in
  # CMAKE_PREFIX_PATH/lib before the system's folders (where Debian's libtorch is).
  if ! prefix=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__) + ";" + torch.utils.cmake_prefix_path)' 2>/dev/null); then
    echo "build.sh --cuda: no torch at $python: run scripts/install-deps.sh --cuda first" >&2
    exit 2
  fi
  # No kernels of hpo's own: the architecture list only quiets torch's detection of the (absent)
  # GPU. A CUDA toolkit outside /usr/local/cuda is found through CUDAToolkit_ROOT.
  cuda_args=(-DHPO_CUDA=ON -DCMAKE_PREFIX_PATH="$prefix" -DTORCH_CUDA_ARCH_LIST="8.0;9.0")
  [ -x /usr/local/cuda/bin/nvcc ] && cuda_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}" "${compiler_launcher[@]}" "$@"
  cmake --build "$build_dir" -j "$jobs"
elif [ "${1:-}" = "--main" ]; then
  shift
  build_dir=${HPO_BUILD_DIR:-build}
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DHPO_BUILD_TESTS=OFF \
    -DHPO_BUILD_BENCHMARKS=OFF "${compiler_launcher[@]}" "$@"
  cmake --build "$build_dir" -j "$jobs" --target hpo
else
  build_dir=${HPO_BUILD_DIR:-build}
  # Tests and benchmarks on, also in a folder `--main` configured without them.
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DHPO_BUILD_TESTS=ON \
    -DHPO_BUILD_CORE_CHECKS=ON -DHPO_BUILD_BENCHMARKS=ON "${compiler_launcher[@]}" "$@"
  cmake --build "$build_dir" -j "$jobs"
fi
