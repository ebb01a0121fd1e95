#!/usr/bin/env bash
# Usage: expect_fail.sh PATTERN CMD...: runs CMD, passes when it exits non-zero and its
# output matches PATTERN (grep -E): an error path that ends with a clear message.
set -u
pattern=$1; shift
out=$("$@" 2>&1); rc=$?
echo "$out" | tail -40
[ "$rc" -ne 0 ] || { echo "FAIL: exit 0"; exit 1; }
echo "$out" | grep -qE "$pattern" || { echo "FAIL: output lacks /$pattern/"; exit 1; }
echo "PASS (exit $rc)"
