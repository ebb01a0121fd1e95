#!/usr/bin/env python3
"""A model wrapped by torch.compile trains under hvd.DistributedOptimizer: each rank runs
the compiled model on its shard of the batch, the gradients are averaged through the
optimizer's hooks, and after a few steps the weights equal those of one process training
the uncompiled model on the whole (concatenated) batch. Any np."""
import sys

import torch

import hvd.torch as hvd
from harness import Checks

STEPS, ROWS = 4, 6  # rows per rank


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def batch(step, p):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(p * ROWS, 5, generator=g), torch.randn(p * ROWS, 3, generator=g)


def main():
    hvd.init()
    c = Checks("compile_test")
    r, p = hvd.rank(), hvd.size()
    model = make_model()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    compiled = torch.compile(model)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                   named_parameters=model.named_parameters())
    ref = make_model()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        x, y = batch(step, p)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(compiled(x[r * ROWS:(r + 1) * ROWS]), y[r * ROWS:(r + 1) * ROWS])
        loss.backward()
        # The hooks fired during the compiled backward: every gradient is already submitted.
        c.ok(len(opt._handles) == 4, f"step {step}: {len(opt._handles)} of 4 gradients submitted by backward")
        opt.step()
        ref_opt.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y).backward()
        ref_opt.step()
    from torch._dynamo.utils import counters
    c.ok(counters["stats"]["unique_graphs"] >= 1, f"torch.compile made a graph: {dict(counters['stats'])}")
    for (name, a), (_, b) in zip(model.named_parameters(), ref.named_parameters()):
        c.close(a.detach(), b.detach(), f"{name} after {STEPS} steps vs one process on the whole batch",
                rtol=1e-4, atol=1e-5)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
