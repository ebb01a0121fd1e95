#!/usr/bin/env bash
# Set up, build, and run the whole test suite (unit, MPI, simulator, GUI, bench, validation).
# Before the run it checks that every part the README promises was built (hvdsim, hvdbench,
# hvdview) and that every test label has tests; after it, that no test was skipped except
# those that need a GPU. Extra arguments go to ctest (e.g. -L sim); the checks still run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export QT_QPA_PLATFORM=offscreen OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
/usr/bin/python3 scripts/check_suite.py parts build
junit=build/ctest-results.xml
rm -f "$junit"
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 600 --output-junit "$PWD/$junit" "$@"
/usr/bin/python3 scripts/check_suite.py skips build "$junit"
