#!/usr/bin/env python3
"""Elastic training with hvd.torch (Horovod's elastic API): the job survives workers that
die and grows when discovery offers more slots.

    printf '#!/bin/sh\\necho localhost:2\\n' > hosts.sh && chmod +x hosts.sh
    PYTHONPATH=build/python build/bench/hvdbench/hvdrun -np 2 --min-np 1 --max-np 4 \\
        --host-discovery-script ./hosts.sh /usr/bin/python3 examples/pytorch/elastic_train.py

The state (model, optimizer, epoch and batch) is committed every --commit-every batches;
a failure rolls every worker back to the last commit, the world is rebuilt without the
lost worker, and training goes on from there at the new size.
"""
import argparse

import torch

import hvd.torch as hvd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--commit-every", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.01)
    a = ap.parse_args()

    hvd.init()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    base_opt = torch.optim.SGD(model.parameters(), lr=a.lr * hvd.size(), momentum=0.9)
    opt = hvd.DistributedOptimizer(base_opt, named_parameters=model.named_parameters())

    def rescale_lr():  # after every reset: the learning rate follows the world size
        for group in base_opt.param_groups:
            group["lr"] = a.lr * hvd.size()

    state = hvd.elastic.TorchState(model, opt, epoch=0, batch=0)
    state.register_reset_callbacks([rescale_lr])

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, a.epochs):
            for state.batch in range(state.batch, a.batches):
                g = torch.Generator().manual_seed(state.epoch * 10007 + state.batch * 31 + hvd.rank())
                x = torch.randn(64, 32, generator=g)
                y = x.sum(dim=1, keepdim=True).sin()
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                if state.batch % a.commit_every == 0:
                    state.commit()
            if hvd.rank() == 0:
                print(f"epoch {state.epoch}: size {hvd.size()} loss {loss.item():.4f}", flush=True)
            state.batch = 0
            state.commit()

    train(state)
    if hvd.rank() == 0:
        print("done", flush=True)


if __name__ == "__main__":
    main()
