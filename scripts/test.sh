#!/usr/bin/env bash
# Set up, build, and run the whole test suite (unit, MPI, simulator, GUI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export QT_QPA_PLATFORM=offscreen OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 600 "$@"
