#!/usr/bin/env bash
# The soak (not in the test suite): np 3 under Open MPI's mpirun and under hvdrun --tcp, each
# for MINUTES (default 30), random sizes, dtypes and operations with fusion on; every result
# is checked and rank 0 prints the RSS of every rank once a minute (bench/soak/soak_rank.py).
#
#   scripts/soak.sh [MINUTES] [BUILD_DIR]
#
# Needs the build's python package (BUILD_DIR/python, default build) and hvdrun, and the
# venv's python (HVD_PYTHON, default $HOME/.cache/hvdsim/venv/bin/python). Exit 0 when both
# runs checked every result right.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
build=${2:-build}
python=${HVD_PYTHON:-$HOME/.cache/hvdsim/venv/bin/python}
export PYTHONPATH="$PWD/$build/python${PYTHONPATH:+:$PYTHONPATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Fusion stays on at its default threshold (128 MiB) unless HVD_FUSION_THRESHOLD says otherwise.
export HVD_STALL_CHECK_TIME_SECONDS=60 HVD_STALL_SHUTDOWN_TIME_SECONDS=120  # a hang ends the run
every=$(awk -v m="$minutes" 'BEGIN { print (m < 10 ? 30 : 60) }')
status=0
echo "soak: $minutes min each, np 3, fusion threshold ${HVD_FUSION_THRESHOLD:-default}"
mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np 3 \
  "$python" bench/soak/soak_rank.py --minutes "$minutes" --report-every "$every" --launcher mpirun || status=1
"$build/bench/hvdbench/hvdrun" --tcp -np 3 \
  "$python" bench/soak/soak_rank.py --minutes "$minutes" --report-every "$every" --launcher hvdrun-tcp || status=1
exit $status
