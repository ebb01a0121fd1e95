#!/usr/bin/env python3
"""op=hvd.Adasum in hvd.torch against a reference of Horovod's Adasum written here (the
pairwise rule, ranks paired (0,1), (2,3), ... then pairs of pairs): allreduce, allreduce_,
the async and grouped forms, float16/32/64, scale factors, the special cases, what is
refused, and DistributedOptimizer(op=hvd.Adasum), Horovod's delta optimizer: every rank
steps its own optimizer and the parameter deltas are Adasum-reduced. At a power-of-two np
everything runs; at other np only the refusals."""
import sys

import torch

import hvd.torch as hvd
from harness import Checks

TINY = 1.4916681462400413e-154  # sqrt(DBL_MIN): smaller squared norms keep coefficient 1


def pairwise(a, b):
    dot, aa, bb = float((a * b).sum()), float((a * a).sum()), float((b * b).sum())
    ca = 1 - dot / (2 * aa) if aa >= TINY else 1.0
    cb = 1 - dot / (2 * bb) if bb >= TINY else 1.0
    return ca * a + cb * b


def adasum(tensors):
    """Horovod's tree over the ranks' tensors, in float64, in the tensors' dtype at the end."""
    x = [t.to(torch.float64).flatten() for t in tensors]
    level = 1
    while level < len(x):
        for i in range(0, len(x) - level, 2 * level):
            x[i] = pairwise(x[i], x[i + level])
        level *= 2
    return x[0].reshape(tensors[0].shape).to(tensors[0].dtype)


def value(rank, shape, dtype, seed=0):
    g = torch.Generator().manual_seed(100 * seed + rank)
    return (torch.randn(shape, generator=g, dtype=torch.float64) + 0.3 * rank).to(dtype)


def tol(dtype):
    return {torch.float16: (1e-2, 1e-2), torch.float32: (1e-5, 1e-6)}.get(dtype, (1e-10, 1e-12))


def allreduce_checks(c, r, p):
    for dt in (torch.float32, torch.float64, torch.float16):
        rt, at = tol(dt)
        ins = [value(q, (5, 7), dt, seed=1) for q in range(p)]
        want = adasum(ins)
        c.close(hvd.allreduce(ins[r], op=hvd.Adasum), want, f"allreduce Adasum {dt}", rt, at)
        x = ins[r].clone()
        c.ok(hvd.allreduce_(x, op=hvd.Adasum) is x, f"allreduce_ Adasum {dt} returns its tensor")
        c.close(x, want, f"allreduce_ Adasum {dt}", rt, at)
        h = hvd.allreduce_async(ins[r], op=hvd.Adasum, name=f"async.{dt}")
        c.close(hvd.synchronize(h), want, f"allreduce_async Adasum {dt}", rt, at)
        c.close(hvd.allreduce(ins[r], op=hvd.Adasum, prescale_factor=2.0, postscale_factor=0.25),
                adasum([t * 2 for t in ins]) * 0.25, f"allreduce Adasum {dt} scaled", rt, at)
    # Several tensors in one grouped (fused) allreduce: each is reduced as if alone.
    sizes = [(1,), (7,), (3, 11), (2,)]
    ins = [[value(q, s, torch.float32, seed=10 + k) for q in range(p)] for k, s in enumerate(sizes)]
    got = hvd.grouped_allreduce([t[r] for t in ins], op=hvd.Adasum)
    for k, (g, t) in enumerate(zip(got, ins)):
        c.close(g, adasum(t), f"grouped_allreduce Adasum tensor {k}")
    # Orthogonal tensors add up; identical ones give the tensor; zeros add nothing.
    hot = torch.zeros(2 * p + 1)
    hot[r] = r + 1.0
    c.close(hvd.allreduce(hot, op=hvd.Adasum), torch.cat([torch.arange(1.0, p + 1), torch.zeros(p + 1)]),
            "orthogonal tensors: the sum", 0, 0)
    same = torch.linspace(-2.0, 3.0, 13)
    c.close(hvd.allreduce(same, op=hvd.Adasum), same, "identical tensors: the tensor", 0, 0)
    c.close(hvd.allreduce(same if r == 0 else torch.zeros(13), op=hvd.Adasum), same,
            "one nonzero rank: its tensor", 0, 0)
    c.ok(not torch.allclose(hvd.allreduce(same * (r + 1), op=hvd.Adasum), same * (p + 1) * p / 2),
         "Adasum of parallel tensors is not their sum")


def refusal_checks(c, r, p):
    c.raises(lambda: hvd.allreduce(torch.arange(4, dtype=torch.int32), op=hvd.Adasum), hvd.HvdError,
             "float16, float32 and float64", "Adasum of an int32 tensor")
    c.raises(lambda: hvd.reducescatter(torch.ones(2 * p), op=hvd.Adasum), ValueError, "allreduce only",
             "reducescatter with Adasum")


def non_power_of_two_checks(c, r, p):
    c.raises(lambda: hvd.allreduce(torch.ones(3), op=hvd.Adasum), NotImplementedError,
             "non-power of 2", "allreduce Adasum")
    c.raises(lambda: hvd.grouped_allreduce([torch.ones(3)], op=hvd.Adasum), NotImplementedError,
             "non-power of 2", "grouped_allreduce Adasum")
    w = torch.nn.Parameter(torch.zeros(3))
    c.raises(lambda: hvd.DistributedOptimizer(torch.optim.SGD([w], lr=1.0), op=hvd.Adasum),
             NotImplementedError, "non-power of 2", "DistributedOptimizer Adasum")


def train(grads, op, steps=1, opt_fn=lambda ps: torch.optim.SGD(ps, lr=1.0), passes=1):
    """w starts at w0; each backward gives this rank's gradient grads[step][pass]."""
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64))
    opt = hvd.DistributedOptimizer(opt_fn([w]), named_parameters=[("w", w)], op=op,
                                   backward_passes_per_step=passes)
    for s in range(steps):
        opt.zero_grad()
        for k in range(passes):
            (w * grads[s][k]).sum().backward()
        opt.step()
    return w.detach().clone()


def optimizer_checks(c, r, p):
    w0 = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    e = torch.eye(4, dtype=torch.float64)
    ortho = [e[q % 4] * (q + 1) for q in range(p)]  # orthogonal for p <= 4
    # SGD(lr=1): a rank's delta is minus its gradient; orthogonal deltas add up.
    got = train([[ortho[r]]], hvd.Adasum)
    c.close(got, w0 - sum(ortho), "Adasum optimizer, orthogonal gradients: w0 - their sum", 0, 1e-12)
    c.close(train([[ortho[r]]], hvd.Average), w0 - sum(ortho) / p,
            "Average optimizer, the same gradients: w0 - their mean", 0, 1e-12)
    g = torch.tensor([0.5, 1.0, -1.5, 2.0], dtype=torch.float64)
    c.close(train([[g]], hvd.Adasum), w0 - g, "Adasum optimizer, identical gradients: w0 - g", 0, 1e-12)
    # Accumulation: backward_passes_per_step=2 steps once on the summed gradient.
    gs = [[value(q, (4,), torch.float64, seed=20), value(q, (4,), torch.float64, seed=21)] for q in range(p)]
    got = train([gs[r]], hvd.Adasum, passes=2)
    c.close(got, w0 + adasum([-(a + b) for a, b in gs]), "Adasum optimizer, 2 backward passes per step")
    # Momentum is local: two steps of SGD(momentum) give each rank's delta from its own
    # buffer; the reduced deltas move every rank alike.
    mom = lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)  # noqa: E731
    steps = [[value(q, (4,), torch.float64, seed=30 + s) for q in range(p)] for s in range(2)]
    got = train([[steps[s][r]] for s in range(2)], hvd.Adasum, steps=2, opt_fn=mom)
    buf1 = [steps[0][q] for q in range(p)]
    w1 = w0 + adasum([-0.1 * b for b in buf1])
    buf2 = [0.9 * buf1[q] + steps[1][q] for q in range(p)]
    want = w1 + adasum([-0.1 * b for b in buf2])
    c.close(got, want, "Adasum optimizer, SGD momentum over 2 steps (local buffers, reduced deltas)")
    # A delta computed through Adam: w moves by the Adasum of the ranks' first Adam steps.
    adam = lambda ps: torch.optim.Adam(ps, lr=0.01)  # noqa: E731
    gr = [value(q, (4,), torch.float64, seed=40) for q in range(p)]
    deltas = [-0.01 * x / (x.abs() + 1e-8) for x in gr]  # Adam's first step: -lr * g / (|g| + eps)
    c.close(train([[gr[r]]], hvd.Adasum, opt_fn=adam), w0 + adasum(deltas), "Adasum optimizer over Adam",
            1e-6, 1e-9)
    w = torch.nn.Parameter(w0.clone())
    opt = hvd.DistributedOptimizer(torch.optim.SGD([w], lr=1.0), named_parameters=[("w", w)], op=hvd.Adasum)
    (w * g).sum().backward()
    c.raises(opt.zero_grad, AssertionError, "zero_grad", "zero_grad between backward and step")
    opt.step()
    c.close(w.detach(), w0 - g, "Adasum optimizer after the refused zero_grad", 0, 1e-12)


def main():
    hvd.init()
    c = Checks("adasum_test")
    r, p = hvd.rank(), hvd.size()
    if p & (p - 1):
        c.run(non_power_of_two_checks, c, r, p)
    else:
        for fn in (allreduce_checks, refusal_checks, optimizer_checks):
            c.run(fn, c, r, p)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
