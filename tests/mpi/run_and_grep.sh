#!/usr/bin/env bash
# Usage: run_and_grep.sh PATTERN CMD...: runs CMD, passes when it exits 0 and its output
# matches PATTERN (grep -E).
set -u
pattern=$1; shift
out=$("$@" 2>&1); rc=$?
echo "$out" | tail -40
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
echo "$out" | grep -qE "$pattern" || { echo "FAIL: output lacks /$pattern/"; exit 1; }
echo PASS
