#!/usr/bin/env bash
# The first hour of a new user, automated: clone this repository (its committed HEAD) into
# a temporary directory, run the README's two commands there, and check the parts.
#
#   scripts/fresh_check.sh [--keep] [--branch B] [--fresh-venv]
#
# 1. ./scripts/run.sh  (set up, build, hvdsim scenarios/roce25.json): must exit 0 and print
#    the scaling table;
# 2. ./scripts/test.sh (set up, build, the whole suite): must exit 0; it checks the parts
#    (hvdsim, hvdbench, hvdrun, hvdview, the python module), the test labels and that only GPU tests skipped.
# Prints a summary. The clone has no ../shared beside it, as a new user's has none.
# --fresh-venv: the Python environment (torch, tensorflow; scripts/setup.sh) is made anew in
# the temporary directory instead of reusing $HVD_VENV, as on a new machine (pip's download
# cache still serves the wheels it holds).
# Exit 0 when everything held, 1 otherwise. --keep leaves the clone for inspection.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
keep=0
branch=""
fresh_venv=0
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --branch) branch="$2"; shift ;;
    --fresh-venv) fresh_venv=1 ;;
    *) echo "fresh_check: unknown argument '$1' (use --keep, --branch B, --fresh-venv)" >&2; exit 2 ;;
  esac
  shift
done
tmp=$(mktemp -d /tmp/hvdsim-fresh.XXXXXX)
[ "$keep" -eq 1 ] || trap 'rm -rf "$tmp"' EXIT
git clone -q ${branch:+--branch "$branch"} "$src" "$tmp/hvdsim"
cd "$tmp/hvdsim"
[ "$fresh_venv" -eq 1 ] && export HVD_VENV="$tmp/venv"
echo "fresh_check: clone of $(git rev-parse --short HEAD) in $tmp/hvdsim"

status=0
t0=$(date +%s)
if ./scripts/run.sh >"$tmp/run.log" 2>&1 && grep -qE "^vgg16 +512 " "$tmp/run.log"; then
  echo "fresh_check: run.sh ok ($(( $(date +%s) - t0 )) s including the build)"
  grep -E "^(resnet101|inception3|vgg16) +512 " "$tmp/run.log" | sed 's/^/  /' || true
else
  echo "fresh_check: run.sh FAILED; last lines:"; tail -20 "$tmp/run.log"; status=1
fi
grep -E "hvdsim parts|disabled" build.configure.log | sed 's/^/  configure: /' || true

t0=$(date +%s)
if ./scripts/test.sh >"$tmp/test.log" 2>&1; then
  echo "fresh_check: test.sh ok ($(( $(date +%s) - t0 )) s)"
else
  echo "fresh_check: test.sh FAILED; last lines:"; tail -40 "$tmp/test.log"; status=1
fi
grep -E "^check_suite:|tests passed|tests failed" "$tmp/test.log" | sed 's/^/  /' || true
[ "$keep" -eq 1 ] && echo "fresh_check: logs in $tmp (run.log, test.log)"
exit $status
