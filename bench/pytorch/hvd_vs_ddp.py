#!/usr/bin/env python3
"""Images/s of the example CNN (examples/pytorch/cnn_model.py) trained data-parallel with
hvd.torch (DistributedOptimizer on the hvd runtime, started by hvdrun) and with
torch.nn.parallel.DistributedDataParallel (gloo backend, torch.multiprocessing), same
model, batch, threads per rank and steps, at np 1 and 2, in one run (rounds alternate
the two so that a busy machine hurts both alike). A benchmark: it prints figures.

  PYTHONPATH=build/python /usr/bin/python3 bench/pytorch/hvd_vs_ddp.py [--np 1 2] [--rounds 2]
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "pytorch"))


def train(model, opt, data, target, warmup, steps):
    import torch.nn.functional as F
    for i in range(warmup + steps):
        if i == warmup:
            t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(data), target).backward()
        opt.step()
    return time.perf_counter() - t0


def hvd_worker(a):
    import torch
    import hvd.torch as hvd
    from cnn_model import Net, synthetic_batch
    hvd.init()
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)
    model = Net(a.image_size)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size(), momentum=0.9),
                                   named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    data, target = synthetic_batch(a.batch_size, a.image_size, seed=hvd.rank())
    elapsed = train(model, opt, data, target, a.warmup, a.steps)
    total = hvd.allreduce(torch.tensor([a.batch_size * a.steps / elapsed]), op=hvd.Sum, name="rate").item()
    if hvd.rank() == 0:
        print(f"RESULT images_per_sec={total:.2f}", flush=True)
    hvd.shutdown()


def ddp_rank(rank, a, port):
    import torch
    import torch.distributed as dist
    from cnn_model import Net, synthetic_batch
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=a.np)
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)
    model = torch.nn.parallel.DistributedDataParallel(Net(a.image_size))
    opt = torch.optim.SGD(model.parameters(), lr=0.01 * a.np, momentum=0.9)
    data, target = synthetic_batch(a.batch_size, a.image_size, seed=rank)
    elapsed = train(model, opt, data, target, a.warmup, a.steps)
    rate = torch.tensor([a.batch_size * a.steps / elapsed])
    dist.all_reduce(rate)
    if rank == 0:
        print(f"RESULT images_per_sec={rate.item():.2f}", flush=True)
    dist.destroy_process_group()


def ddp_worker(a):
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(ddp_rank, args=(a, port), nprocs=a.np, join=True)


def run(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    m = re.search(r"RESULT images_per_sec=([0-9.]+)", out.stdout)
    if out.returncode != 0 or not m:
        sys.exit(f"hvd_vs_ddp: {' '.join(cmd)[:200]} failed (exit {out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--hvdrun", default=os.path.join(ROOT, "build", "bench", "hvdbench", "hvdrun"))
    ap.add_argument("--worker", choices=["hvd", "ddp"], help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.np = a.np[0]
    if a.worker == "hvd":
        return hvd_worker(a)
    if a.worker == "ddp":
        return ddp_worker(a)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cores = os.cpu_count() or 1
    common = ["--batch-size", str(a.batch_size), "--image-size", str(a.image_size), "--steps", str(a.steps),
              "--warmup", str(a.warmup)]
    print(f"hvd_vs_ddp: example CNN, batch {a.batch_size} per rank, {a.image_size}x{a.image_size} images, "
          f"{a.steps} timed steps, {a.rounds} rounds, {cores} cores")
    print(f"{'np':>3} {'threads':>7} {'hvd.torch img/s':>16} {'DDP gloo img/s':>15} {'hvd/DDP':>8}")
    for np_ in a.np:
        threads = max(1, cores // np_)
        base = [sys.executable, os.path.abspath(__file__), *common, "--threads", str(threads), "--np", str(np_)]
        hvd_rates, ddp_rates = [], []
        for _ in range(a.rounds):
            hvd_rates.append(run([a.hvdrun, "-np", str(np_)] + base + ["--worker", "hvd"], env))
            ddp_rates.append(run(base + ["--worker", "ddp"], env))
        h, d = statistics.mean(hvd_rates), statistics.mean(ddp_rates)
        print(f"{np_:>3} {threads:>7} {h:>16.1f} {d:>15.1f} {h / d:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
