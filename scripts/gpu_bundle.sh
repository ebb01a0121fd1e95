#!/usr/bin/env bash
# Pack the GPU checks' binaries, built here, for a GPU machine that has the CUDA driver and NCCL
# but no Open MPI, GoogleTest or CMake build of this project (say a lent cloud GPU):
#
#   scripts/gpu_bundle.sh [BUILD_DIR [BUNDLE_DIR]]    # defaults: build-gpu, .gpu
#
# BUILD_DIR must be a build with -DHVD_WITH_NCCL=ON (scripts/gpu_checks.sh's step 1 makes one:
# cmake ... -DHVD_WITH_NCCL=ON -DCMAKE_CUDA_ARCHITECTURES=90 for Hopper). BUNDLE_DIR gets:
#   build/...      hvdbench, hvd_gpu_microbench, hvd_nccl_gpu_tests, hvd_bench_gpu_tests, at
#                  their places in BUILD_DIR's layout (stripped);
#   mpilib/        the shared libraries they and Open MPI's components need, except glibc's,
#                  libstdc++/libgcc and CUDA's (the GPU machine's own are used: NCCL is 200 MB);
#   openmpi.tar    Open MPI's own files (mpirun, orted, components, help texts, configuration)
#                  at their absolute paths, to unpack at / on the GPU machine (as root);
#   env.sh         sourced there: unpacks openmpi.tar once, sets LD_LIBRARY_PATH (bundle, then
#                  CUDA's, then the NCCL that pip's nvidia-nccl package installed, if any).
# On the GPU machine: `. BUNDLE_DIR/env.sh && SKIP_BUILD=1 BUILD_DIR=BUNDLE_DIR/build
# scripts/gpu_checks.sh OUT`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-gpu}
BUNDLE=${2:-.gpu}
BINS=(bench/hvdbench/hvdbench bench/microbench/hvd_gpu_microbench tests/nccl/hvd_nccl_gpu_tests
  tests/bench/hvd_bench_gpu_tests)
for b in "${BINS[@]}"; do
  [ -x "$BUILD_DIR/$b" ] || { echo "gpu_bundle: $BUILD_DIR/$b missing: build with -DHVD_WITH_NCCL=ON first" >&2; exit 2; }
done
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/mpilib"
for b in "${BINS[@]}"; do
  mkdir -p "$BUNDLE/build/$(dirname "$b")"
  strip -o "$BUNDLE/build/$b" "$BUILD_DIR/$b"
done
OMPI_COMPONENTS=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
skip='/lib(c|m|gcc_s|stdc\+\+|dl|pthread|rt|cudart|nccl|cuda)\.so'
{
  for b in "${BINS[@]}"; do ldd "$BUILD_DIR/$b"; done
  ldd "$OMPI_COMPONENTS"/*.so /usr/bin/orted /usr/bin/orterun 2>/dev/null
} | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | grep -vE "$skip" |
  while read -r lib; do cp -L "$lib" "$BUNDLE/mpilib/"; done
pkgs="libopenmpi3 openmpi-bin openmpi-common libpmix2"
dpkg -L $pkgs | grep -vE '^/usr/share/(doc|man|lintian)' | while read -r f; do
  [ -f "$f" ] || [ -L "$f" ] && echo "$f"
done | sed 's|^/||' >"$BUNDLE/openmpi.files"
tar -C / -cf "$BUNDLE/openmpi.tar" -T "$BUNDLE/openmpi.files"
cat >"$BUNDLE/env.sh" <<'EOF'
# Sourced on the GPU machine (see scripts/gpu_bundle.sh).
_b=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x /usr/bin/orted ] || tar -C / -xf "$_b/openmpi.tar"
_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$_b/mpilib:/usr/local/cuda/lib64:/usr/local/cuda/lib${_nccl:+:$_nccl}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A singleton (a program started without mpirun) runs without an orted: that machine may have
# its own PMIx, which Open MPI's components from here do not link against.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_ess_singleton_isolated=1
export PATH=$PATH:/usr/local/cuda/bin
EOF
du -sh "$BUNDLE"
