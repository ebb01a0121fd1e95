#!/usr/bin/env bash
# `pip install .` as a Python user runs it: a fresh venv of Debian's python3, the source tree
# installed with pip (scikit-build-core driving CMake, build isolation on), then hvdrun from
# the venv's PATH: --check-build lists the frameworks the build found, and a two-rank job
# runs hvd.torch and hvd.tensorflow from the installed package (not the build tree).
#   pip_install_test.sh SOURCE_DIR FRAMEWORK_PYTHON
# FRAMEWORK_PYTHON is the interpreter whose site-packages hold torch and tensorflow; the
# fresh venv sees them through a .pth file instead of copying several GB.
set -euo pipefail
src=$1 fw_python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv "$work/venv"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$fw_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/hvd_test_frameworks.pth"
# NCCL off: nvcc would add minutes to the suite; the CUDA path is built by the main build.
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$src" \
  --config-settings=build-dir="$work/build" --config-settings=cmake.define.HVD_WITH_NCCL=OFF >"$work/pip.log" 2>&1 ||
  { tail -30 "$work/pip.log"; echo "pip install failed"; exit 1; }
export PATH="$work/venv/bin:$PATH"
cd "$work"
[ "$(command -v hvdrun)" = "$work/venv/bin/hvdrun" ] || { echo "hvdrun is not the venv's: $(command -v hvdrun)"; exit 1; }
check=$(hvdrun --check-build)
echo "$check"
for fw in PyTorch TensorFlow; do
  echo "$check" | grep -qF "[X] $fw" || { echo "--check-build does not list $fw"; exit 1; }
done
cat >job.py <<'PY'
import hvd, hvd.torch as hvd_torch, torch
assert "/venv/" in hvd.__file__, hvd.__file__
hvd_torch.init()
t = hvd_torch.allreduce(torch.full((3,), float(hvd_torch.rank() + 1)), op=hvd_torch.Sum)
print(f"rank {hvd_torch.rank()}: torch sum {t.tolist()}", flush=True)
assert t.tolist() == [3.0, 3.0, 3.0]
import hvd.tensorflow as hvd_tf, tensorflow as tf
assert "/venv/" in hvd_tf.__file__, hvd_tf.__file__
hvd_tf.init()
s = hvd_tf.allreduce(tf.fill([2], float(hvd_tf.rank() + 1)), op=hvd_tf.Sum)
print(f"rank {hvd_tf.rank()}: tensorflow sum {s.numpy().tolist()}", flush=True)
assert s.numpy().tolist() == [3.0, 3.0]
PY
out=$(hvdrun -np 2 python job.py)
echo "$out"
# Counted as matches, not lines: two ranks' output may share a line on the way through mpirun.
[ "$(echo "$out" | grep -o 'torch sum \[3.0, 3.0, 3.0\]' | wc -l)" = 2 ] || { echo "hvdrun -np 2: not both ranks' torch sum"; exit 1; }
[ "$(echo "$out" | grep -o 'tensorflow sum \[3.0, 3.0\]' | wc -l)" = 2 ] || { echo "hvdrun -np 2: not both ranks' tensorflow sum"; exit 1; }
echo "pip install: ok"
