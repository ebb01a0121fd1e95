#!/usr/bin/env python3
"""Elastic training end to end (label elastic): hvdrun --host-discovery-script runs
elastic_worker.py, the discovery script prints a file this test rewrites.

  elastic_test.py SCENARIO     (kill | hang | grow | reset_limit | kill_in_commit | bad_input | bad_hosts | tf_kill)

kill: np 2, worker 1 SIGKILLs itself mid-epoch -> np 1 -> the slot comes back after the
blacklist cooldown -> np 2; every worker reaches the last epoch with the same parameters
(tf_kill: the same with hvd.tensorflow's TensorFlowKerasState and a Keras model).
hang: as kill, but worker 1 SIGSTOPs itself (alive, silent): the survivor gives up on it after
the stall shutdown time and comes to the reset point; hvdrun kills the worker that does not
come, blacklists its host like a dead one's, and the job goes on as in kill.
grow: np 1, the test offers a second slot mid-run -> np 2 at the next commit, the new
worker gets the state by broadcast. reset_limit: more resets than --reset-limit -> one
clear error, exit 1. kill_in_commit: worker 1 dies inside commit. bad_input: flags -> one
line, exit 2. bad_hosts: discovery prints a bad host name -> refused; ssh exits 255 ->
"exited with code 255". Timeouts only catch hangs; times are printed, never asserted."""
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCHS = 14
LINE = re.compile(r"^elastic_worker: worker (\d+) (.*) t=([0-9.]+)$")


def start(tmp, hosts, flags, env_extra, epochs=EPOCHS, framework="torch"):
    with open(os.path.join(tmp, "hosts"), "w") as f:
        f.write(hosts + "\n")
    script = os.path.join(tmp, "discover.sh")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\ncat {tmp}/hosts\n")
    os.chmod(script, 0o755)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("HVD_PYTHONPATH", ""), HERE) if p)
    env["HVD_STALL_SHUTDOWN_TIME_SECONDS"] = "20"
    env.update(env_extra)
    cmd = [env["HVDRUN"]] + flags + ["--host-discovery-script", script, env.get("HVD_PYTHON", "/usr/bin/python3"),
                                     os.path.join(HERE, "elastic_worker.py"), "--epochs", str(epochs),
                                     "--framework", framework]
    print("elastic_test:", " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def collect(proc, on_line=None, timeout=240):
    """Every output line (echoed); kills the job if it has not ended by `timeout` (a hang)."""
    lines, deadline = [], time.monotonic() + timeout
    for line in proc.stdout:
        line = line.rstrip("\n")
        print(line, flush=True)
        lines.append(line)
        if on_line:
            on_line(line)
        if time.monotonic() > deadline:
            break
    try:
        proc.wait(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        print(f"FAIL: the job did not end within {timeout} s")
        sys.exit(1)
    return lines


def events(lines):
    out = []
    for line in lines:
        m = LINE.match(line)
        if m:
            out.append((m.group(1), m.group(2), float(m.group(3))))
    return out


def sizes_of(evs, worker="0"):
    """Worker's world size per epoch, consecutive repeats collapsed, and the raw list."""
    raw = [int(re.search(r"size (\d+)", t).group(1)) for w, t, _ in evs if w == worker and t.startswith("epoch ")]
    collapsed = [s for i, s in enumerate(raw) if i == 0 or raw[i - 1] != s]
    return collapsed, raw


def check_finished(evs, problems, size):
    done = [(w, t) for w, t, _ in evs if t.startswith("done ")]
    sums = {re.search(r"checksum (\w+)", t).group(1) for _, t in done}
    last = {w for w, t, _ in evs if t.startswith(f"epoch {EPOCHS - 1} ")}
    if len(done) != size or len(sums) != 1:
        problems.append(f"want {size} workers done with one checksum, got {done}")
    if len(last) != size:
        problems.append(f"want {size} workers at the last epoch {EPOCHS - 1}, got {sorted(last)}")


def resume_time(evs, marker):
    killed = [t for w, text, t in evs if marker in text]
    resumed = [t for w, text, t in evs if w == "0" and text.startswith("synced") and killed and t > killed[0]]
    if killed and resumed:
        print(f"elastic_test: kill -> training resumed (worker 0 synced) in {resumed[0] - killed[0]:.2f} s")


def scenario_kill(tmp, in_commit=False, framework="torch"):
    env = {"ELASTIC_KILL_IN_COMMIT": "1"} if in_commit else {"ELASTIC_KILL": "1:2:3"}
    proc = start(tmp, "localhost:2", ["-np", "2", "--min-np", "1", "--max-np", "2",
                                      "--blacklist-cooldown-range", "1", "1.5"], env, framework=framework)
    lines = collect(proc)
    evs, problems = events(lines), []
    if proc.returncode != 0:
        problems.append(f"hvdrun exited with {proc.returncode}, want 0")
    collapsed, raw = sizes_of(evs)
    print(f"elastic_test: worker 0's size per epoch: {raw} (changes: {collapsed})")
    if collapsed != [2, 1, 2]:
        problems.append(f"sizes over epochs {collapsed}, want [2, 1, 2]")
    check_finished(evs, problems, 2)
    resume_time(evs, "kills itself")
    return problems


def scenario_hang(tmp):
    proc = start(tmp, "localhost:2", ["-np", "2", "--min-np", "1", "--max-np", "2",
                                      "--blacklist-cooldown-range", "1", "1.5"],
                 {"ELASTIC_HANG": "1:2:3", "HVD_STALL_CHECK_TIME_SECONDS": "2", "HVD_STALL_SHUTDOWN_TIME_SECONDS": "8"})
    lines = collect(proc)
    evs, problems = events(lines), []
    if proc.returncode != 0:
        problems.append(f"hvdrun exited with {proc.returncode}, want 0")
    hung = [l for l in lines if re.search(r"worker 1 \(localhost slot 1\) did not come to the reset point .* it hangs", l)]
    if len(hung) != 1:
        problems.append(f"want one line naming hung worker 1, got {hung}")
    if not any("blacklisting host localhost" in l for l in lines):
        problems.append("the hung worker's host was not blacklisted")
    collapsed, raw = sizes_of(evs)
    print(f"elastic_test: worker 0's size per epoch: {raw} (changes: {collapsed})")
    if collapsed != [2, 1, 2]:
        problems.append(f"sizes over epochs {collapsed}, want [2, 1, 2]")
    check_finished(evs, problems, 2)
    resume_time(evs, "hangs (SIGSTOP)")
    return problems


def scenario_grow(tmp):
    grown = []

    def on_line(line):
        if not grown and re.match(r"^elastic_worker: worker 0 epoch 1 ", line):
            with open(os.path.join(tmp, "hosts"), "w") as f:
                f.write("localhost:2\n")
            grown.append(time.time())
            print(f"elastic_test: discovery now offers localhost:2 t={grown[0]:.3f}", flush=True)

    proc = start(tmp, "localhost:1", ["-np", "1", "--min-np", "1", "--max-np", "2"], {})
    evs, problems = events(collect(proc, on_line)), []
    if proc.returncode != 0:
        problems.append(f"hvdrun exited with {proc.returncode}, want 0")
    collapsed, raw = sizes_of(evs)
    print(f"elastic_test: worker 0's size per epoch: {raw} (changes: {collapsed})")
    if collapsed != [1, 2]:
        problems.append(f"sizes over epochs {collapsed}, want [1, 2]")
    synced = [int(re.search(r"epoch (\d+)", t).group(1)) for w, t, _ in evs if w == "1" and t.startswith("synced")]
    if not synced or synced[0] < 2:
        problems.append(f"the new worker should get the trained state (epoch >= 2) by broadcast, got {synced}")
    check_finished(evs, problems, 2)
    return problems


def scenario_reset_limit(tmp):
    proc = start(tmp, "localhost:2", ["-np", "2", "--min-np", "1", "--reset-limit", "2",
                                      "--blacklist-cooldown-range", "1", "1"], {"ELASTIC_KILL": "1:1:2,2:1:2"})
    lines = collect(proc)
    problems = []
    if proc.returncode != 1:
        problems.append(f"hvdrun exited with {proc.returncode}, want 1")
    errs = [l for l in lines if "exceeding --reset-limit 2" in l]
    if len(errs) != 1 or not errs[0].startswith("hvdrun: elastic: the job has been reset 2 time(s)"):
        problems.append(f"want one line about --reset-limit 2, got {errs}")
    if any(t.startswith("done ") for _, t, _ in events(lines)):
        problems.append("the job should have stopped before finishing")
    return problems


def scenario_bad_input(tmp):
    hvdrun, problems = os.environ["HVDRUN"], []
    cases = [
        (["-np", "2", "--min-np", "3", "--host-discovery-script", "true", "x"], "hvdrun: --min-np 3 is more than -np 2"),
        (["-np", "2", "--min-np", "1", "x"], "hvdrun: --min-np is for elastic mode: give --host-discovery-script too"),
        (["-np", "2", "--host-discovery-script", "true", "--blacklist-cooldown-range", "5", "1", "x"],
         "hvdrun: --blacklist-cooldown-range takes two seconds MIN MAX with 0 < MIN <= MAX"),
        (["-np", "2", "-H", "a:2", "--host-discovery-script", "true", "x"],
         "hvdrun: -H/--hostfile name fixed hosts; in elastic mode --host-discovery-script names them"),
        (["-np", "2", "--mpi", "--host-discovery-script", "true", "x"],
         "hvdrun: --mpi and --host-discovery-script are exclusive: elastic mode runs over TCP, without MPI"),
        (["-np", "2", "--host-discovery-script", "true", "--reset-limit", "-1", "x"],
         "hvdrun: --reset-limit must be 0 or more (got -1)"),
    ]
    for args, want in cases:
        p = subprocess.run([hvdrun] + args, capture_output=True, text=True, timeout=60)
        out = (p.stdout + p.stderr).strip()
        print(f"{' '.join(args)} -> {out!r} (exit {p.returncode})")
        if p.returncode != 2 or out != want:
            problems.append(f"{args}: want {want!r} and exit 2")
    return problems


def scenario_bad_hosts(tmp):
    """Discovery printing a host name no host can have is refused like a bad slot count (no
    worker starts on it); a worker whose ssh exits 255 "exited with code 255" (not "killed
    by signal 127")."""
    hvdrun, problems = os.environ["HVDRUN"], []
    garbage = os.path.join(tmp, "garbage.sh")
    with open(garbage, "w") as f:
        f.write("#!/bin/sh\necho 'garbage line !!'\n")
    os.chmod(garbage, 0o755)
    p = subprocess.run([hvdrun, "-np", "1", "--host-discovery-script", garbage, "--elastic-timeout", "2", "true"],
                       capture_output=True, text=True, timeout=120)
    out = p.stdout + p.stderr
    print(out, f"(exit {p.returncode})", flush=True)
    refused = [l for l in out.splitlines() if "printed 'garbage line !!' (want host:slots; a host name has" in l]
    if p.returncode != 1 or not refused or "started worker" in out:
        problems.append("a discovered host name with spaces was not refused (or exit not 1)")
    remote = os.path.join(tmp, "remote.sh")
    with open(remote, "w") as f:
        f.write("#!/bin/sh\necho otherhost.invalid:1\n")
    fake_ssh = os.path.join(tmp, "ssh255.sh")
    with open(fake_ssh, "w") as f:
        f.write("#!/bin/sh\nexit 255\n")
    for path in (remote, fake_ssh):
        os.chmod(path, 0o755)
    p = subprocess.run([hvdrun, "-np", "1", "--host-discovery-script", remote, "--elastic-timeout", "5", "true"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, HVDRUN_SSH=fake_ssh))
    out = p.stdout + p.stderr
    print(out, f"(exit {p.returncode})", flush=True)
    if "worker 0 (otherhost.invalid slot 0) exited with code 255" not in out or "killed by signal" in out:
        problems.append("ssh's exit code 255 was not reported as 'exited with code 255'")
    if p.returncode != 1:
        problems.append(f"hvdrun exited with {p.returncode}, want 1 (every worker failed)")
    return problems


def main():
    name = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="hvd_elastic_")
    run = {"kill": scenario_kill, "hang": scenario_hang, "grow": scenario_grow, "reset_limit": scenario_reset_limit,
           "kill_in_commit": lambda t: scenario_kill(t, in_commit=True), "bad_input": scenario_bad_input,
           "tf_kill": lambda t: scenario_kill(t, framework="tf"),
           "bad_hosts": scenario_bad_hosts}[name]
    problems = run(tmp)
    for p in problems:
        print("FAIL:", p)
    print("PASS" if not problems else f"FAIL ({len(problems)} problem(s))")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
