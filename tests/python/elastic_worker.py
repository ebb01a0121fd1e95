#!/usr/bin/env python3
"""The training script of the elastic tests (run by hvdrun --host-discovery-script): a small
model trained with hvd.elastic.run + TorchState, committing at the end of every epoch. It
prints one line per epoch ("elastic_worker: worker W epoch E size S rank R t=T"), one per
reset and, at the end, the checksum of its parameters. ELASTIC_KILL="W:E:S[,...]" makes
worker W SIGKILL itself at step S of the first epoch >= E; ELASTIC_KILL_IN_COMMIT=W kills worker W inside
its first commit at size > 1 (after saving, before the generation check)."""
import argparse
import hashlib
import os
import signal
import sys
import time

import torch

import hvd.torch as hvd

ME = os.environ.get("HVD_ELASTIC_WORKER", "?")


def say(text):
    sys.stdout.write(f"elastic_worker: worker {ME} {text} t={time.time():.3f}\n")  # one write: no interleaving
    sys.stdout.flush()


def kills():
    out = set()
    for item in filter(None, os.environ.get("ELASTIC_KILL", "").split(",")):
        w, e, s = item.split(":")
        out.add((w, int(e), int(s)))
    return out


class State(hvd.elastic.TorchState):
    def commit(self):
        self.save()
        if os.environ.get("ELASTIC_KILL_IN_COMMIT") == ME and hvd.size() > 1:
            say("kills itself inside commit")
            os.kill(os.getpid(), signal.SIGKILL)
        self.check_host_updates()


def batch(epoch, step, rank):
    g = torch.Generator().manual_seed(epoch * 100003 + step * 101 + rank)
    x = torch.randn(32, 16, generator=g)
    return x, x[:, :4] * 2.0 - 1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--step-time", type=float, default=0.05)
    a = ap.parse_args()
    hvd.init()
    say(f"joined at size {hvd.size()} rank {hvd.rank()}")
    torch.manual_seed(int(ME) if ME.isdigit() else 0)  # different on purpose: sync must fix it
    model = torch.nn.Linear(16, 4)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                                   named_parameters=model.named_parameters())
    state = State(model, opt, epoch=0)
    state.register_reset_callbacks([lambda: say(f"reset: now rank {hvd.rank()} of size {hvd.size()}")])
    todo = kills()

    @hvd.elastic.run
    def train(state):
        say(f"synced at epoch {state.epoch} size {hvd.size()}")
        for state.epoch in range(state.epoch, a.epochs):
            for step in range(a.steps):
                if any(w == ME and state.epoch >= e and step == s for w, e, s in todo):
                    say(f"kills itself at epoch {state.epoch} step {step}")
                    os.kill(os.getpid(), signal.SIGKILL)
                x, y = batch(state.epoch, step, hvd.rank())
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
                time.sleep(a.step_time)
            say(f"epoch {state.epoch} size {hvd.size()} rank {hvd.rank()}")
            state.epoch += 1
            state.commit()

    train(state)
    flat = torch.cat([p.detach().reshape(-1).double() for p in model.parameters()])
    say(f"done rank {hvd.rank()} size {hvd.size()} checksum {hashlib.sha1(flat.numpy().tobytes()).hexdigest()[:16]}")
    hvd.shutdown()


if __name__ == "__main__":
    main()
