"""Rank script of uncaught_failure_test.py: rank 1 dies after 3 allreduces, rank 0 does not
catch the failure."""
import os
import signal

import torch

import hvd.torch as hvd

hvd.init()
for step in range(100000):
    if step == 3 and hvd.rank() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    hvd.allreduce(torch.ones(1000), name=f"t{step % 4}")
