#!/usr/bin/env python3
"""Record real, predict: the example CNN runs on one rank with HVD_RECORD_TRACE; the trace
it writes names every gradient, the last layer's first, and loads in hvdsim
(scenarios/roce25.json --set workload.trace=FILE, the recorded batch), whose np-1 step
computes exactly the recorded forward and backward time and adds the runtime's cycle on top.
The predicted step beside the step the example measured itself is printed, not asserted: a
wall-clock time on a loaded CI host is no bound to test against.

  trace_test.py HVDSIM SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

from verdict import verdict


def main():
    hvdsim, src = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="hvd_trace_")
    trace = os.path.join(tmp, "cnn.json")
    env = dict(os.environ, HVD_RECORD_TRACE=trace, HVD_RECORD_TRACE_STEPS="12",
               HVD_RECORD_TRACE_WARMUP="4", HVD_RECORD_TRACE_BATCH="16")
    env["PYTHONPATH"] = env.get("HVD_PYTHONPATH", "")
    python = env.get("HVD_PYTHON", "/usr/bin/python3")
    ex = subprocess.run([python, os.path.join(src, "examples/pytorch/train_cnn.py"), "--batch-size", "16",
                         "--warmup", "4", "--steps", "16", "--threads", "1"],
                        env=env, capture_output=True, text=True, timeout=300)
    print(ex.stdout + ex.stderr)
    m = re.search(r"step_median_s=([0-9.]+)", ex.stdout)
    if ex.returncode != 0 or not m:
        print("FAIL: the example did not run")
        return 1
    measured = float(m.group(1))
    with open(trace) as f:
        doc = json.load(f)
    names = [t["name"] for t in doc["tensors"]]
    problems = []
    if sorted(names) != sorted(f"allreduce.{n}" for n in
                               ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]):
        problems.append(f"trace tensors {names}")
    if names[0] not in ("allreduce.fc2.bias", "allreduce.fc2.weight"):
        problems.append(f"the first gradient ready is {names[0]}, expected the last layer's")
    report = os.path.join(tmp, "report.json")
    sim = subprocess.run([hvdsim, os.path.join(src, "scenarios/roce25.json"), "--set", f"workload.trace={trace}",
                          "--set", "sweep.np=[1]", "--set", "workload.batch_size=16",
                          "--set", "runtime.cycle_time_ms=1ms", "--report", report, "-q"],
                         capture_output=True, text=True, timeout=300)
    print(sim.stdout + sim.stderr)
    if sim.returncode != 0:
        print("FAIL: hvdsim did not load the recorded trace")
        return 1
    with open(report) as f:
        run = json.load(f)["runs"][0]
    predicted = run["step_time_s"]
    recorded = doc["fwd_s"] + doc["bwd_s"]
    if abs(run["compute_s"] - recorded) > 1e-3 * recorded:
        problems.append(f"hvdsim computes {run['compute_s'] * 1e3:.3f} ms a step, the trace recorded "
                        f"{recorded * 1e3:.3f} ms of forward and backward")
    # One rank: the step is the compute, then the last gradients' wait for the next 1 ms tick.
    if not recorded <= predicted <= recorded + 0.002:
        problems.append(f"predicted step {predicted * 1e3:.2f} ms against {recorded * 1e3:.2f} ms of compute")
    print(f"trace_test: recorded compute {recorded * 1e3:.2f} ms; measured np-1 step {measured * 1e3:.2f} ms, "
          f"hvdsim predicts {predicted * 1e3:.2f} ms "
          f"({(predicted - measured) / measured * 100:+.1f} %; printed, not asserted)")
    return verdict(problems, tmp)


if __name__ == "__main__":
    sys.exit(main())
