#!/usr/bin/env bash
# Usage: run_killed_rank.sh MPIEXEC NP PROGRAM JSON_CHECK
# Passes when the job ends (non-zero) well before the ctest timeout, every rank's timeline,
# including the killed rank's, parses, and every surviving rank that reports its failure
# names the peer it lost ("... rank N ..."), never a bare "transfer timed out".
set -u
mpiexec=$1 np=$2 prog=$3 check=$4
dir=$(mktemp -d)
export HVD_TIMELINE=$dir/timeline.json HVD_STALL_CHECK_TIME_SECONDS=1 HVD_STALL_SHUTDOWN_TIME_SECONDS=3
start=$(date +%s)
log=$(mktemp)
timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" "$prog" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
elapsed=$(( $(date +%s) - start ))
echo "job exit code $rc after ${elapsed}s"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then echo "FAIL: expected a failed job, not exit $rc"; exit 1; fi
files=("$dir"/timeline*.json)
[ "${#files[@]}" -eq "$np" ] || { echo "FAIL: expected $np timeline files, got ${#files[@]}"; exit 1; }
"$check" "${files[@]}" || { echo "FAIL: a timeline does not parse"; exit 1; }
# "rank 0: step 5 failed as expected: Timeout: <message>": the message must name a rank.
unnamed=$(grep "failed as expected" "$log" | sed 's/.*failed as expected: //' | grep -vE "rank [0-9]+" || true)
[ -z "$unnamed" ] || { echo "FAIL: a failure names no peer: $unnamed"; exit 1; }
rm -f "$log"
rm -rf "$dir"
echo PASS
