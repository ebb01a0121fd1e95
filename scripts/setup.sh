#!/usr/bin/env bash
# Installs what is missing (Debian bookworm, as root), then configures and builds hvdsim
# into ./build. Safe to run again: installed packages are skipped, the build is incremental.
# Every part the README promises is required (HVD_REQUIRE_ALL): configuring fails loudly,
# naming the package, when one cannot be built. NCCL alone is optional (it needs CUDA).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git python3 python3-venv
          libopenmpi-dev openmpi-bin libsimgrid-dev nlohmann-json3-dev libcli11-dev libssl-dev
          libgoogle-perftools-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev clang
          python3-dev pybind11-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq >/dev/null
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python environment: one interpreter (Debian's python3 3.11, in a venv) for the
# bindings, their tests and `pip install .`, with the frameworks from PyPI pinned in
# python/requirements.txt. Kept outside the checkout so that clones share it (torch and
# tensorflow come to several GB); reinstalled when the requirements change.
venv=${HVD_VENV:-$HOME/.cache/hvdsim/venv}
mkdir -p "$(dirname "$venv")"
(
  flock 9
  if ! [ -x "$venv/bin/python" ] || ! cmp -s python/requirements.txt "$venv/hvd-requirements.txt"; then
    echo "setup: installing python/requirements.txt into $venv (torch, tensorflow: several GB, once)" >&2
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements.txt >&2
    cp python/requirements.txt "$venv/hvd-requirements.txt"
  fi
) 9>"$venv.lock"

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHVD_REQUIRE_ALL=ON -DPython_EXECUTABLE="$venv/bin/python" \
  ${HVD_CMAKE_ARGS:-} >build.configure.log 2>&1 ||
  { cat build.configure.log; exit 1; }
grep -E "hvdsim parts|disabled" build.configure.log >&2 || true
cmake --build build -j"$jobs" 2>&1 | grep -E "error|warning:|FAILED" >&2 || true
cmake --build build -j"$jobs" >/dev/null  # fails loudly if the build is broken
