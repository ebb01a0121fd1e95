#!/usr/bin/env python3
"""Data-parallel CNN training on synthetic images with hvd.torch — a port of the seed-style
Horovod PyTorch script (init, pin, scale lr by size, DistributedOptimizer, broadcast,
rank-0 checkpoint). Only the import differs from Horovod's:

    hvdrun -np 2 /usr/bin/python3 examples/pytorch/train_cnn.py --steps 30   (an interpreter with torch: Debian's)
    HVD_RECORD_TRACE=cnn.json /usr/bin/python3 examples/pytorch/train_cnn.py   (record the traffic)
    hvdsim scenarios/roce25.json --set workload.trace=cnn.json        (predict at scale)
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import hvd.torch as hvd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cnn_model import Net, synthetic_batch  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch-size", type=int, default=32, help="per rank (default 32)")
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    ap.add_argument("--lr", type=float, default=0.01, help="per-rank learning rate (x size)")
    ap.add_argument("--fp16-allreduce", action="store_true", help="Compression.fp16")
    ap.add_argument("--threads", type=int, default=0, help="torch threads per rank (0: cores / local size)")
    ap.add_argument("--checkpoint", default="", help="rank 0 saves the model here at the end")
    ap.add_argument("--record-trace", default="", help="record the gradient traffic as a model trace")
    args = ap.parse_args()

    hvd.init()
    # Pin: one share of the cores per local rank (Horovod pins a GPU per local rank).
    threads = args.threads or max(1, (os.cpu_count() or 1) // hvd.local_size())
    torch.set_num_threads(threads)
    torch.manual_seed(42)

    model = Net(args.image_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9)
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         compression=compression)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    if args.record_trace:
        hvd.record_trace(args.record_trace, steps=max(1, args.steps - 2), warmup=args.warmup + 1,
                         batch_size=args.batch_size, name="example-cnn", reference_gpu="P100")

    data, target = synthetic_batch(args.batch_size, args.image_size, seed=hvd.rank())

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(args.warmup):
        step()
    times = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        ts = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - ts)
    elapsed = time.perf_counter() - t0
    rate = args.batch_size * args.steps / elapsed
    total = hvd.allreduce(torch.tensor([rate]), op=hvd.Sum, name="images_per_sec").item()
    if hvd.rank() == 0:
        print(f"train_cnn: np={hvd.size()} batch={args.batch_size} step_s={elapsed / args.steps:.6f} "
              f"step_median_s={statistics.median(times):.6f} "
              f"images_per_sec={total:.1f} loss={loss.item():.4f}", flush=True)
        if args.checkpoint:
            torch.save(model.state_dict(), args.checkpoint)
    hvd.shutdown()


if __name__ == "__main__":
    main()
