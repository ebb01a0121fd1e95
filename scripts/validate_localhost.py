#!/usr/bin/env python3
"""The calibration validation loop on this machine (docs/simulator.md, "Calibration from
measurements"): for each np, calibrate (hvdbench --calibrate), then measure hvdbench
--model resnet50 and an allreduce sweep and predict both with hvdsim and the calibration,
each measurement next to its prediction in time. Repeats R rounds and prints the median
of each figure (the machine is shared: single runs are noisy).

  scripts/validate_localhost.py [--build build] [--np 2 4] [--rounds 3] [--gpu P100 H100]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def step_of(report, np):
    for run in json.load(open(report))["runs"]:
        if run["np"] == np and run["label"] == "":
            return run["step_time_s"], run["images_per_sec"]
    sys.exit(f"no np={np} run in {report}")


def sweep_rows(text):
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if line.startswith("#") or len(f) < 5 or not re.match(r"^\d+$", f[0]):
            continue
        rows[int(f[0])] = float(f[4]) if len(f) > 8 else float(f[2])  # hvdbench: hvd column
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--np", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gpu", nargs="+", default=["P100", "H100"])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50, help="allreduce sweep: timed calls per size")
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench/hvdbench/hvdbench")
    sim = os.path.join(a.build, "simulator/hvdsim")
    tmp = tempfile.mkdtemp(prefix="hvd_validate_")
    model = {}  # (np, gpu) -> lists
    sweep = {}  # (np, bytes) -> lists
    for rnd in range(a.rounds):
        for np in a.np:
            calib = os.path.join(tmp, f"calib_np{np}_{rnd}.json")
            sh([bench, "--calibrate", calib, "-np", str(np), "-q"])
            sets = ["--set", f"calibration={calib}", "--set", f"sweep.np=[{np}]"]
            for gpu in a.gpu:
                real = os.path.join(tmp, f"real_{np}_{gpu}_{rnd}.json")
                pred = os.path.join(tmp, f"sim_{np}_{gpu}_{rnd}.json")
                sh([bench, "--model", "resnet50", "--gpu", gpu, "-np", str(np), "--steps",
                    str(a.steps), "--no-baseline", "-q", "--report", real])
                sh([sim, "scenarios/localhost.json", *sets, "--set", f"cluster.gpu={gpu}", "-q",
                    "--report", pred])
                m = model.setdefault((np, gpu), {"real": [], "sim": [], "real_ips": [], "sim_ips": []})
                s, i = step_of(real, np)
                m["real"].append(s), m["real_ips"].append(i)
                s, i = step_of(pred, np)
                m["sim"].append(s), m["sim_ips"].append(i)
            # One hvdbench run per size: its MPI baseline phase (every size) would otherwise run
            # right before the small sizes, and a busy host answers late after heavy work.
            real = {}
            for size in [8 * 8**k for k in range(8)]:
                # Small sizes take microseconds: 10x the calls cost nothing and keep a few slow
                # first calls of a fresh process from setting the figure.
                iters = a.iters * 10 if size <= 32768 else a.iters
                real.update(sweep_rows(sh([bench, "--collective", "allreduce", "-b", str(size), "-e",
                                           str(size), "-np", str(np), "-n", str(iters), "-w", "10"])))
            pred = sweep_rows(sh([sim, "scenarios/localhost.json", *sets, "--collective",
                                  "allreduce", "-b", "8", "-e", "64M", "-f", "8", "--np", str(np),
                                  "-n", str(a.iters), "-w", "10"]))
            for b, t in real.items():
                d = sweep.setdefault((np, b), {"real": [], "sim": []})
                d["real"].append(t)
                d["sim"].append(pred.get(b, float("nan")))
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    # Every figure of every round, for analysis after the fact (re-predicting from the
    # calibrations kept next to it, with a changed model, compares against the same runs).
    with open(os.path.join(tmp, "results.json"), "w") as f:
        json.dump({"model": [{"np": np, "gpu": gpu, **m} for (np, gpu), m in sorted(model.items())],
                   "sweep": [{"np": np, "bytes": b, **d} for (np, b), d in sorted(sweep.items())]},
                  f, indent=1)
    med = statistics.median

    def spread(real, sim):  # per-round errors (each prediction against its own measurement)
        e = sorted(100 * (s - r) / r for r, s in zip(real, sim))
        return f"{e[0]:+.0f} … {e[-1]:+.0f} %"

    # Interference on a shared host only ever slows a run down, so besides the medians the
    # tables give the best round of each side (each prediction comes from its own round's
    # calibration): the figure both sides reach when the host leaves them alone.
    def err(r, s):
        return f"{100 * (s - r) / r:+.1f} %"

    print("| model | GPU (emulated) | np | measured step ms | predicted step ms | error | "
          "best measured | best predicted | error of bests | per-round errors | "
          "measured images/s | predicted images/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (np, gpu), m in sorted(model.items()):
        r, s = med(m["real"]), med(m["sim"])
        br, bs = min(m["real"]), min(m["sim"])
        print(f"| resnet50 | {gpu} | {np} | {r * 1e3:.1f} | {s * 1e3:.1f} | {err(r, s)} | "
              f"{br * 1e3:.1f} | {bs * 1e3:.1f} | {err(br, bs)} | "
              f"{spread(m['real'], m['sim'])} | {med(m['real_ips']):.1f} | {med(m['sim_ips']):.1f} |")
    print()
    print("| allreduce float32 (bytes) | np | measured us | predicted us | error | best measured | "
          "best predicted | error of bests | per-round errors |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (np, b), d in sorted(sweep.items()):
        r, s = med(d["real"]), med(d["sim"])
        br, bs = min(d["real"]), min(d["sim"])
        print(f"| {b} | {np} | {r:.1f} | {s:.1f} | {err(r, s)} | {br:.1f} | {bs:.1f} | {err(br, bs)} | "
              f"{spread(d['real'], d['sim'])} |")
    print(f"\n(median and best of {a.rounds} rounds; raw files and results.json in {tmp})")


if __name__ == "__main__":
    main()
