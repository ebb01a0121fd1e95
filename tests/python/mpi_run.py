#!/usr/bin/env python3
"""Runs one python test on N ranks and checks what only the launcher can see.

  mpi_run.py --np N [--launcher mpirun|hvdrun|hvdrun-tcp] [--env K=V ...] [--timeline NAME,...]
             [--survivors-raise] -- SCRIPT [ARGS...]

--launcher hvdrun starts the ranks with the project's hvdrun (its path in $HVDRUN; hvdrun-tcp:
hvdrun --tcp, without MPI),
mpirun with Open MPI's (localhost, oversubscribed, idle ranks yield). {tmp} in an --env
value is a fresh directory. --timeline NAME,... sets HOROVOD_TIMELINE and checks that every
rank's file parses and names each NAME. --survivors-raise is the killed-rank check: the job
fails, and every rank but the last prints "rank R raised after S s (stall ... T s): ... rank
N ..." (the time S is printed, not bounded: the stall shutdown's own error, which names the
peer, is what shows it fired); with --victim-named the message must name the last rank
itself ("rank N-1", or "not by ranks [.., N-1, ..]" from the stall inspector). The python is /usr/bin/python3 (or $HVD_PYTHON); PYTHONPATH gets
$HVD_PYTHONPATH (the build tree's python/) and this directory."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from verdict import verdict


def rank_path(path, rank):
    if rank == 0:
        return path
    base, ext = os.path.splitext(path)
    return f"{base}.rank{rank}{ext}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--launcher", default="mpirun", choices=["mpirun", "hvdrun", "hvdrun-tcp"])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--timeline", default="")
    ap.add_argument("--survivors-raise", action="store_true")
    ap.add_argument("--victim-named", action="store_true")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    tmp = tempfile.mkdtemp(prefix="hvd_pytest_")
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("HVD_PYTHONPATH", ""), here) if p)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v.replace("{tmp}", tmp)
    if a.timeline:
        env["HOROVOD_TIMELINE"] = os.path.join(tmp, "timeline.json")
    python = env.get("HVD_PYTHON", "/usr/bin/python3")
    if a.launcher == "hvdrun":
        launch = [env["HVDRUN"], "-np", str(a.np)]
    elif a.launcher == "hvdrun-tcp":  # no MPI: the TCP backend
        launch = [env["HVDRUN"], "--tcp", "-np", str(a.np)]
    else:
        launch = ["mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1",
                  "-np", str(a.np)]
        if a.survivors_raise:
            launch.append("--enable-recovery")  # the job outlives the killed rank
    full = launch + [python] + cmd
    print("mpi_run:", " ".join(full), flush=True)
    started = time.monotonic()
    try:
        proc = subprocess.run(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=a.timeout)
    except subprocess.TimeoutExpired as e:
        print((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""))
        print(f"FAIL: the job did not end within {a.timeout} s")
        return 1
    out = proc.stdout
    print(out, flush=True)
    print(f"mpi_run: the job exited with code {proc.returncode} after {time.monotonic() - started:.1f} s", flush=True)
    problems = []
    if a.survivors_raise:
        for r in range(a.np - 1):
            m = re.search(rf"^rank {r} raised after ([0-9.]+) s \(stall shutdown time [0-9.]+ s\): (.*)$", out, re.M)
            if not m:
                problems.append(f"rank {r} did not raise HvdError")
            elif not re.search(r"rank [0-9]+", m.group(2)):
                problems.append(f"rank {r}'s error names no peer: {m.group(2)[:200]}")
            elif a.victim_named and not re.search(rf"\brank {a.np - 1}\b|not by ranks \[([0-9]+, )*{a.np - 1}(, [0-9]+)*\]",
                                                  m.group(2)):
                problems.append(f"rank {r}'s error does not name the lost rank {a.np - 1}: {m.group(2)[:200]}")
        if "finished 1000 steps" in out:
            problems.append("a rank never noticed the dead rank")
    elif proc.returncode != 0:
        problems.append(f"the job exited with {proc.returncode}")
    if a.timeline:
        for r in range(a.np):
            path = rank_path(env["HOROVOD_TIMELINE"], r)
            try:
                with open(path) as f:
                    events = json.load(f)
            except (OSError, ValueError) as e:
                problems.append(f"timeline of rank {r} ({path}) does not parse: {e}")
                continue
            names = ",".join(str(ev.get("args", {}).get("names", "")) for ev in events)
            lanes = {ev.get("pid") for ev in events}
            if lanes != {r}:
                problems.append(f"timeline of rank {r} has lanes {sorted(lanes)}, expected [{r}]")
            for n in a.timeline.split(","):
                if n not in names:
                    problems.append(f"timeline of rank {r} never names {n}")
    return verdict(problems, tmp)


if __name__ == "__main__":
    sys.exit(main())
