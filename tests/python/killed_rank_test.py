#!/usr/bin/env python3
"""A lost rank (np 3): the others must raise HvdError naming the lost peer within the stall
shutdown time, not hang. Each survivor prints "rank R raised after S s: <message>" and leaves
with exit code 3 (MPI cannot be finalized with a dead peer); mpi_run.py checks the lines.

  killed_rank_test.py [--fault kill|stop|kill-mid-message]

kill (default): the last rank SIGKILLs itself between training-like allreduces. stop: it
SIGSTOPs itself (alive, silent: its sockets stay open; a watchdog SIGKILLs it 60 s later so
nothing outlives the test). kill-mid-message: a process it starts SIGKILLs it 50 ms into a
64 MiB allreduce, so its peers lose it in the middle of a message."""
import argparse
import os
import signal
import subprocess
import sys
import time

import torch

import hvd.torch as hvd


def lose_myself(fault):
    if fault == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif fault == "stop":
        later(60)
        os.kill(os.getpid(), signal.SIGSTOP)
    else:
        later(0.05)  # another process: no GIL or blocked call delays it


def later(seconds):
    """SIGKILLs this process `seconds` from now, from a process of its own (its output is not
    the job's, so the launcher does not wait for it)."""
    subprocess.Popen(["sh", "-c", f"sleep {seconds}; kill -9 {os.getpid()} 2>/dev/null"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", default="kill", choices=["kill", "stop", "kill-mid-message"])
    fault = ap.parse_args().fault
    hvd.init()
    victim = hvd.size() - 1
    stall = float(os.environ["HVD_STALL_SHUTDOWN_TIME_SECONDS"])
    model = torch.nn.Linear(256, 256)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                   named_parameters=model.named_parameters())
    x = torch.randn(8, 256)
    for step in range(1000):
        if step == 5 and hvd.rank() == victim:
            lose_myself(fault)
        started = time.monotonic()
        try:
            if fault == "kill-mid-message" and step >= 5:
                hvd.allreduce(torch.ones(16 << 20), name=f"big.{step}")
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
