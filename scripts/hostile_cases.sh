#!/usr/bin/env bash
# The hostile-input and fault cases of the reliability runs, each run as a user would: prints
# one Markdown row per case with the exit code, the wall time and the first line the tool
# printed on stderr (or what the case checks). A validation script: it prints figures, and
# "expect" says what the case must give; a row whose outcome differs is marked MISMATCH.
#
#   scripts/hostile_cases.sh [BUILD_DIR]      (default build; run from the repository root)
set -u
build=${1:-build}
sim=$build/simulator/hvdsim
bench=$build/bench/hvdbench/hvdbench
run=$build/bench/hvdbench/hvdrun
view=$build/gui/hvdview
export QT_QPA_PLATFORM=offscreen OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
export XDG_RUNTIME_DIR=$tmp/xdg  # Qt's one warning about it is not the tool's line
mkdir -m 700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$tmp"' EXIT

echo "| case | exit | time | first line / outcome | expect |"
echo "|---|---:|---:|---|---|"

# row NAME EXPECTED_EXIT CMD...: runs CMD (60 s limit), prints its exit code, time and first
# stderr line (stdout when stderr is empty).
row() {
  local name=$1 want=$2
  shift 2
  local t0 t1 rc line
  t0=$(date +%s.%N)
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  t1=$(date +%s.%N)
  line=$(grep -v -e '^\s*$' -e 'propagateSizeHints' "$tmp/err" | head -1)
  [ -n "$line" ] || line=$(grep -v '^\s*$' "$tmp/out" | head -1)
  line=${line//|/\\|}
  local mark=""
  [ "$rc" = "$want" ] || mark=" MISMATCH"
  printf '| %s | %s | %.2f s | %s | %s%s |\n' "$name" "$rc" "$(echo "$t1 - $t0" | bc)" "${line:0:200}" "$want" "$mark"
}

mkdir -p "$tmp/dir"
mkfifo "$tmp/fifo"
row "hvdsim --merge DIR (a directory)" 2 "$sim" --merge "$tmp/dir" --report "$tmp/m.json"
row "hvdsim --merge FIFO" 2 "$sim" --merge "$tmp/fifo" --report "$tmp/m.json"
row "hvdbench --model FIFO" 2 "$bench" --model "$tmp/fifo" -np 1
row "hvdbench --model /dev/zero" 2 "$bench" --model /dev/zero -np 1
row "hvdview FIFO --export-chart" 2 "$view" "$tmp/fifo" --export-chart "$tmp/c.png"

# Reports hvdview must refuse or draw: a figure of 1e400, a 100 KB label, 10,000 runs.
python3 - "$tmp" <<'EOF'
import json, sys
d = sys.argv[1]
base = json.load(open("tests/gui/data/report_small.json"))
big = dict(base); big["runs"] = [dict(base["runs"][0])]
big["runs"][0]["images_per_sec"] = "@INF@"
open(d + "/inf.json", "w").write(json.dumps(big).replace('"@INF@"', "1e400"))
lab = dict(base); lab["runs"] = [dict(r, label="x" * 100000) for r in base["runs"]]
json.dump(lab, open(d + "/label.json", "w"))
many = dict(base); many["runs"] = [dict(base["runs"][i % len(base["runs"])], label="run%d" % i) for i in range(10000)]
json.dump(many, open(d + "/many.json", "w"))
EOF
row "hvdview report with 1e400 --export-chart" 2 "$view" "$tmp/inf.json" --export-chart "$tmp/c.png"
row "hvdview report with a 100 KB label --export-chart" 0 "$view" "$tmp/label.json" --export-chart "$tmp/c.png"
row "hvdview --export-chart of 10,000 runs" 0 "$view" "$tmp/many.json" --export-chart "$tmp/c.png"

row "hvdsim --collective allreduce -e 1000000TiB" 2 "$sim" scenarios/roce25.json --collective allreduce -e 1000000TiB
row "hvdsim --collective allreduce -b 8G -e 8G (np 8)" 0 "$sim" scenarios/roce25.json --collective allreduce --np 8 -b 8G -e 8G
row "hvdbench --batch-size 1000000000" 2 "$bench" --model resnet50 -np 1 --batch-size 1000000000
row "hvdbench --compute-scale 1e12" 2 "$bench" --model resnet50 -np 1 --compute-scale 1e12

# Traces of 50,000 and 200,000 tensors, one step: time and memory linear in the tensors.
for n in 50000 200000; do
  python3 - "$tmp" "$n" <<'EOF'
import json, sys
n = int(sys.argv[2])
t = {"name": "many", "reference_gpu": "P100", "reference_batch": 8, "step_s": 0.1,
     "tensors": [{"name": "g%d" % i, "elements": 4, "dtype": "float32", "ready_s": 0.05} for i in range(n)]}
json.dump(t, open(sys.argv[1] + "/many_tensors.json", "w"))
EOF
  /usr/bin/time -f "%M %e" -o "$tmp/rss" env HVD_CYCLE_TIME=5 "$bench" --model "$tmp/many_tensors.json" -np 1 --steps 1 --warmup 0 --no-baseline -q >/dev/null 2>"$tmp/err_many"
  rc=$?
  read -r kb secs <"$tmp/rss"
  printf '| hvdbench trace of %s tensors (1 step) | %s | %s s | peak RSS %s MB %s | 0 |\n' "$n" "$rc" "$secs" "$(( kb / 1024 ))" "$(head -1 "$tmp/err_many" | cut -c1-120)"
done

# Reports whose CSV cannot be written: a directory in the CSV's place. Both tools refuse it
# before running (exit 2); the earlier report must survive and no empty file may be left.
mkdir -p "$tmp/rep" "$tmp/rep/r.csv"
echo '{"earlier": true}' >"$tmp/rep/r.json"
row "hvdsim --report r.json, r.csv unwritable" 2 "$sim" scenarios/roce25.json --set 'sweep.np=[8]' --set 'workload.models=["resnet101"]' -q --report "$tmp/rep/r.json"
printf '| ... the earlier r.json | | | %s | kept |\n' "$(cat "$tmp/rep/r.json")"
row "hvdbench --report r.json, r.csv unwritable" 2 "$bench" --model resnet50 -np 1 --steps 2 --warmup 1 --no-baseline -q --report "$tmp/rep/r.json"
printf '| ... the earlier r.json | | | %s | kept |\n' "$(cat "$tmp/rep/r.json")"
# A run that fails after it started (a 1 Kbps network: the simulation hits its time limit).
row "hvdsim run failing after start, --report new.json" 2 "$sim" scenarios/roce25.json -q --set cluster.network.bandwidth=1Kbps --set 'sweep.np=[8]' --set 'workload.models=["resnet101"]' --report "$tmp/rep/new.json"
printf '| ... new.json left behind | | | %s | none |\n' "$(ls "$tmp/rep" | grep -c new || true) file(s)"

row "hvdrun -np 2 -H bad:host true" 2 "$run" -np 2 -H bad:host true
row "hvdrun -np 2 -H nosuchhost.invalid:2 true" 2 "$run" -np 2 -H nosuchhost.invalid:2 true
row "hvdrun -np 2 -H localhost:0 true" 2 "$run" -np 2 -H localhost:0 true
row "hvdbench -np 2 -H nosuchhost.invalid:2" 2 "$bench" -np 2 -H nosuchhost.invalid:2 --model resnet50
row "hvdrun (no command)" 2 "$run"
row "hvdrun --frobnicate" 2 "$run" --frobnicate true
row "hvdrun -np 2 sh -c 'exit 3' (a rank fails)" 3 "$run" -np 2 sh -c 'exit 3'
row "hvdsim -q on a 1 Kbps network (lines on stderr: see next row)" 2 "$sim" scenarios/roce25.json -q --set cluster.network.bandwidth=1Kbps --set 'sweep.np=[8]' --set 'workload.models=["resnet101"]'
printf '| ... stderr lines | | | %s | a few |\n' "$(wc -l <"$tmp/err")"

# A fat tree of one server a leaf (SimGrid aborted routing to a leaf switch placed in the leaf).
row "hvdsim fat_tree, 1 server a leaf" 0 "$sim" scenarios/fattree_2to1.json -q --set 'sweep.np=[8]' --set cluster.network.servers_per_switch=1
# The report path is the scenario the run reads; a symbolic link is written through.
cp scenarios/dgx_a100.json "$tmp/sc.json"
row "hvdsim --report SCENARIO (the input)" 2 "$sim" "$tmp/sc.json" --collective allreduce -b 1M -e 1M --np 16 -q --report "$tmp/sc.json"
ln -s target.json "$tmp/rep/link.json"
row "hvdsim --report link.json (a symbolic link)" 0 "$sim" scenarios/dgx_a100.json --collective allreduce -b 1M -e 1M --np 16 -q --report "$tmp/rep/link.json"
printf '| ... link.json a link, target.json the report | | | %s | link, report |\n' "$([ -L "$tmp/rep/link.json" ] && echo link), $(grep -c '"collective"' "$tmp/rep/target.json" 2>/dev/null || echo none)"
row "hvdsim NCCL scenario with an oversubscribed fat tree" 2 "$sim" scenarios/dgx_h100.json --set cluster.nodes=2 --collective allreduce --raw-only --set cluster.network.topology=fat_tree --set cluster.network.oversubscription=2
