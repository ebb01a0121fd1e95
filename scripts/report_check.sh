#!/usr/bin/env bash
# The byte-for-byte check of a step that must not change behaviour: runs every shipped
# scenario below 4,096 GPUs (and a --with-data run and a collective sweep) with an hvdsim
# binary, writes each report (JSON, CSV, stdout) under OUT, and, given a REFERENCE directory
# written the same way by another binary, compares every file byte for byte.
#
#   scripts/report_check.sh HVDSIM OUT [REFERENCE]
#
# e.g. build the old commit in a worktree, run it into /tmp/before, then the new binary into
# /tmp/after with /tmp/before as the reference. Exit 1 when any file differs.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/report_check.sh HVDSIM OUT [REFERENCE]" >&2; exit 2; }
hvdsim=$(realpath "$1"); out=$2; ref=${3:-}
cd "$(dirname "$0")/.."
mkdir -p "$out"
for s in roce25 tcp25 tcp100 h100_ib400 whatif_straggler autotune_tcp10 localhost fattree_2to1; do
  "$hvdsim" "scenarios/$s.json" -q --report "$out/$s.json" > "$out/$s.txt"
done
"$hvdsim" scenarios/roce25.json -q --with-data --set 'sweep.np=[1,2,4,8]' --report "$out/withdata.json" > "$out/withdata.txt"
"$hvdsim" scenarios/h100_ib400.json -q --collective allreduce --np 16 -b 8 -e 64M -f 8 > "$out/coll.txt"
[ -n "$ref" ] || exit 0
differ=0
for f in "$ref"/*; do
  b=$(basename "$f")
  [ -e "$out/$b" ] || { echo "not run here: $b"; continue; }
  if cmp -s "$f" "$out/$b"; then echo "same $b"; else echo "DIFF $b"; differ=1; fi
done
exit $differ
