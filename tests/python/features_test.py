#!/usr/bin/env python3
"""hvd.start_timeline/stop_timeline, sparse_allreduce_async, DistributedOptimizer's groups,
num_groups, sparse_as_dense and set_backward_passes_per_step, and integer Average as
Horovod's CPU path computes it (sum times 1/size in double, truncated toward zero), under
mpirun at any np. Every rank builds every rank's inputs itself to know the results."""
import json
import os
import sys
import tempfile

import torch

import hvd.torch as hvd
from harness import Checks
from hvd.torch import mpi_ops


def timeline_checks(c, r, p):
    d = hvd.broadcast_object(tempfile.mkdtemp(prefix="hvd_tl_") if r == 0 else None, root_rank=0,
                            name="timeline_dir")
    path = os.path.join(d, "tl.json")
    mine = path if r == 0 else os.path.join(d, f"tl.rank{r}.json")
    hvd.allreduce(torch.ones(2), name="tl.before")
    hvd.start_timeline(path)
    hvd.allreduce(torch.ones(2), name="tl.inside")
    hvd.allgather(torch.ones(1, 2), name="tl.gather")
    hvd.stop_timeline()
    hvd.allreduce(torch.ones(2), name="tl.after")
    with open(mine) as f:
        events = json.load(f)  # parses right after stop_timeline
    names = " ".join(str(e.get("args", {}).get("names", "")) for e in events)
    ops = {e["name"] for e in events if e.get("cat") == "communication"}
    c.ok("tl.inside" in names and "tl.gather" in names, f"timeline names {names!r}")
    c.ok("tl.before" not in names and "tl.after" not in names, f"timeline has ops outside start/stop: {names!r}")
    c.ok({"ALLREDUCE", "ALLGATHER"} <= ops, f"timeline ops {sorted(ops)}")
    c.ok({e["pid"] for e in events} == {r}, "timeline lanes are this rank's")
    c.ok(not any(e["name"] == "CYCLE_START" for e in events), "CYCLE_START without mark_cycles")
    # mark_cycles, and a second start replacing the running timeline
    hvd.start_timeline(os.path.join(d, "a.json"))
    hvd.start_timeline(os.path.join(d, "b.json"), mark_cycles=True)
    hvd.allreduce(torch.ones(2), name="tl.marked")
    hvd.stop_timeline()
    hvd.stop_timeline()  # nothing running: no-op
    with open(os.path.join(d, "b.json" if r == 0 else f"b.rank{r}.json")) as f:
        events = json.load(f)
    c.ok(any(e["name"] == "CYCLE_START" for e in events), "mark_cycles=True records CYCLE_START")
    c.ok("tl.marked" in json.dumps(events), "second timeline names its op")
    c.raises(lambda: hvd.start_timeline("/nonexistent/dir/tl.json"), hvd.HvdError, "cannot open timeline file",
             "start_timeline into a missing directory")
    c.raises(lambda: hvd.start_timeline(""), ValueError, "non-empty", "start_timeline('')")


def sparse_checks(c, r, p):
    def sp(q):
        idx = torch.tensor([[q % 4, 1, 3], [0, q % 2, 2]])
        return torch.sparse_coo_tensor(idx, torch.tensor([1.0 + q, 2.0, -q], dtype=torch.float64), (4, 3))
    dense = torch.stack([sp(q).to_dense() for q in range(p)])
    h = hvd.sparse_allreduce_async(sp(r), name="sp.sum", op=hvd.Sum)
    out = hvd.synchronize(h)
    c.ok(out.is_sparse and out.shape == (4, 3), f"sparse_allreduce result sparse {out.is_sparse} {tuple(out.shape)}")
    c.close(out.to_dense(), dense.sum(0), "sparse_allreduce Sum")
    c.close(out.coalesce().to_dense(), dense.sum(0), "sparse_allreduce Sum coalesced")
    h = hvd.sparse_allreduce_async(sp(r), name="sp.avg", op=hvd.Average)
    c.close(h().to_dense(), dense.mean(0), "sparse_allreduce Average (handle called, as Horovod's)")
    c.raises(lambda: hvd.sparse_allreduce_async(torch.ones(3), "x", hvd.Sum), ValueError, "sparse COO",
             "sparse_allreduce_async of a dense tensor")
    c.raises(lambda: hvd.sparse_allreduce_async(sp(r), "x", hvd.Max), ValueError, "Sum or Average",
             "sparse_allreduce_async op Max")


class Counting:
    """Counts the optimizer's allreduce and grouped allreduce requests."""

    def __enter__(self):
        self.single = self.grouped = 0
        self.orig = (mpi_ops.allreduce_async_, mpi_ops.grouped_allreduce_async_)

        def single(*a, **k):
            self.single += 1
            return self.orig[0](*a, **k)

        def grouped(*a, **k):
            self.grouped += 1
            return self.orig[1](*a, **k)
        mpi_ops.allreduce_async_, mpi_ops.grouped_allreduce_async_ = single, grouped
        return self

    def __exit__(self, *exc):
        mpi_ops.allreduce_async_, mpi_ops.grouped_allreduce_async_ = self.orig


def model():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2)).double()


def batch(q, step):
    g = torch.Generator().manual_seed(100 * step + q)
    return torch.randn(5, 4, generator=g, dtype=torch.float64)


def train(p_rank, steps, passes=1, **kw):
    """Parameters after `steps` SGD steps (each over `passes` backward passes); requests made."""
    m = model()
    opt = hvd.DistributedOptimizer(torch.optim.SGD(m.parameters(), lr=0.1), named_parameters=m.named_parameters(),
                                   **{k: v(m) if callable(v) else v for k, v in kw.items()})
    with Counting() as n:
        for s in range(steps):
            opt.zero_grad()
            for k in range(passes):
                m(batch(p_rank, 10 * s + k)).pow(2).sum().backward()
            opt.step()
    return [t.detach().clone() for t in m.parameters()], n, opt, m


def reference(p, steps, passes=1):
    m = model()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for s in range(steps):
        opt.zero_grad()
        for q in range(p):
            for k in range(passes):
                (m(batch(q, 10 * s + k)).pow(2).sum() / p).backward()
        opt.step()
    return [t.detach() for t in m.parameters()]


def optimizer_checks(c, r, p):
    want = reference(p, 2)
    got, n, _, _ = train(r, 2)
    c.ok((n.single, n.grouped) == (8, 0), f"no groups: {n.single} allreduces, {n.grouped} grouped")
    for a, b in zip(got, want):
        c.close(a, b, "DistributedOptimizer without groups", 1e-10, 1e-12)
    got, n, _, _ = train(r, 2, num_groups=2)
    c.ok((n.single, n.grouped) == (0, 4), f"num_groups=2: {n.single} allreduces, {n.grouped} grouped")
    for a, b in zip(got, want):
        c.close(a, b, "DistributedOptimizer num_groups=2 (same result)", 1e-10, 1e-12)
    got, n, _, _ = train(r, 2, groups=lambda m: [[m[0].weight, m[2].bias]])
    c.ok((n.single, n.grouped) == (4, 2), f"groups=[[w0, b2]]: {n.single} allreduces, {n.grouped} grouped")
    for a, b in zip(got, want):
        c.close(a, b, "DistributedOptimizer groups=[[...]] (same result)", 1e-10, 1e-12)
    m = model()
    c.raises(lambda: hvd.DistributedOptimizer(torch.optim.SGD(m.parameters(), lr=0.1), groups=[[torch.ones(1)]]),
             ValueError, "not a trainable parameter", "groups with a foreign tensor")
    c.raises(lambda: hvd.DistributedOptimizer(torch.optim.SGD(m.parameters(), lr=0.1), groups="x"),
             ValueError, "groups must be", "groups='x'")
    # set_backward_passes_per_step: 2 passes accumulate into one allreduce per step
    want2 = reference(p, 2, passes=2)
    m = model()
    opt = hvd.DistributedOptimizer(torch.optim.SGD(m.parameters(), lr=0.1), named_parameters=m.named_parameters())
    opt.set_backward_passes_per_step(2)
    with Counting() as n:
        for s in range(2):
            opt.zero_grad()
            for k in range(2):
                m(batch(r, 10 * s + k)).pow(2).sum().backward()
            opt.step()
    c.ok(n.single == 8, f"set_backward_passes_per_step(2): {n.single} allreduces for 2 steps x 4 gradients")
    for a, b in zip(m.parameters(), want2):
        c.close(a.detach(), b, "set_backward_passes_per_step(2) accumulates two passes", 1e-10, 1e-12)
    opt.zero_grad()
    m(batch(r, 0)).sum().backward()
    m(batch(r, 1)).sum().backward()
    c.raises(lambda: m(batch(r, 2)).sum().backward(), AssertionError, "more than backward_passes_per_step",
             "a third pass with passes 2")
    opt.synchronize()
    c.raises(lambda: opt.set_backward_passes_per_step(0), ValueError, ">= 1", "set_backward_passes_per_step(0)")


def sparse_optimizer_checks(c, r, p):
    def run(sparse_as_dense):
        torch.manual_seed(5)
        emb = torch.nn.Embedding(6, 2, sparse=True).double()
        opt = hvd.DistributedOptimizer(torch.optim.SGD(emb.parameters(), lr=0.5),
                                       named_parameters=emb.named_parameters(), sparse_as_dense=sparse_as_dense)
        for s in range(2):
            opt.zero_grad()
            emb(torch.tensor([r % 6, (s + 2 * r) % 6, 5])).pow(2).sum().backward()
            opt.step()
        return emb.weight.detach().clone()
    torch.manual_seed(5)
    ref = torch.nn.Embedding(6, 2).double()
    ropt = torch.optim.SGD(ref.parameters(), lr=0.5)
    for s in range(2):
        ropt.zero_grad()
        for q in range(p):
            (ref(torch.tensor([q % 6, (s + 2 * q) % 6, 5])).pow(2).sum() / p).backward()
        ropt.step()
    c.close(run(False), ref.weight.detach(), "sparse gradients through sparse_allreduce", 1e-10, 1e-12)
    c.close(run(True), ref.weight.detach(), "sparse gradients with sparse_as_dense", 1e-10, 1e-12)


def int_average_checks(c, r, p):
    def ins(q, dt):
        base = torch.tensor([3 * q + 1, -(3 * q + 1), 7, -7, 5 * q, 2 * q + 1], dtype=torch.int64)
        return (base.abs() if dt == torch.uint8 else base).to(dt)

    def horovod(ts, pre=1.0, post=1.0):
        """Each rank's input times pre (truncated), summed, times post/size (truncated)."""
        s = sum((t.double() * pre).to(t.dtype).to(torch.int64) for t in ts)
        return (s.double() * (post / p)).to(ts[0].dtype)
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        a = [ins(q, dt) for q in range(p)]
        want = horovod(a)
        c.close(hvd.allreduce(a[r], op=hvd.Average), want, f"allreduce {dt} Average")
        x = a[r].clone()
        hvd.allreduce_(x, op=hvd.Average)
        c.close(x, want, f"allreduce_ {dt} Average")
        c.close(hvd.grouped_allreduce([a[r], a[r]], op=hvd.Average)[1], want, f"grouped_allreduce {dt} Average")
        c.close(hvd.allreduce(a[r], op=hvd.Sum, prescale_factor=0.5, postscale_factor=3.0),
                horovod(a, 0.5, 3.0 * p), f"allreduce {dt} Sum pre 0.5 post 3")
        rows = [ins(q, dt).repeat(p).view(p, -1) for q in range(p)]
        c.close(hvd.reducescatter(rows[r], op=hvd.Average), horovod([t[r:r + 1] for t in rows]),
                f"reducescatter {dt} Average")
    if p == 2:  # the truncation, spelled out: (1 + 4) / 2 = 2, (-1 - 4) / 2 = -2
        got = hvd.allreduce(ins(r, torch.int32), op=hvd.Average)
        c.ok(got.tolist()[:2] == [2, -2], f"int32 Average of [1, 4] and [-1, -4]: {got.tolist()[:2]}")


def main():
    hvd.init()
    c = Checks("features_test")
    r, p = hvd.rank(), hvd.size()
    for fn in (timeline_checks, sparse_checks, optimizer_checks, sparse_optimizer_checks, int_average_checks):
        c.run(fn, c, r, p)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
