#!/usr/bin/env bash
# Quick start: set up, build, and run the main job. Extra arguments go to the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -x build/simulator/hvdsim ]; then
  exec build/simulator/hvdsim scenarios/roce25.json "$@"
fi
# Until the simulator is built: the allreduce benchmark on this machine.
exec build/bench/hvdbench/hvdbench --collective allreduce -np 2 -b 4K -e 128M "$@"
