#!/usr/bin/env python3
"""A killed rank (SIGKILL in the middle of training-like allreduces, np 3): the others must
raise HvdError naming the lost peer within the stall shutdown time, not hang. Each survivor
prints "rank R raised after S s: <message>" and leaves with exit code 3 (MPI cannot be
finalized with a dead peer); mpi_run.py checks the lines."""
import os
import signal
import sys
import time

import torch

import hvd.torch as hvd


def main():
    hvd.init()
    victim = hvd.size() - 1
    stall = float(os.environ["HVD_STALL_SHUTDOWN_TIME_SECONDS"])
    model = torch.nn.Linear(256, 256)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                   named_parameters=model.named_parameters())
    x = torch.randn(8, 256)
    for step in range(1000):
        if step == 5 and hvd.rank() == victim:
            os.kill(os.getpid(), signal.SIGKILL)
        started = time.monotonic()
        try:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        except hvd.HvdError as e:
            waited = time.monotonic() - started
            print(f"rank {hvd.rank()} raised after {waited:.1f} s (stall shutdown time {stall:g} s): {e}",
                  flush=True)
            os._exit(3)
    print(f"rank {hvd.rank()} finished 1000 steps without noticing the dead rank", flush=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
