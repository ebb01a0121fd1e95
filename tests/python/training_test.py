#!/usr/bin/env python3
"""Training equivalence under mpirun -np 2: a small CNN trained for 20 steps with
DistributedOptimizer (op Average, each rank half the batch) ends with the parameters of
one process trained on the whole batch (rtol 1e-5); likewise with
backward_passes_per_step=2 (each rank's half in two micro-batches). Also: rank-divergent
inits become equal through broadcast_parameters, and the timeline names the gradients."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import hvd.torch as hvd
from harness import Checks

STEPS, BATCH = 20, 16


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def batches():
    g = torch.Generator().manual_seed(7)
    return [(torch.randn(BATCH, 2, 8, 8, generator=g), torch.randint(0, 3, (BATCH,), generator=g))
            for _ in range(STEPS)]


def fresh(seed=0):
    torch.manual_seed(seed)
    return SmallCnn()


def make_opt(model):
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train_reference(data):
    """One process, the whole batch, plain torch."""
    model = fresh()
    opt = make_opt(model)
    for x, y in data:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model


def train_distributed(data, passes):
    r, p = hvd.rank(), hvd.size()
    model = fresh()
    opt = hvd.DistributedOptimizer(make_opt(model), named_parameters=model.named_parameters(),
                                   backward_passes_per_step=passes)
    share = BATCH // p
    for x, y in data:
        opt.zero_grad()
        xs, ys = x[r * share:(r + 1) * share], y[r * share:(r + 1) * share]
        micro = share // passes
        for k in range(passes):  # mean over the micro-batches = mean over this rank's share
            sl = slice(k * micro, (k + 1) * micro)
            (F.cross_entropy(model(xs[sl]), ys[sl]) / passes).backward()
        opt.step()
    return model


def compare(c, got, want, what):
    worst_abs, worst_rel = 0.0, 0.0
    for (n, a), (_, b) in zip(got.named_parameters(), want.named_parameters()):
        d = (a.detach() - b.detach()).abs()
        worst_abs = max(worst_abs, d.max().item())
        worst_rel = max(worst_rel, (d / b.detach().abs().clamp_min(1e-12)).max().item())
        c.ok(torch.allclose(a, b, rtol=1e-5, atol=1e-7), f"{what}: parameter {n} differs by up to {d.max().item():.3g}")
    if hvd.rank() == 0:
        print(f"training_test: {what}: max |diff| {worst_abs:.3g}, max relative diff {worst_rel:.3g} "
              f"after {STEPS} steps", flush=True)


def main():
    hvd.init()
    torch.set_num_threads(1)
    c = Checks("training_test")
    data = batches()
    ref = train_reference(data)
    moved = max((a - b).abs().max().item() for a, b in zip(ref.parameters(), fresh().parameters()))
    c.ok(moved > 1e-3, f"training moved the parameters (by {moved:.3g})")
    c.run(lambda: compare(c, train_distributed(data, 1), ref, "np 2 DistributedOptimizer vs 1 process"))
    c.run(lambda: compare(c, train_distributed(data, 2), ref, "backward_passes_per_step=2"))
    # An LR scheduler built on the optimizer before it is wrapped drives the wrapper's
    # learning rate: the two share their param groups, as in Horovod.
    model = fresh()
    inner = torch.optim.SGD(model.parameters(), lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(inner, step_size=1, gamma=0.5)
    opt = hvd.DistributedOptimizer(inner, named_parameters=model.named_parameters())
    for _ in range(3):
        opt.zero_grad()
        model(data[0][0]).sum().backward()
        opt.step()
        sched.step()
    c.ok(opt.param_groups[0]["lr"] == 0.125 and opt.param_groups[0] is inner.param_groups[0],
         f"StepLR on the unwrapped optimizer sets the wrapper's lr (1.0 -> {opt.param_groups[0]['lr']}, want 0.125)")
    # broadcast_parameters: different inits on every rank become rank 0's.
    model = fresh(seed=100 + hvd.rank())
    before = hvd.allgather(torch.cat([q.detach().flatten() for q in model.parameters()]).unsqueeze(0))
    c.ok(not torch.equal(before[0], before[-1]), "inits differ before broadcast_parameters")
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    after = hvd.allgather(torch.cat([q.detach().flatten() for q in model.parameters()]).unsqueeze(0))
    c.ok(all(torch.equal(after[0], after[k]) for k in range(after.shape[0])),
         "parameters equal on every rank after broadcast_parameters")
    c.close(after[hvd.rank()], torch.cat([q.detach().flatten() for q in fresh(seed=100).parameters()]),
            "broadcast_parameters gives rank 0's init", 0, 0)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
