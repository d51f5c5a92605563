#!/bin/sh
# image-install.sh BUILD_DIR STAGE: run by k8s-mpi/Dockerfile in its build stages, from the
# repository root. Lays out under STAGE/root what the image's last stage copies to / (hpo and
# hpo-torch from BUILD_DIR, hpo-mpirun and hpo-worker in /usr/local/bin, the ready configs in
# /opt/hpo/configs, Debian's Fashion-MNIST in /usr/share/datasets/fashion-mnist) and writes
# STAGE/runtime-packages: the Debian packages that hold the libraries hpo and hpo-torch load
# directly (their NEEDED entries, found as the loader finds them), one a line, for the last stage
# to install. So the runtime's package list follows the build's and is written nowhere by hand;
# libraries outside dpkg's (PyPI's torch and its NVIDIA wheels) are copied by the CUDA stage.
set -eu
build=$1
stage=$2
root=$stage/root
install -D -m 0755 "$build/hpo" "$root/usr/local/bin/hpo"
install -D -m 0755 "$build/hpo-torch" "$root/usr/local/bin/hpo-torch"
install -D -m 0755 scripts/hpo-mpirun "$root/usr/local/bin/hpo-mpirun"
install -D -m 0755 scripts/hpo-worker "$root/usr/local/bin/hpo-worker"
mkdir -p "$root/opt/hpo" "$root/usr/share/datasets"
cp -r configs "$root/opt/hpo/configs"
cp -r /usr/share/datasets/fashion-mnist "$root/usr/share/datasets/fashion-mnist"

# The package that owns library PATH: Debian 12 has merged /usr, and dpkg knows a library by the
# path its package shipped (/lib/... or /usr/lib/...); a link managed by update-alternatives
# (libblas.so.3) is owned by the package it points into.
owner() {
  for candidate in "$1" "/usr$1" "${1#/usr}" "$(readlink -f "$1")"; do
    if found=$(dpkg -S "$candidate" 2>/dev/null); then
      echo "${found%%:*}"
      return
    fi
  done
}

# Also the BLAS and LAPACK that libtorch loads: their alternatives point at OpenBLAS here
# (scripts/install-deps.sh), and apt would otherwise satisfy libtorch with the reference BLAS, 16x
# slower.
needed=$( (for binary in "$build/hpo" "$build/hpo-torch"; do
  objdump -p "$binary" | awk '$1 == "NEEDED" {print $2}'
done; echo libblas.so.3; echo liblapack.so.3) | sort -u)
for binary in "$build/hpo" "$build/hpo-torch"; do ldd "$binary"; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    if echo "$needed" | grep -qxF "$name"; then owner "$path"; fi
  done | sort -u > "$stage/runtime-packages"
echo "runtime packages: $(tr '\n' ' ' < "$stage/runtime-packages")"
