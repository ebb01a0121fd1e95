#!/usr/bin/env python3
"""The include graph of runtime/: its floors and the includes that climb back up.

A file's floor is 0 when it includes no runtime header, else one more than the highest
floor among the runtime headers it includes (its longest include chain). Each file also
belongs to a layer by what it is, lowest first:

  0 types      hvd/status.h, hvd/types.h, hvd/config.h, core/units.h
  1 seams      hvd/platform.h, hvd/transport.h, hvd/device.h, hvd/seams.h
  2 requests   hvd/request.h, hvd/runtime_options.h, hvd/timeline.h: what the core passes
               around and reports
  3 algorithms collectives/
  4 core       core/ (logging, queue, controller, executor, runtime_impl ...)
  5 facade     hvd/runtime.h, hvd/hvd.h, hvd/local.h, hvd/mpi.h, hvd/nccl.h and api/, which
               implements them
  6 backends   backends/

An include from a lower layer to a higher one climbs back up (an internal that includes
the facade to get a struct). Usage: scripts/include_layers.py [runtime-dir]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "runtime")
root = os.path.abspath(root)
TYPES = {"hvd/status.h", "hvd/types.h", "hvd/config.h", "core/units.h"}
SEAMS = {"hvd/platform.h", "hvd/transport.h", "hvd/device.h", "hvd/seams.h"}
FACADE = {"hvd/runtime.h", "hvd/hvd.h", "hvd/local.h", "hvd/mpi.h", "hvd/nccl.h"}
REQUESTS = {"hvd/request.h", "hvd/timeline.h"}


def layer(name):
    if name in TYPES:
        return 0
    if name in SEAMS:
        return 1
    if name in FACADE or name.startswith("api/"):
        return 5
    if name in REQUESTS or name.startswith("hvd/"):
        return 2
    if name.startswith("collectives/"):
        return 3
    if name.startswith("core/"):
        return 4
    return 6


files = {}
for d, _, names in os.walk(root):
    for n in names:
        if n.endswith((".h", ".cc", ".cu")):
            path = os.path.join(d, n)
            rel = os.path.relpath(path, root)
            key = rel[len("include/"):] if rel.startswith("include/") else rel
            files[key] = path
inc = {}
for key, path in files.items():
    found = re.findall(r'^#include "([^"]+)"', open(path, encoding="utf-8").read(), re.M)
    inc[key] = [f for f in found if f in files]
floor = {}


def floor_of(k, stack=()):
    if k in floor:
        return floor[k]
    if k in stack:
        return 0
    f = 0 if not inc[k] else 1 + max(floor_of(x, stack + (k,)) for x in inc[k])
    floor[k] = f
    return f


for k in files:
    floor_of(k)
back = [(k, x) for k in sorted(files) for x in inc[k] if layer(x) > layer(k)]
print(f"files {len(files)}, floors {max(floor.values()) + 1}, includes {sum(map(len, inc.values()))}, "
      f"climbing back up {len(back)}")
for k, x in back:
    print(f"  {k} (layer {layer(k)}) -> {x} (layer {layer(x)})")
