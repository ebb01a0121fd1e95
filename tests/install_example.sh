#!/usr/bin/env bash
# Installs hvd from BUILD_DIR into a scratch prefix, builds examples/allreduce against it
# with find_package(hvd), and runs it under mpirun -np 2.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" --component Unspecified >/dev/null
cmake -S "$src/examples/allreduce" -B "$work/ex" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/ex" >/dev/null
out=$(mpirun --allow-run-as-root -np 2 "$work/ex/allreduce_example")
echo "$out"
echo "$out" | grep -q "rank 1 of 2: OK, average = 1.5"
