#!/usr/bin/env bash
# The main job on one machine: installs what is missing (only what the main job needs), builds
# `hpo` alone (tests and benchmarks belong to scripts/test.sh), and runs the quickstart sweep
# (configs/quickstart.yaml: Fashion-MNIST, 2 ranks per trial) with mpirun on this machine's cores,
# at least 4 ranks. Prints where the study file and its HTML report are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --main
scripts/build.sh --main

cores=$(nproc)
ranks=$(( cores / 2 * 2 ))
(( ranks >= 4 )) || ranks=4
output=${HPO_OUTPUT:-runs/quickstart-$(date +%Y%m%d-%H%M%S)}

mpirun_args=(--oversubscribe -np "$ranks")
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
mpirun "${mpirun_args[@]}" build/hpo sweep --config configs/quickstart.yaml --output "$output"
echo
# The sweep itself leaves the final OUTPUT/report.html (kept current while it ran).
build/hpo report "$output/study.h5" --top 5
echo
echo "study file: $(realpath "$output/study.h5")"
echo "report (open in a browser): $(realpath "$output/report.html")"
