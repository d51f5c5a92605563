#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, MPI, deployment) with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build --output-on-failure --timeout 900 -j "$(nproc)"
