#!/usr/bin/env python3
"""Autograd through hvd.torch's collectives and hvd.SyncBatchNorm, under mpirun at any np.

Each rank's loss is sum(collective(x_r) * w_r); every rank builds every rank's x and w
itself, so it knows the gradient Horovod's backward defines: allreduce -> the allreduce of
the w's (same op and scales), allgather -> the Average of the w's, this rank's rows,
broadcast -> the Average of the w's on the root and zeros elsewhere, alltoall -> the w
rows sent back, reducescatter -> the w's concatenated (times the size for Sum, times the
scales). SyncBatchNorm with uneven per-rank batches equals torch's BatchNorm on the
concatenated batch: outputs, input gradients, weight/bias gradients (summed over the
ranks) and running statistics, over two training steps and in eval mode."""
import sys

import torch

import hvd.torch as hvd
from harness import Checks

F64 = torch.float64


def rnd(rank, shape, seed):
    g = torch.Generator().manual_seed(7919 * seed + rank)
    return torch.randn(shape, generator=g, dtype=F64)


def grad_of(fn, x, w):
    """x.grad after backward of sum(fn(x) * w), and fn's output."""
    x = x.clone().requires_grad_()
    y = fn(x)
    (y * w).sum().backward()
    return x.grad, y


def allreduce_grads(c, r, p):
    xs = [rnd(q, (4, 3), 1) for q in range(p)]
    ws = [rnd(q, (4, 3), 2) for q in range(p)]
    W = torch.stack(ws)
    g, y = grad_of(lambda x: hvd.allreduce(x, op=hvd.Sum), xs[r], ws[r])
    c.ok(y.grad_fn is not None, "allreduce output has no grad_fn")
    c.close(y.detach(), torch.stack(xs).sum(0), "allreduce Sum forward")
    c.close(g, W.sum(0), "d/dx sum(allreduce_Sum(x) * w) = sum of the w's")
    g, _ = grad_of(lambda x: hvd.allreduce(x, op=hvd.Average, prescale_factor=0.5, postscale_factor=3.0),
                   xs[r], ws[r])
    c.close(g, W.mean(0) * 1.5, "allreduce Average prescale 0.5 postscale 3: gradient")
    g, _ = grad_of(lambda x: hvd.allreduce(2 * x, op=hvd.Max), xs[r], ws[r])
    c.close(g, 2 * W.max(0).values, "allreduce Max: gradient = allreduce Max of the w's (Horovod)")
    # grouped: two tensors, one unit; the gradient of each is its own allreduce
    a = rnd(r, (3,), 3).requires_grad_()
    b = rnd(r, (2, 2), 4).requires_grad_()
    ya, yb = hvd.grouped_allreduce([a, b], op=hvd.Sum)
    (ya * (r + 1)).sum().backward(retain_graph=True)
    (yb * 2).sum().backward()
    c.close(a.grad, torch.full((3,), float(sum(q + 1 for q in range(p))), dtype=F64),
            "grouped_allreduce gradient [0]")
    c.close(b.grad, torch.full((2, 2), 2.0 * p, dtype=F64), "grouped_allreduce gradient [1]")
    # compression keeps the graph (fp16 on the wire)
    g, _ = grad_of(lambda x: hvd.allreduce(x, op=hvd.Sum, compression=hvd.Compression.fp16),
                   xs[r], ws[r])
    c.close(g, W.sum(0), "allreduce with Compression.fp16: gradient", 1e-2, 1e-2)
    # no grad wanted: a plain tensor comes back
    c.ok(hvd.allreduce(xs[r]).grad_fn is None, "allreduce of a tensor without grad has a grad_fn")


def gather_broadcast_grads(c, r, p):
    rows = [q + 1 for q in range(p)]
    xs = [rnd(q, (rows[q], 3), 5) for q in range(p)]
    total = sum(rows)
    ws = [rnd(q, (total, 3), 6) for q in range(p)]
    off = sum(rows[:r])
    g, y = grad_of(lambda x: hvd.allgather(x), xs[r], ws[r])
    c.close(y.detach(), torch.cat(xs), "allgather forward (uneven rows)")
    c.close(g, torch.stack(ws).mean(0)[off:off + rows[r]], "allgather gradient: Average of the w's, my rows")
    other = [rnd(q, (2, 2), 7) for q in range(p)]
    x1, x2 = xs[r].clone().requires_grad_(), other[r].clone().requires_grad_()
    y1, y2 = hvd.grouped_allgather([x1, x2])
    ((y1 * ws[r]).sum() + (y2 * 3).sum()).backward()
    c.close(x1.grad, torch.stack(ws).mean(0)[off:off + rows[r]], "grouped_allgather gradient [0]")
    c.close(x2.grad, torch.full((2, 2), 3.0, dtype=F64), "grouped_allgather gradient [1]")
    for root in range(p):
        xb = [rnd(q, (5,), 8 + root) for q in range(p)]
        wb = [rnd(q, (5,), 20 + root) for q in range(p)]
        g, y = grad_of(lambda x: hvd.broadcast(x, root), xb[r], wb[r])
        c.close(y.detach(), xb[root], f"broadcast root {root} forward")
        want = torch.stack(wb).mean(0) if r == root else torch.zeros(5, dtype=F64)
        c.close(g, want, f"broadcast root {root} gradient (Average on the root, zeros elsewhere)")


def alltoall_grads(c, r, p):
    # rank q sends d + 1 rows to rank d; rank d receives (d + 1) rows from each q
    xs = [rnd(q, (sum(d + 1 for d in range(p)), 2), 30) for q in range(p)]
    ws = [rnd(d, (p * (d + 1), 2), 31) for d in range(p)]
    x = xs[r].clone().requires_grad_()
    y, received = hvd.alltoall(x, splits=[d + 1 for d in range(p)])
    c.ok(received.tolist() == [r + 1] * p, f"alltoall received splits {received.tolist()}")
    c.ok(y.grad_fn is not None and received.grad_fn is None, "alltoall: grad_fn on rows only")
    (y * ws[r]).sum().backward()
    # rows rank r sent to d sit in w_d at block r (each block d + 1 rows)
    want = torch.cat([ws[d][r * (d + 1):(r + 1) * (d + 1)] for d in range(p)])
    c.close(x.grad, want, "alltoall gradient: the w rows sent back")
    even = [rnd(q, (2 * p, 2), 32) for q in range(p)]
    we = [rnd(q, (2 * p, 2), 33) for q in range(p)]
    g, _ = grad_of(lambda t: hvd.alltoall(t), even[r], we[r])
    c.close(g, torch.cat([we[d][2 * r:2 * r + 2] for d in range(p)]), "alltoall (even split) gradient")


def reducescatter_grads(c, r, p):
    xs = [rnd(q, (2 * p, 3), 40) for q in range(p)]
    ws = [rnd(q, (2, 3), 41) for q in range(p)]
    full = torch.cat(ws)
    g, y = grad_of(lambda x: hvd.reducescatter(x, op=hvd.Sum), xs[r], ws[r])
    c.close(y.detach(), torch.stack(xs).sum(0)[2 * r:2 * r + 2], "reducescatter Sum forward")
    # Horovod's HorovodReducescatter.backward: the gradient times the size for Sum (and the
    # scale factors), not divided for Average, then allgathered.
    c.close(g, full * p, "reducescatter Sum gradient: the w's concatenated, times the size")
    g, _ = grad_of(lambda x: hvd.reducescatter(x, op=hvd.Average, prescale_factor=2.0, postscale_factor=0.5),
                   xs[r], ws[r])
    c.close(g, full, "reducescatter Average (scales 2 and 0.5) gradient: the w's concatenated")
    x1 = xs[r].clone().requires_grad_()
    (y1,) = hvd.grouped_reducescatter([x1], op=hvd.Sum)
    (y1 * ws[r]).sum().backward()
    c.close(x1.grad, full * p, "grouped_reducescatter gradient")
    c.raises(lambda: hvd.reducescatter(xs[r].clone().requires_grad_(), op=hvd.Max), ValueError,
             "gradients need op Sum or Average", "reducescatter Max with grad")


def bn_reference(xs, ws, weight, bias, steps):
    bn = torch.nn.BatchNorm1d(weight.numel()).to(F64)
    with torch.no_grad():
        bn.weight.copy_(weight)
        bn.bias.copy_(bias)
    outs = []
    for s in range(steps):
        full = torch.cat(xs[s]).requires_grad_()
        out = bn(full)
        (out * torch.cat(ws[s])).sum().backward()
        outs.append((out.detach(), full.grad, bn.weight.grad.clone(), bn.bias.grad.clone(),
                     bn.running_mean.clone(), bn.running_var.clone()))
        bn.weight.grad = bn.bias.grad = None
    return bn, outs


def sync_batch_norm_checks(c, r, p):
    sizes = [3, 1, 4, 2][:p] if p <= 4 else [2] * p
    C, steps = 3, 2
    xs = [[rnd(q, (sizes[q], C, 5), 50 + s) * (1 + s) + s for q in range(p)] for s in range(steps)]
    ws = [[rnd(q, (sizes[q], C, 5), 60 + s) for q in range(p)] for s in range(steps)]
    weight, bias = rnd(0, (C,), 70), rnd(0, (C,), 71)
    ref, outs = bn_reference(xs, ws, weight, bias, steps)
    sbn = hvd.SyncBatchNorm(C).to(F64)
    with torch.no_grad():
        sbn.weight.copy_(weight)
        sbn.bias.copy_(bias)
    off = sum(sizes[:r])
    for s in range(steps):
        x = xs[s][r].clone().requires_grad_()
        out = sbn(x)
        (out * ws[s][r]).sum().backward()
        o, gx, gw, gb, rm, rv = outs[s]
        c.close(out.detach(), o[off:off + sizes[r]], f"SyncBatchNorm step {s} output", 1e-9, 1e-10)
        c.close(x.grad, gx[off:off + sizes[r]], f"SyncBatchNorm step {s} input gradient", 1e-9, 1e-10)
        c.close(hvd.allreduce(sbn.weight.grad, op=hvd.Sum), gw, f"SyncBatchNorm step {s} weight grad (sum)", 1e-9, 1e-10)
        c.close(hvd.allreduce(sbn.bias.grad, op=hvd.Sum), gb, f"SyncBatchNorm step {s} bias grad (sum)", 1e-9, 1e-10)
        c.close(sbn.running_mean, rm, f"SyncBatchNorm step {s} running_mean", 1e-9, 1e-10)
        c.close(sbn.running_var, rv, f"SyncBatchNorm step {s} running_var", 1e-9, 1e-10)
        sbn.weight.grad = sbn.bias.grad = None
    c.ok(int(sbn.num_batches_tracked) == steps, f"num_batches_tracked {int(sbn.num_batches_tracked)}")
    sbn.eval()
    ref.eval()
    probe = rnd(r, (2, C, 5), 80)
    c.close(sbn(probe).detach(), ref(probe).detach(), "SyncBatchNorm eval = BatchNorm eval", 1e-9, 1e-10)
    # 4-D input (N, C, H, W), uneven batches, float32
    sbn2 = hvd.SyncBatchNorm(2)
    ref2 = torch.nn.BatchNorm2d(2)
    x4 = [rnd(q, (sizes[q], 2, 2, 3), 90).float() for q in range(p)]
    out = sbn2(x4[r])
    c.close(out.detach(), ref2(torch.cat(x4)).detach()[off:off + sizes[r]], "SyncBatchNorm 4-D float32 output",
            1e-5, 1e-5)
    c.close(sbn2.running_var, ref2.running_var, "SyncBatchNorm 4-D running_var", 1e-5, 1e-6)
    c.raises(lambda: sbn2(torch.ones(3)), ValueError, "expected at least 2D input", "SyncBatchNorm 1-D input")


def main():
    hvd.init()
    c = Checks("grad_test")
    r, p = hvd.rank(), hvd.size()
    for fn in (allreduce_grads, gather_broadcast_grads, alltoall_grads, reducescatter_grads,
               sync_batch_norm_checks):
        c.run(fn, c, r, p)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
