#!/usr/bin/env bash
# Installs the peers of bench/peers/ from PyPI, each into a virtual environment of its own under
# HPO_PEERS_DIR (default /opt/hpo-mpi/peers): their pins conflict (HEBO needs numpy < 1.25,
# DEHB numpy < 2 while Ray's pyarrow needs numpy >= 2), so one shared
# environment cannot hold them. Run once, at install time; the benchmark never fetches.
#
#   bench/peers/install.sh [PEER...]     # default: every peer below
#
# Safe to run again: a peer whose environment already imports at its pinned version is skipped.
# Needs python3-venv, and swig and a C++ compiler for SMAC3's random forest (pyrfr builds from
# source); as root it installs swig when missing.
set -euo pipefail

dir=${HPO_PEERS_DIR:-/opt/hpo-mpi/peers}
python=${HPO_PEERS_PYTHON:-/usr/bin/python3}

# peer | the module and version that prove the install | pip requirements (pinned)
# syne-tune stays at 0.13.0, the last release with MOBSTER, DyHPO and Hyperband (0.14 dropped them).
# torch 2.11.0 is the wheel the CUDA build pins (scripts/install-deps.sh); Optuna's GPSampler and
# HEBO need torch, and its CUDA libraries load lazily, so it runs on these GPU-less machines.
peers='
optuna   | optuna==5.0.0      | optuna==5.0.0 scipy==1.17.1 torch==2.11.0
ray      | ray==2.60.0        | ray[tune]==2.60.0
smac     | smac==2.4.1        | smac==2.4.1
hebo     | hebo==0.3.6        | hebo==0.3.6 numpy==1.24.4 scikit-learn==1.3.2 pandas==2.0.3 scipy==1.11.4 pymoo==0.6.0 catboost==1.2.5 torch==2.11.0 cython<3
synetune | syne_tune==0.13.0  | syne-tune[gpsearchers]==0.13.0
dehb     | dehb==0.1.2        | dehb==0.1.2
'

selected=("$@")
known=$(awk -F'|' 'NF == 3 {gsub(/ /, "", $1); print $1}' <<< "$peers")
for peer in "${selected[@]}"; do
  grep -qx "$peer" <<< "$known" || { echo "install.sh: unknown peer '$peer' (known: $(echo $known))" >&2; exit 2; }
done
((${#selected[@]})) || mapfile -t selected <<< "$known"

if ! command -v swig > /dev/null && [[ " ${selected[*]} " == *" smac "* ]]; then
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends swig
  else
    echo "install.sh: SMAC3 needs swig (apt-get install swig)" >&2
    exit 2
  fi
fi

installed_version() {  # venv, module: prints the module's version, or nothing
  "$1/bin/python" -c "import importlib.metadata as m; print(m.version('$2'))" 2>/dev/null || true
}

failed=()
for peer in "${selected[@]}"; do
  line=$(awk -F'|' -v p="$peer" '{n=$1; gsub(/ /, "", n)} n == p {print}' <<< "$peers")
  proof=$(awk -F'|' '{gsub(/ /, "", $2); print $2}' <<< "$line")
  read -r -a requirements <<< "$(awk -F'|' '{print $3}' <<< "$line")"
  venv=$dir/$peer
  if [ "$(installed_version "$venv" "${proof%%==*}")" = "${proof##*==}" ]; then
    echo "$peer: $proof already in $venv"
    continue
  fi
  echo "$peer: installing ${requirements[*]} into $venv"
  mkdir -p "$dir"
  "$python" -m venv --clear "$venv"
  "$venv/bin/pip" install -q --upgrade pip setuptools wheel
  if [ "$peer" = hebo ]; then
    # pymoo 0.6.0 (HEBO's exact pin) has no wheel for Python 3.11: build it against Cython 0.29
    # and numpy 1.24 first, so that pip does not backtrack into building old scikit-learns.
    "$venv/bin/pip" install -q "numpy==1.24.4" "cython<3"
    "$venv/bin/pip" install -q --no-build-isolation "pymoo==0.6.0"
  fi
  if "$venv/bin/pip" install -q "${requirements[@]}" &&
     [ "$(installed_version "$venv" "${proof%%==*}")" = "${proof##*==}" ]; then
    echo "$peer: ok ($proof)"
  else
    echo "$peer: FAILED to install ${requirements[*]}" >&2
    failed+=("$peer")
  fi
done

if ((${#failed[@]})); then
  echo "install.sh: not installed: ${failed[*]}" >&2
  exit 1
fi
