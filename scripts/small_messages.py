#!/usr/bin/env python3
"""Small-message latency of hvd against MPI_Allreduce, measured in the same runs: runs
hvdbench --collective allreduce R times per np and prints, per size, the median time of hvd,
of MPI_Allreduce and of the ring-neighbour exchange, hvd / MPI and hvd / exchange
(docs/benchmarks.md, "Small messages"). The machine is shared and timings stray from run to run: the median of
several rounds is what the table reports, with the spread of the ratio.

  scripts/small_messages.py [--build build] [--np 2 4] [--rounds 5] [-b 8] [-e 4K] [-f 8]
                            [-n 5000] [-w 500] [--extra "--cycle-time-ms 0"]
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(args, np):
    exe = os.path.join(args.build, "bench", "hvdbench", "hvdbench")
    cmd = [exe, "--collective", "allreduce", "-np", str(np), "-b", args.b, "-e", args.e,
           "-f", str(args.f), "-n", str(args.n), "-w", str(args.w)] + args.extra.split()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}{r.stdout[-2000:]}")
    rows = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 13 and f[0].isdigit():
            # size count type redop | hvd time algbw busbw wrong | mpi time algbw busbw wrong | exch time bw
            # (np 1: the exchange is n/a)
            rows[int(f[0])] = (float(f[4]), float(f[8]), float(f[12]) if f[12] != "n/a" else float("nan"))
    if not rows:
        sys.exit("no rows in hvdbench's output:\n" + r.stdout)
    return rows


def size_text(b):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--np", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="4K")
    ap.add_argument("-f", type=int, default=8)
    ap.add_argument("-n", type=int, default=5000)
    ap.add_argument("-w", type=int, default=500)
    ap.add_argument("--extra", default="", help="more hvdbench flags, one string")
    args = ap.parse_args()
    print("| np | size | hvd (us) | MPI_Allreduce (us) | exchange (us) | hvd / MPI (median, min-max over rounds) | hvd / exchange |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for np in args.np:
        runs = [run_once(args, np) for _ in range(args.rounds)]
        for size in sorted(runs[0]):
            hvd = [r[size][0] for r in runs]
            mpi = [r[size][1] for r in runs]
            ex = [r[size][2] for r in runs]
            ratios = [h / m for h, m in zip(hvd, mpi) if m > 0] or [float("nan")]
            print(f"| {np} | {size_text(size)} | {statistics.median(hvd):.2f} | {statistics.median(mpi):.2f} | "
                  f"{statistics.median(ex):.2f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
                  f"{statistics.median(hvd) / statistics.median(ex):.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
