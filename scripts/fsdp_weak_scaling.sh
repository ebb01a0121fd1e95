#!/usr/bin/env bash
# Predicted weak scaling of sharded Llama-3 training: one 8,192-token sequence a GPU, bf16,
# 8 to 128 GPUs, on DGX H100 and DGX B200 pods (NCCL), for each sharding mode. Prints one
# line per run: scenario, model, mode, np, tokens/s per GPU, scaling efficiency, step and
# exposed communication. The runtime runs event driven (cycle_time_ms 0): PyTorch calls NCCL
# as each unit needs it, with no negotiation cycle.
#
#   scripts/fsdp_weak_scaling.sh HVDSIM [MODELS] [MODES]
#   e.g. scripts/fsdp_weak_scaling.sh build/simulator/hvdsim "llama3-8b llama3-70b" "fsdp hsdp none"
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/fsdp_weak_scaling.sh HVDSIM [MODELS] [MODES]" >&2; exit 2; }
hvdsim=$(realpath "$1"); models=${2:-"llama3-8b llama3-70b"}; modes=${3:-"fsdp hsdp none"}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf "%-9s %-11s %-5s %5s %12s %6s %9s %12s\n" scenario model mode np tok/s/GPU eff% step_s exposed_s
for scenario in dgx_h100 dgx_b200; do
  for model in $models; do
    for mode in $modes; do
      "$hvdsim" "scenarios/$scenario.json" -q --set cluster.nodes=16 --set 'sweep.np=[8,16,32,64,128]' \
        --set "workload.models=[\"$model\"]" --set workload.precision=bf16 --set workload.seq_len=8192 \
        --set workload.batch_size=1 --set workload.sharding="$mode" --set runtime.cycle_time_ms=0 --report "$tmp/r.json" > /dev/null
      python3 - "$tmp/r.json" "$scenario" "$model" "$mode" <<'PY'
import json, sys
rep, sc, model, mode = sys.argv[1:]
for r in json.load(open(rep))["runs"]:
    if r["np"] < 8: continue
    print(f'{sc:9} {model:11} {mode:5} {r["np"]:5} {r["tokens_per_sec"] / r["np"]:12.1f} '
          f'{100 * r["scaling_efficiency"]:6.1f} {r["step_time_s"]:9.3f} {r["exposed_comm_s"]:12.4f}')
PY
    done
  done
done
