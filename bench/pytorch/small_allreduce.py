#!/usr/bin/env python3
"""Time per call of hvd.torch.allreduce of a small tensor (a scalar by default) against
torch.distributed.all_reduce on a gloo process group, in the same ranks and the same run
(started by hvdrun: each rank joins both; rounds alternate the two so that a busy machine
hurts both alike). Prints the median round of each, the slowest rank's mean per call.
A benchmark: it prints figures (docs/benchmarks.md, "Small messages").

  PYTHONPATH=build/python /usr/bin/python3 bench/pytorch/small_allreduce.py [--np 2] [--elements 1]
      [--calls 2000] [--rounds 5]
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


def worker(a):
    import torch
    import torch.distributed as dist
    import hvd.torch as hvd
    hvd.init()
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{a.port}", rank=hvd.rank(),
                            world_size=hvd.size())
    x = torch.ones(a.elements)
    want = float(hvd.size())

    def time_hvd():
        for _ in range(50):
            hvd.allreduce(x, op=hvd.Sum, name="small")
        t0 = time.perf_counter()
        for _ in range(a.calls):
            y = hvd.allreduce(x, op=hvd.Sum, name="small")
        dt = time.perf_counter() - t0
        assert y[0].item() == want, y
        return dt / a.calls

    def time_gloo():
        y = torch.empty_like(x)
        for _ in range(50):
            y.copy_(x)
            dist.all_reduce(y)
        t0 = time.perf_counter()
        for _ in range(a.calls):
            y.copy_(x)  # out of place, as hvd.allreduce returns a new tensor
            dist.all_reduce(y)
        dt = time.perf_counter() - t0
        assert y[0].item() == want, y
        return dt / a.calls

    rows = []
    for _ in range(a.rounds):
        h = time_hvd()
        g = time_gloo()
        # The slowest rank's figure, through hvd (both ranks have both by now).
        both = hvd.allreduce(torch.tensor([h, g], dtype=torch.float64), op=hvd.Max, name="times")
        rows.append((both[0].item(), both[1].item()))
    if hvd.rank() == 0:
        h = statistics.median(r[0] for r in rows) * 1e6
        g = statistics.median(r[1] for r in rows) * 1e6
        print(f"RESULT hvd_us={h:.2f} gloo_us={g:.2f}", flush=True)
    dist.destroy_process_group()
    hvd.shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, nargs="+", default=[2])
    ap.add_argument("--elements", type=int, default=1, help="float32 elements per tensor (1: a scalar)")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--hvdrun", default=os.path.join(ROOT, "build", "bench", "hvdbench", "hvdrun"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print(f"small_allreduce: {a.elements} float32 element(s), {a.calls} calls per round, {a.rounds} rounds "
          f"(median), {os.cpu_count()} cores")
    print(f"{'np':>3} {'hvd.torch (us)':>15} {'gloo (us)':>10} {'hvd/gloo':>9}")
    for np_ in a.np:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cmd = [a.hvdrun, "-np", str(np_), sys.executable, os.path.abspath(__file__), "--worker", "--port", str(port),
               "--elements", str(a.elements), "--calls", str(a.calls), "--rounds", str(a.rounds)]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        m = re.search(r"RESULT hvd_us=([0-9.]+) gloo_us=([0-9.]+)", out.stdout)
        if out.returncode != 0 or not m:
            sys.exit(f"small_allreduce: {' '.join(cmd)[:200]} failed (exit {out.returncode}):\n"
                     f"{out.stdout[-2000:]}{out.stderr[-2000:]}")
        h, g = float(m.group(1)), float(m.group(2))
        print(f"{np_:>3} {h:>15.2f} {g:>10.2f} {h / g:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
