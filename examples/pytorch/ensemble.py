#!/usr/bin/env python3
"""Ensemble training with hvd.torch: every rank trains its own model on its own synthetic
data (no gradient exchange), and one allgather at the end brings every member's
predictions on a shared evaluation batch to every rank, which averages them.

    hvdrun -np 3 /usr/bin/python3 examples/pytorch/ensemble.py   (an interpreter with torch: Debian's)
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

import hvd.torch as hvd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cnn_model import Net, synthetic_batch  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--image-size", type=int, default=16)
    args = ap.parse_args()
    hvd.init()
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // hvd.local_size()))
    torch.manual_seed(1000 + hvd.rank())  # every member its own init
    model = Net(args.image_size)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data, target = synthetic_batch(args.batch_size, args.image_size, seed=100 + hvd.rank())
    for _ in range(args.steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        opt.step()
    # One collective: every member's class probabilities on the same evaluation batch.
    eval_data, eval_target = synthetic_batch(8, args.image_size, seed=7)
    with torch.no_grad():
        probs = F.softmax(model(eval_data), dim=1)
    members = hvd.allgather(probs.unsqueeze(0), name="ensemble.probs")  # [size, 8, classes]
    ensemble = members.mean(0)
    accuracy = (ensemble.argmax(1) == eval_target).float().mean().item()
    if hvd.rank() == 0:
        print(f"ensemble: {members.shape[0]} members, final member loss {loss.item():.4f}, "
              f"ensemble accuracy on the evaluation batch {accuracy:.3f}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
