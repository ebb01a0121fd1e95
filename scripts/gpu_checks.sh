#!/usr/bin/env bash
# The GPU checks of the NCCL backend and `hvdbench --device gpu` (docs/nccl.md, "GPU
# checks"), in one command on a machine with an NVIDIA GPU, the CUDA toolkit, NCCL and MPI:
#
#   scripts/gpu_checks.sh [OUT_DIR]          # default OUT_DIR: gpu-checks/<date>-<host>
#
#   1. build with the NCCL backend (-DHVD_WITH_NCCL=ON) in $BUILD_DIR (default build-gpu),
#      CUDA architectures $CUDA_ARCHS (default: native, i.e. the GPUs of this machine);
#   2. ctest -L gpu at np = 1 (one GPU): every test must pass and none may be skipped;
#   3. compute-sanitizer: memcheck (with leak check) on hvd_nccl_gpu_tests and on an
#      hvdbench --device gpu run (verdict: scripts/sanitizer_verdict.py); racecheck,
#      synccheck and initcheck on the kernel tests; then hvd_gpu_microbench (kernels and
#      fusion copies against cudaMemcpy) and hvdbench --calibrate --device gpu;
#   4. hvdbench --device gpu collective sweeps, 1 MiB ... 256 MiB (x2), float32 sum, hvd
#      against ncclAllReduce called directly in the same run: at np = 1 and, when the
#      machine has more GPUs, at np = all of them; text and CSV (algbw/busbw) per run;
#      nccl-tests' all_reduce_perf on the same sizes when it is on PATH;
#   5. hvdbench --device gpu --model resnet50 (device gradients through NCCL).
#
# Everything goes to OUT_DIR: one log per step, the figures (*.txt, *.csv) and SUMMARY.txt.
# A failing step does not stop the others; the exit code is 1 when any step failed, 2 when
# this machine has no GPU or misses a tool. Knobs: BUILD_DIR, CUDA_ARCHS, JOBS (build
# parallelism, default nproc), ITERS (timed iterations per size, default 20), SKIP_BUILD=1
# (use the binaries already in BUILD_DIR, say a bundle of scripts/gpu_bundle.sh made on another
# machine: step 2 then runs the two GPU test programs directly instead of through ctest).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build-gpu}
CUDA_ARCHS=${CUDA_ARCHS:-native}
JOBS=${JOBS:-$(nproc)}
ITERS=${ITERS:-20}
OUT=${1:-gpu-checks/$(date +%Y%m%d-%H%M%S)-$(hostname -s)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin

die() { echo "gpu_checks: $*" >&2; exit 2; }
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver on this machine"
NGPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$NGPUS" -ge 1 ] || die "nvidia-smi lists no GPU"
command -v cmake >/dev/null || die "cmake not found"
command -v mpirun >/dev/null || die "mpirun not found (Open MPI)"
SANITIZER=$(command -v compute-sanitizer || true)

FAILED=()
SUMMARY=$OUT/SUMMARY.txt
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME COMMAND...: runs it with output in OUT/NAME.log, records PASS/FAIL.
step() {
  local name=$1
  shift
  echo "== $name: $*" | tee -a "$SUMMARY"
  if "$@" >"$OUT/$name.log" 2>&1; then
    note "   PASS ($name.log)"
  else
    note "   FAIL, exit $? ($name.log; last lines below)"
    tail -n 15 "$OUT/$name.log" | sed 's/^/   | /' | tee -a "$SUMMARY"
    FAILED+=("$name")
  fi
}

note "gpu_checks on $(hostname) at $(date -Is), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi -L | tee -a "$SUMMARY"
{ nvidia-smi; nvcc --version; } >"$OUT/environment.log" 2>&1

# 1. Build.
if [ "${SKIP_BUILD:-0}" = 1 ]; then
  note "== build: skipped (SKIP_BUILD=1), binaries from $BUILD_DIR"
else
step build bash -c "cmake -S '$ROOT' -B '$BUILD_DIR' -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DHVD_WITH_NCCL=ON -DHVD_WITH_GUI=OFF -DHVD_WITH_SIMGRID=OFF \
  -DCMAKE_CUDA_ARCHITECTURES='$CUDA_ARCHS' && cmake --build '$BUILD_DIR' -j$JOBS"
fi
HVDBENCH=$BUILD_DIR/bench/hvdbench/hvdbench
GPU_TESTS=$BUILD_DIR/tests/nccl/hvd_nccl_gpu_tests
if [[ " ${FAILED[*]-} " == *" build "* ]]; then
  note "build failed: nothing else can run"
  exit 1
fi
"$HVDBENCH" --help >/dev/null 2>&1 || die "$HVDBENCH does not run"

# 2. The GPU tests at np = 1: pass, and none skipped (a skip means the GPU was not usable).
no_skips() {
  local log rc t
  if [ "${SKIP_BUILD:-0}" = 1 ]; then
    rc=0
    log=""
    for t in "$GPU_TESTS" "$BUILD_DIR/tests/bench/hvd_bench_gpu_tests"; do
      log+=$("$t" 2>&1) || rc=1
      log+=$'\n'
    done
  else
    log=$(ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout 600 2>&1)
    rc=$?
  fi
  echo "$log"
  if grep -vE "TwoGpus" <<<"$log" | grep -qE '\(Skipped\)|No tests were found|\[  SKIPPED \] [^0-9]'; then
    echo "gpu_checks: GPU tests were skipped or not found: the GPU was not usable"
    return 1
  fi
  return "$rc"
}
step ctest_gpu no_skips
grep -E 'tests passed|tests failed out of|^\[  (PASSED|FAILED|SKIPPED) \]' "$OUT/ctest_gpu.log" | sort -u | sed 's/^/   /' | tee -a "$SUMMARY"

# 3. compute-sanitizer. memcheck's verdict comes from scripts/sanitizer_verdict.py: NCCL
#    2.28's communicator init probes kernels with cudaFuncGetAttributes and ignores the "no
#    kernel image" answers (4 per ncclCommInitRank on an H200); those API errors inside
#    libnccl are counted and reported, any other error fails the step.
sanitize() {
  local log=$OUT/$1.log
  shift
  "$SANITIZER" "$@" >"$log" 2>&1
  python3 "$ROOT/scripts/sanitizer_verdict.py" "$log"
}
if [ -n "$SANITIZER" ]; then
  step memcheck_gpu_tests_run sanitize memcheck_gpu_tests --tool memcheck --leak-check full \
    "$GPU_TESTS"
  step memcheck_hvdbench_run sanitize memcheck_hvdbench --tool memcheck --leak-check full \
    --target-processes all "$HVDBENCH" --device gpu --collective allreduce -b 1M -e 4M --check \
    -n 3 -w 1
  step racecheck_kernels "$SANITIZER" --tool racecheck --error-exitcode 3 "$GPU_TESTS" \
    --gtest_filter='DeviceKernels.*'
  step synccheck_kernels "$SANITIZER" --tool synccheck --error-exitcode 3 "$GPU_TESTS" \
    --gtest_filter='DeviceKernels.*'
  step initcheck_kernels "$SANITIZER" --tool initcheck --error-exitcode 3 "$GPU_TESTS" \
    --gtest_filter='DeviceKernels.*:NativeCollectivesOnGpu.*'
  grep -h 'ERROR SUMMARY' "$OUT"/*_run.log 2>/dev/null | sed 's/^/   /' | tee -a "$SUMMARY"
  grep -H 'ERROR SUMMARY' "$OUT"/*check_kernels.log 2>/dev/null | sed "s|$OUT/|   |" | tee -a "$SUMMARY"
else
  note "== compute-sanitizer not found (it ships with the CUDA toolkit): step 3 NOT RUN"
  FAILED+=(compute-sanitizer-missing)
fi

# 3b. Device work against cudaMemcpy (of_memcpy: target >= 0.8 for the kernels past the L2)
#     and the calibration hvdsim reads (copy / reduce rates of this GPU).
MICROBENCH=$BUILD_DIR/bench/microbench/hvd_gpu_microbench
if [ -x "$MICROBENCH" ]; then
  step gpu_microbench "$MICROBENCH" --benchmark_out="$OUT/gpu_microbench.json" \
    --benchmark_out_format=json --benchmark_min_time=0.2
  grep -E '^BM_' "$OUT/gpu_microbench.log" | grep -E '536870912|FusionCopy' | sed 's/^/   /' | tee -a "$SUMMARY"
else
  note "== $MICROBENCH not built (Google Benchmark missing?): no kernel figures"
fi
step calibrate_gpu "$HVDBENCH" --calibrate "$OUT/calibration_gpu.json" --device gpu
grep -E '^device' "$OUT/calibrate_gpu.log" | sed 's/^/   /' | tee -a "$SUMMARY"

# 4. Collective sweeps: text as printed, and CSV of the data rows.
to_csv() {
  echo "bytes,count,type,redop,hvd_us,hvd_algbw_GBps,hvd_busbw_GBps,hvd_wrong,nccl_us,nccl_algbw_GBps,nccl_busbw_GBps,nccl_wrong,nccl_over_hvd_pct"
  grep -v '^#' "$1" | awk 'NF >= 13 { $1 = $1; gsub(/ /, ","); print }'
}
sweep() {
  local np=$1
  local txt=$OUT/allreduce_gpu_np$np.txt
  "$HVDBENCH" --device gpu --collective allreduce -np "$np" -b 1M -e 256M -f 2 --check \
    -n "$ITERS" -w 5 | tee "$txt" || return 1
  to_csv "$txt" >"${txt%.txt}.csv"
  grep -q 'Out of bounds values : 0 OK' "$txt"
}
step sweep_np1 sweep 1
[ "$NGPUS" -ge 2 ] && step "sweep_np$NGPUS" sweep "$NGPUS"
for f in "$OUT"/allreduce_gpu_np*.txt; do
  [ -f "$f" ] && { echo "   $(basename "$f"):"; grep -E '^ +[0-9]|Avg bus' "$f" | sed 's/^/   /'; } |
    tee -a "$SUMMARY"
done
if command -v all_reduce_perf >/dev/null; then
  step nccl_tests_all_reduce_perf all_reduce_perf -b 1M -e 256M -f 2 -g "$NGPUS" -n "$ITERS"
else
  note "== all_reduce_perf (nccl-tests) not on PATH: no nccl-tests column (optional)"
fi

# 5. Model mode on device tensors.
step model_resnet50_np1 "$HVDBENCH" --device gpu --model resnet50 --warmup 1 --steps 5 \
  --report "$OUT/model_resnet50_np1.json"
[ "$NGPUS" -ge 2 ] && step "model_resnet50_np$NGPUS" "$HVDBENCH" --device gpu --model resnet50 \
  -np "$NGPUS" --warmup 1 --steps 5 --report "$OUT/model_resnet50_np$NGPUS.json"

if [ ${#FAILED[@]} -gt 0 ]; then
  note "gpu_checks: FAILED: ${FAILED[*]} (figures and logs in $OUT)"
  exit 1
fi
note "gpu_checks: all passed (figures and logs in $OUT)"
