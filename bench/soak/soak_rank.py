#!/usr/bin/env python3
"""One rank of the soak (scripts/soak.sh runs it at np 3 under mpirun and under hvdrun --tcp):
for --minutes, rounds of 1-8 collectives submitted at once (so the runtime fuses them) with
random sizes (0 to 1 Mi elements, log-uniform), dtypes (float32, float64, float16, bfloat16,
int32, int64, uint8) and operations (allreduce Sum/Average/Min/Max/Product, allgather,
broadcast). Every rank draws the same plan from a seed per round and knows every rank's
input, so it checks every element of every result. Rank 0 prints the memory (RSS of every
rank, gathered) once a --report-every seconds, and a last line:

  soak: done <launcher> np 3 <minutes> min: <rounds> rounds, <collectives> collectives,
        <bytes> bytes, <wrong> wrong; RSS MiB per rank start [...] end [...] max [...]

Exit 0 when no result was wrong, 1 otherwise."""
import argparse
import math
import os
import random
import sys
import time

import torch

import hvd.torch as hvd

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8]
KINDS = ["sum", "average", "min", "max", "product", "allgather", "broadcast"]


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def value(rank, n, kind, dtype, salt):
    """Rank `rank`'s input: small integers, so every result is exact in every dtype."""
    i = torch.arange(n, dtype=torch.int64)
    if kind == "product":
        v = torch.where((i + salt) % 3 == rank, 2, 1)  # one factor 2 at most per element: products <= 2
    else:
        v = (i * 7 + rank * 5 + salt) % 4  # sums of 3 ranks <= 9: exact even in uint8
    return v.to(dtype)


def expected(kind, n, dtype, salt, size, root):
    ins = [value(r, n, kind, dtype, salt).to(torch.float64) for r in range(size)]
    if kind == "sum":
        return sum(ins)
    if kind == "average":
        return sum(ins) / size
    if kind == "min":
        return torch.stack(ins).min(0).values
    if kind == "max":
        return torch.stack(ins).max(0).values
    if kind == "product":
        return torch.stack(ins).prod(0)
    if kind == "allgather":
        return torch.cat(ins)
    return ins[root]


def submit(kind, t, name, root):
    ops = {"sum": hvd.Sum, "average": hvd.Average, "min": hvd.Min, "max": hvd.Max, "product": hvd.Product}
    if kind in ops:
        return hvd.allreduce_async(t, name=name, op=ops[kind])
    if kind == "allgather":
        return hvd.allgather_async(t, name=name)
    return hvd.broadcast_async(t, root, name=name)


def close_enough(got, want, dtype, kind):
    got = got.to(torch.float64)
    if kind == "average" and not dtype.is_floating_point:
        return torch.all((got - want).abs() <= 1).item()  # integer averages round
    tol = {torch.float16: 0.02, torch.bfloat16: 0.02, torch.float32: 1e-6}.get(dtype, 1e-12)  # averages round
    return torch.all((got - want).abs() <= tol * want.abs().clamp(min=1)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--report-every", type=float, default=60)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--launcher", default="?")
    a = ap.parse_args()
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    start = time.monotonic()
    end = start + a.minutes * 60
    rounds = collectives = nbytes = wrong = 0
    first_rss = None
    last_report = -1e9
    peak = [0.0] * size
    while True:
        # Rank 0 decides when to stop (the same round everywhere).
        go = torch.tensor([1 if time.monotonic() < end else 0], dtype=torch.int32)
        go = hvd.broadcast(go, 0, name="soak.go")
        now = time.monotonic()
        rss = hvd.allgather(torch.tensor([rss_mib()], dtype=torch.float64), name="soak.rss").tolist()
        peak = [max(p, r) for p, r in zip(peak, rss)]
        if first_rss is None:
            first_rss = rss
        if rank == 0 and (now - last_report >= a.report_every or not go.item()):
            last_report = now
            print(f"soak: t={now - start:7.1f} s rounds {rounds} collectives {collectives} wrong {wrong} "
                  f"RSS MiB {[round(r, 1) for r in rss]}", flush=True)
        if not go.item():
            break
        rng = random.Random(a.seed * 1000003 + rounds)
        plan = []
        for k in range(rng.randint(1, 8)):
            n = 0 if rng.random() < 0.05 else int(math.exp(rng.uniform(0, math.log(1 << 20))))
            kind, dtype = rng.choice(KINDS), rng.choice(DTYPES)
            if kind == "product" and dtype == torch.uint8:
                dtype = torch.int32
            plan.append((kind, dtype, n, rng.randint(0, 99), rng.randrange(size)))
        handles = []
        for k, (kind, dtype, n, salt, root) in enumerate(plan):
            t = value(rank, n, kind, dtype, salt)
            handles.append(submit(kind, t, f"soak.{k}.{kind}", root))
        for (kind, dtype, n, salt, root), h in zip(plan, handles):
            got = hvd.synchronize(h)
            want = expected(kind, n, dtype, salt, size, root)
            collectives += 1
            nbytes += got.numel() * got.element_size()
            if got.shape != want.shape or not close_enough(got, want, dtype, kind):
                wrong += 1
                if wrong <= 5:
                    print(f"soak: rank {rank} round {rounds}: {kind} {dtype} n={n} is wrong", flush=True)
        rounds += 1
    total_wrong = int(hvd.allreduce(torch.tensor([wrong], dtype=torch.int64), name="soak.wrong", op=hvd.Sum).item())
    if rank == 0:
        print(f"soak: done {a.launcher} np {size} {a.minutes:g} min: {rounds} rounds, {collectives} collectives "
              f"per rank, {nbytes} bytes per rank, {total_wrong} wrong; RSS MiB per rank start "
              f"{[round(r, 1) for r in first_rss]} end {[round(r, 1) for r in rss]} max "
              f"{[round(r, 1) for r in peak]}", flush=True)
    hvd.shutdown()
    sys.exit(1 if total_wrong else 0)


if __name__ == "__main__":
    main()
