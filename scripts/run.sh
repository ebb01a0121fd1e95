#!/usr/bin/env bash
# Quick start: set up, build, and run the main job. Extra arguments go to the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/simulator/hvdsim scenarios/roce25.json "$@"
