#!/usr/bin/env bash
# Usage: killed_rank_timeline.sh MPIEXEC HVDBENCH JSON_CHECK MODE
# hvdbench (MODE model or collective) at np 3 under mpirun --enable-recovery: once the run is
# under way one rank is SIGKILLed. Passes when the survivors leave (the stall shutdown time,
# not a hang), every rank's timeline parses, and the survivors' timelines hold the events
# recorded before the kill (they were written as the run went, not only at a clean end).
set -u
mpiexec=$1 bench=$2 check=$3 mode=$4
dir=$(mktemp -d)
tag="killed-timeline-$$"
if [ "$mode" = model ]; then
  args=(--model resnet50 --steps 1000 --no-baseline --label "$tag")
  under_way="training step 2/"
else
  # Collective mode has no --label: the timeline path (a fresh temporary directory) tags it.
  tag=$dir/t.json
  args=(--collective allreduce -b 64K -e 64M -f 2 -n 200 -w 1 --timeline-filename "$tag")
  under_way="hvdbench --collective"
fi
export HVD_TIMELINE=$dir/t.json HVD_STALL_CHECK_TIME_SECONDS=1 HVD_STALL_SHUTDOWN_TIME_SECONDS=3
log=$dir/log
timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe --enable-recovery -x HVD_TIMELINE \
  -x HVD_STALL_CHECK_TIME_SECONDS -x HVD_STALL_SHUTDOWN_TIME_SECONDS -np 3 "$bench" "${args[@]}" >"$log" 2>&1 &
job=$!
# Under way: the progress line (model mode) or the first table row, and a timeline flushed.
for _ in $(seq 600); do
  grep -q "$under_way" "$log" 2>/dev/null && [ "$(stat -c %s "$dir/t.json" 2>/dev/null || echo 0)" -gt 100 ] && break
  sleep 0.1
done
sleep 1
victim=$(pgrep -f -- "$tag" | xargs -r ps -o pid=,comm= -p | awk '$2 == "hvdbench" { print $1 }' | sed -n 2p)
[ -n "$victim" ] || { echo "FAIL: no rank to kill"; cat "$log"; exit 1; }
kill -9 "$victim"
wait "$job"
rc=$?
[ "$rc" -ne 124 ] || { echo "FAIL: the survivors did not leave (timeout)"; tail -20 "$log"; exit 1; }
files=("$dir"/t*.json)
[ "${#files[@]}" -eq 3 ] || { echo "FAIL: expected 3 timeline files, got ${#files[@]}"; exit 1; }
"$check" "${files[@]}" || { echo "FAIL: a timeline does not parse"; exit 1; }
with_events=0
for f in "${files[@]}"; do
  n=$(grep -c '"ph"' "$f" || true)
  echo "$(basename "$f"): $n events"
  [ "$n" -gt 10 ] && with_events=$((with_events + 1))
done
[ "$with_events" -ge 2 ] || { echo "FAIL: fewer than the 2 survivors' timelines hold events"; exit 1; }
grep -E "may have died|did not answer|rank [0-9]" "$log" | head -3
rm -rf "$dir"
echo PASS
