#!/usr/bin/env python3
"""hvd.torch where Horovod's own tests (test/parallel/test_torch.py) pin its behaviour down:
refusals at the call (a second pending op of one name, bad alltoall splits, Adasum
reducescatter, a scalar in a grouped reducescatter: raised on every rank, nothing hangs
and the runtime works on), integer reducescatter scaling, reducescatter gradients, global
roots in process sets, join followed by other collectives, NaN through Min/Max, and the
DistributedOptimizer details (no names, the step warning, sparse gradients, a process set
this rank is not in). Any np >= 2."""
import sys
import warnings

import torch

import hvd.torch as hvd
from harness import Checks


def refusal_checks(c, r, p):
    """Horovod raises ValueError from the call itself for a name already pending; the
    first op still completes once every rank submits it."""
    t = torch.ones(3)
    calls = {
        "allreduce": lambda n: hvd.allreduce_async(t, name=n, op=hvd.Sum),
        "allgather": lambda n: hvd.allgather_async(t, name=n),
        "broadcast": lambda n: hvd.broadcast_async(t, 0, name=n),
        "reducescatter": lambda n: hvd.reducescatter_async(torch.ones(p, 2), name=n, op=hvd.Sum),
        "grouped_allreduce": lambda n: hvd.grouped_allreduce_async([t, t], name=n),
    }
    for kind, call in calls.items():
        # Each rank first submits a name of its own, which no other rank has submitted yet
        # (so it is surely still pending), and tries it again; after a barrier every rank
        # submits the other ranks' names, and every op completes.
        h = {r: call(f"dup.{kind}.{r}")}
        for exc in (ValueError, hvd.HvdError):
            c.raises(lambda: call(f"dup.{kind}.{r}"), exc, "already pending",
                     f"second pending {kind} of one name ({exc.__name__})")
        hvd.barrier()
        h.update({q: call(f"dup.{kind}.{q}") for q in range(p) if q != r})
        outs = [hvd.synchronize(h[q]) for q in range(p)]
        c.ok(all(o is not None for o in outs), f"{kind}: the ops of the names complete")
    # A group with a refused member is refused whole on every rank: no partial group waits.
    scalar = torch.tensor(float(r))
    for exc in (ValueError, hvd.HvdError):
        c.raises(lambda: hvd.grouped_reducescatter([torch.zeros(3, 1), scalar]), exc, "at least one dimension",
                 f"grouped_reducescatter with a scalar ({exc.__name__})")
    c.raises(lambda: hvd.reducescatter(scalar), ValueError, "at least one dimension", "reducescatter of a scalar")
    # Adasum is an allreduce only: Horovod's refusal is a RuntimeError (HvdError), and hvd's
    # is a ValueError as well.
    for fn in (lambda: hvd.reducescatter(torch.ones(p, 2), op=hvd.Adasum),
               lambda: hvd.grouped_reducescatter([torch.ones(p, 2)], op=hvd.Adasum)):
        for exc in (RuntimeError, ValueError):
            c.raises(fn, exc, "Adasum", f"reducescatter op=Adasum ({exc.__name__})")
    # alltoall: splits of the wrong length or dtype, a first dimension the set does not divide.
    c.raises(lambda: hvd.alltoall(torch.ones(p + 1)), ValueError, "does not divide", "alltoall uneven first dimension")
    c.raises(lambda: hvd.alltoall(torch.ones(p), torch.ones(p + 1, dtype=torch.int32)), ValueError, "entries",
             "alltoall splits of the wrong length")
    c.raises(lambda: hvd.alltoall(torch.ones(p - 1), torch.ones(p, dtype=torch.int32)), ValueError, "add up to",
             "alltoall splits that do not add up")
    c.raises(lambda: hvd.alltoall(torch.ones(p), torch.ones(p, dtype=torch.float32)), ValueError, "int32",
             "alltoall float splits")
    c.raises(lambda: hvd.alltoall(torch.ones(p), [1.0] * p), ValueError, "integers", "alltoall splits list of floats")
    got, recv = hvd.alltoall(torch.arange(p, dtype=torch.float32), [1] * p)
    c.ok(torch.equal(got, torch.full((p,), float(r))) and recv.tolist() == [1] * p, "alltoall with list splits")
    c.close(hvd.allreduce(torch.ones(2), op=hvd.Sum, name="after.refusals"), torch.full((2,), float(p)),
            "allreduce after the refusals")
    # Results the runtime allocated, never synchronized (as Horovod's duplicate-name tests
    # leave them): shutdown and exit must not crash freeing them.
    for h in (hvd.allgather_async(torch.ones(2), name="left.gather"),
              hvd.reducescatter_async(torch.ones(p, 2), name="left.scatter"),
              hvd.alltoall_async(torch.ones(p), name="left.alltoall")):
        while not hvd.poll(h):
            pass


def scaling_checks(c, r, p):
    """Integer reducescatter scaled as Horovod's CPU path: in float64, truncated toward zero
    (prescale before the sum, postscale after it)."""
    g = torch.Generator().manual_seed(7)
    full = [torch.randint(-100, 100, (4 * p, 3), generator=g) for _ in range(p)]
    for dt in (torch.int32, torch.int64):
        ins = [f.to(dt) for f in full]
        for pre, post in ((0.37, 1.0), (1.0, 0.37), (0.6, 2.5)):
            pre_scaled = [(x.to(torch.float64) * pre).to(dt) for x in ins]
            total = torch.stack([x.to(torch.int64) for x in pre_scaled]).sum(0)
            want = (total.to(torch.float64) * post).to(dt)[4 * r:4 * r + 4]
            got = hvd.reducescatter(ins[r], op=hvd.Sum, prescale_factor=pre, postscale_factor=post)
            c.close(got, want, f"reducescatter {dt} pre {pre} post {post}")
            got = hvd.grouped_reducescatter([ins[r], ins[r][:2 * p]], op=hvd.Sum, prescale_factor=pre,
                                            postscale_factor=post)
            c.close(got[0], want, f"grouped_reducescatter {dt} pre {pre} post {post}")
            want2 = (torch.stack([x[:2 * p].to(torch.int64) for x in pre_scaled]).sum(0).to(torch.float64)
                     * post).to(dt)[2 * r:2 * r + 2]
            c.close(got[1], want2, f"grouped_reducescatter {dt} pre {pre} post {post} [1]")


def grad_checks(c, r, p):
    """Horovod's reducescatter backward: the gradient times the size for Sum (1 for
    Average) and the scale factors, allgathered; grouped alike."""
    for op, k in ((hvd.Sum, p), (hvd.Average, 1)):
        for pre, post in ((1.0, 1.0), (0.5, 3.0)):
            x = torch.ones(2 * p, 3, dtype=torch.float64, requires_grad=True)
            y = hvd.reducescatter(x, op=op, prescale_factor=pre, postscale_factor=post)
            y.backward(torch.full_like(y, float(r + 1)))
            rows = torch.cat([torch.full((2, 3), float(q + 1), dtype=torch.float64) for q in range(p)])
            c.close(x.grad, rows * k * pre * post, f"reducescatter grad op {op} pre {pre} post {post}")
            xs = [torch.ones(p, dtype=torch.float32, requires_grad=True),
                  torch.ones(2 * p, 2, dtype=torch.float32, requires_grad=True)]
            ys = hvd.grouped_reducescatter(xs, op=op, prescale_factor=pre, postscale_factor=post)
            (ys[0].sum() + 2 * ys[1].sum()).backward()
            c.close(xs[0].grad, torch.full((p,), k * pre * post), f"grouped_reducescatter grad [0] op {op}")
            c.close(xs[1].grad, torch.full((2 * p, 2), 2.0 * k * pre * post), f"grouped_reducescatter grad [1] op {op}")


def process_set_checks(c, r, p):
    """Roots are global ranks in a process set (Horovod): broadcast, its gradient,
    broadcast_object; a DistributedOptimizer over a set this rank is not in does nothing."""
    evens = [q for q in range(p) if q % 2 == 0]
    odds = [q for q in range(p) if q % 2 == 1]
    even_set, odd_set = hvd.add_process_set(evens), hvd.add_process_set(odds)
    mine, ranks = (even_set, evens) if r % 2 == 0 else (odd_set, odds)
    for root in ranks:
        got = hvd.broadcast(torch.full((3,), float(r)), root, process_set=mine)
        c.close(got, torch.full((3,), float(root)), f"broadcast in a set from global root {root}")
        x = torch.full((2,), float(r), requires_grad=True)
        hvd.broadcast(x, root, process_set=mine).sum().backward()
        c.close(x.grad, torch.full((2,), 1.0 if r == root else 0.0), f"broadcast grad in a set, root {root}")
        obj = hvd.broadcast_object({"root": root} if r == root else None, root_rank=root, process_set=mine)
        c.ok(obj == {"root": root}, f"broadcast_object in a set from global root {root}: {obj!r}")
        t = torch.full((2,), float(r))
        hvd.broadcast_parameters([t], root_rank=root, process_set=mine)
        c.close(t, torch.full((2,), float(root)), f"broadcast_parameters in a set from {root}")
    other = odds[0] if r % 2 == 0 and odds else evens[0]
    if other not in ranks:
        c.raises(lambda: hvd.broadcast(torch.ones(1), other, process_set=mine), ValueError, "not a member",
                 "broadcast from a root outside the set")
    # DistributedOptimizer over the even set: odd ranks step alone (no allreduce, no wait).
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 1)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(lin.parameters(), lr=1.0),
                                   named_parameters=lin.named_parameters(), process_set=even_set)
    w0 = lin.weight.detach().clone()
    opt.zero_grad()
    lin(torch.full((1, 3), float(r + 1))).sum().backward()
    opt.step()
    if r % 2 == 0:
        mean = sum(q + 1 for q in evens) / len(evens)
        c.close(lin.weight.detach(), w0 - mean, "DistributedOptimizer in the even set: the set's average")
    else:
        c.close(lin.weight.detach(), w0 - (r + 1), "DistributedOptimizer outside its set: a local step")
    hvd.remove_process_set(odd_set)
    hvd.remove_process_set(even_set)


def join_checks(c, r, p):
    """After a rank joined, only allreduce completes (with the joined ranks' identity);
    allgather and broadcast raise on the others, which then join; join returns the same
    last rank everywhere."""
    for first in range(p):
        if r == first:
            last = hvd.join()
        else:
            # Unnamed once, as in Horovod's test (with rank 0 joined, every rank that calls
            # it has made the same unnamed allgathers): the joined rank makes no such call,
            # and the allgather_object below must still find the same automatic names.
            c.raises(lambda: hvd.allgather(torch.ones(2, 2), name=None if first == 0 else "join.allgather"), hvd.HvdError,
                     "while ranks have joined", f"allgather after rank {first} joined")
            root = min(q for q in range(p) if q != first)
            c.raises(lambda: hvd.broadcast(torch.ones(2), root, name="join.broadcast"), hvd.HvdError,
                     "while ranks have joined", f"broadcast after rank {first} joined")
            got = hvd.allreduce(torch.full((2,), 2.0), op=hvd.Sum, name="join.allreduce")
            c.close(got, torch.full((2,), 2.0 * (p - 1)), f"allreduce after rank {first} joined")
            last = hvd.join()
        lasts = hvd.allgather_object(last)
        c.ok(last != first and lasts == [last] * p, f"join after rank {first} joined first: {lasts}")


def nan_checks(c, r, p):
    """Min and Max propagate a NaN held by any rank, as torch.minimum / maximum do."""
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for holder in range(p):
            x = torch.arange(40, dtype=torch.float32).to(dt) + r
            if r == holder:
                x[3] = float("nan")
                x[37] = float("nan")
            for op, name in ((hvd.Min, "Min"), (hvd.Max, "Max")):
                got = hvd.allreduce(x, op=op)
                c.ok(bool(got[3].isnan()) and bool(got[37].isnan()) and not bool(got[4].isnan()),
                     f"allreduce {name} {dt}: NaN of rank {holder} propagates: {got[:5].tolist()}")
                g = hvd.grouped_allreduce([x, x[:8].clone()], op=op)
                c.ok(bool(g[1][3].isnan()), f"grouped_allreduce {name} {dt}: NaN of rank {holder}")


def optimizer_checks(c, r, p):
    # No named_parameters: Horovod's names, one per parameter, the same on every rank.
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    opt = hvd.DistributedOptimizer(torch.optim.SGD([{"params": model[0].parameters()},
                                                    {"params": model[1].parameters()}], lr=0.1))
    names = opt._parameter_names
    c.ok(sorted(names.values()) == sorted(f"allreduce.noname.{i}.{j}" for i in range(2) for j in range(2)),
         f"DistributedOptimizer without names: {sorted(names.values())}")
    c.ok(hvd.allgather_object(sorted(names.values())) == [sorted(names.values())] * p, "the same names on every rank")
    opt.zero_grad()
    model(torch.ones(1, 4) * (r + 1)).sum().backward()
    opt.step()
    # (named: join_checks left the ranks' unnamed allgather counts unequal)
    w = hvd.allgather(model[0].weight.detach().flatten().unsqueeze(0), name="unnamed.opt.weights")
    c.ok(all(torch.equal(w[0], w[k]) for k in range(p)), "unnamed DistributedOptimizer: same weights everywhere")
    # synchronize() then step() without skip_synchronize(): Horovod's warning, one.
    lin = torch.nn.Linear(1, 1)
    hvd.broadcast_parameters(lin.state_dict(), root_rank=0)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(lin.parameters(), lr=0.1), named_parameters=lin.named_parameters())
    opt.zero_grad()
    lin(torch.full((1, 1), float(r))).sum().backward()
    opt.synchronize()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        opt.step()
    c.ok(len(ws) == 1 and "optimizer.step() called without optimizer.skip_synchronize()" in str(ws[0].message),
         f"step after synchronize warns once: {[str(w.message)[:60] for w in ws]}")
    opt.zero_grad()
    lin(torch.full((1, 1), float(r))).sum().backward()
    opt.synchronize()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        with opt.skip_synchronize():
            opt.step()
    c.ok(len(ws) == 0, "skip_synchronize: no warning")
    # Sparse embeddings with SparseAdam: the gradient stays sparse, allreduced either way,
    # and equals the dense average.
    for sparse_as_dense in (False, True):
        torch.manual_seed(0)
        emb = torch.nn.Embedding(10, 3, sparse=True)
        ref = emb.weight.detach().clone()
        opt = hvd.DistributedOptimizer(torch.optim.SparseAdam(list(emb.parameters()), lr=0.1),
                                       sparse_as_dense=sparse_as_dense)
        inp = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]]) if r == 0 else torch.tensor([[1, 3, 4], [4, 7, 9]])
        opt.zero_grad()
        emb(inp).sum().backward()
        opt.synchronize()
        g = emb.weight.grad
        c.ok(g is not None and g.is_sparse, f"sparse_as_dense={sparse_as_dense}: the gradient stays sparse")
        counts = [torch.bincount(t.flatten(), minlength=10).to(torch.float32)
                  for t in ([torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])] +
                            [torch.tensor([[1, 3, 4], [4, 7, 9]])] * (p - 1))]
        want = (sum(counts) / p).unsqueeze(1).expand(10, 3)
        c.close(g.to_dense(), want, f"sparse_as_dense={sparse_as_dense}: the averaged gradient")
        with opt.skip_synchronize():
            opt.step()
        c.ok(not torch.equal(emb.weight.detach(), ref), f"sparse_as_dense={sparse_as_dense}: SparseAdam stepped")


def main():
    hvd.init()
    c = Checks("parity_test")
    r, p = hvd.rank(), hvd.size()
    if p < 2:
        raise SystemExit("parity_test needs at least 2 ranks")
    for fn in (refusal_checks, scaling_checks, grad_checks, process_set_checks, join_checks, nan_checks,
               optimizer_checks):
        c.run(fn, c, r, p)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
