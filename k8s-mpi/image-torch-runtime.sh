#!/bin/sh
# image-torch-runtime.sh VENV ROOT: run by k8s-mpi/Dockerfile's CUDA build stage. Copies the
# Python environment VENV of PyPI's CUDA torch (scripts/install-deps.sh --cuda) into ROOT at the
# same path, less what only building needs: hpo and hpo-torch find libtorch there through the
# RPATH cmake gave them, libtorch finds the CUDA runtime, cuBLAS, cuDNN and NCCL in the NVIDIA
# wheels through its own RPATH, and a command trial's Python program may `import torch` with
# VENV/bin/python. Left out: nvcc, NVVM and the CUDA and torch headers (the build's), static
# libraries, and triton (torch.compile's GPU code generator: neither hpo nor a DDP training script
# needs it; 0.6 GB).
set -eu
venv=$1
root=$2
mkdir -p "$root$(dirname "$venv")"
cp -a "$venv" "$root$venv"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cd "$root$site"
rm -rf triton triton-*.dist-info torch/include nvidia/cu13/bin nvidia/cu13/nvvm \
  nvidia/cu13/include nvidia/*/include
find . -name '*.a' -delete
find . -name __pycache__ -prune -exec rm -rf {} +
