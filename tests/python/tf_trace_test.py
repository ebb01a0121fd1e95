#!/usr/bin/env python3
"""Record real, predict, for TensorFlow: a Keras CNN trains with model.fit and
hvd.keras.DistributedOptimizer at np 2 under hvdrun with HVD_RECORD_TRACE. The trace rank 0
writes names the gradient of every trainable variable once (Keras' variable paths), with
its elements and shape, the last layer's gradients first; hvdsim loads it
(scenarios/roce25.json --set workload.trace=FILE, the recorded batch), and its np-1 step
computes exactly the recorded forward and backward time. The predicted step beside the
step the workers measured is printed, not asserted: a wall-clock time on a loaded CI host
is no bound to test against.

  tf_trace_test.py HVDSIM SOURCE_DIR        (HVDRUN, HVD_PYTHON, HVD_PYTHONPATH from ctest)
  tf_trace_test.py --worker                 (one rank; what hvdrun starts)"""
import json
import os
import re
import subprocess
import sys
import tempfile

BATCH, STEPS, WARMUP = 16, 10, 3


def worker():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import time

    import keras
    import numpy as np
    import tensorflow as tf

    import hvd.keras as hvd
    tf.config.threading.set_intra_op_parallelism_threads(1)
    hvd.init()
    keras.utils.set_random_seed(7)
    model = keras.Sequential([
        keras.layers.Input((16, 16, 3)),
        keras.layers.Conv2D(8, 3, activation="relu", name="conv1"),
        keras.layers.Conv2D(16, 3, activation="relu", name="conv2"),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="relu", name="fc1"),
        keras.layers.Dense(10, name="fc2"),
    ])
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.01 * hvd.size())),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    steps = WARMUP + STEPS + 4
    rng = np.random.default_rng(hvd.rank())
    x = rng.normal(size=(BATCH * steps, 16, 16, 3)).astype(np.float32)
    y = rng.integers(0, 10, size=(BATCH * steps,)).astype(np.int32)

    class Steps(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.ends = []

        def on_train_batch_end(self, batch, logs=None):
            self.ends.append(time.perf_counter())

    timer = Steps()
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0), timer])
    if hvd.rank() == 0:
        gaps = sorted(b - a for a, b in zip(timer.ends[WARMUP:], timer.ends[WARMUP + 1:]))
        params = {v.path: int(np.prod(v.shape)) for v in model.trainable_variables}
        print(f"step_median_s={gaps[len(gaps) // 2]:.6f} params={json.dumps(params)}", flush=True)
    hvd.shutdown()   # writes the trace (rank 0)
    return 0


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from verdict import verdict
    hvdsim, src = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="hvd_tf_trace_")
    trace = os.path.join(tmp, "keras_cnn.json")
    env = dict(os.environ, HVD_RECORD_TRACE=trace, HVD_RECORD_TRACE_STEPS=str(STEPS),
               HVD_RECORD_TRACE_WARMUP=str(WARMUP), HVD_RECORD_TRACE_BATCH=str(BATCH))
    env["PYTHONPATH"] = env.get("HVD_PYTHONPATH", "")
    python = env.get("HVD_PYTHON", sys.executable)
    run = subprocess.run([env["HVDRUN"], "-np", "2", python, os.path.abspath(__file__), "--worker"],
                         env=env, capture_output=True, text=True, timeout=240)
    print(run.stdout + run.stderr[-3000:])
    m = re.search(r"step_median_s=([0-9.]+) params=(\{.*\})", run.stdout)
    if run.returncode != 0 or not m or not os.path.exists(trace):
        print("FAIL: the two-rank Keras run did not write a trace")
        return 1
    measured, params = float(m.group(1)), json.loads(m.group(2))
    with open(trace) as f:
        doc = json.load(f)
    print(f"trace: {doc['description']}")
    problems = []
    got = {t["name"]: t["elements"] for t in doc["tensors"]}
    want = {f"allreduce.{p}": n for p, n in params.items()}
    if got != want:
        problems.append(f"trace tensors {got}, expected one per trainable variable {want}")
    first = doc["tensors"][0]["name"] if doc["tensors"] else ""
    if not first.startswith("allreduce.sequential/fc2/") and "/fc2/" not in first:
        problems.append(f"the first gradient ready is {first}, expected the last layer's (fc2)")
    if "np 2" not in doc["description"] or f"median of {STEPS} steps" not in doc["description"]:
        problems.append(f"description {doc['description']!r} does not say np 2 and {STEPS} steps")
    if not doc["fwd_s"] > 0 or not doc["bwd_s"] > 0:
        problems.append(f"fwd_s {doc['fwd_s']}, bwd_s {doc['bwd_s']}: a CNN step computes both")
    report = os.path.join(tmp, "report.json")
    sim = subprocess.run([hvdsim, os.path.join(src, "scenarios/roce25.json"), "--set", f"workload.trace={trace}",
                          "--set", "sweep.np=[1]", "--set", f"workload.batch_size={BATCH}",
                          "--set", "runtime.cycle_time_ms=1ms", "--report", report, "-q"],
                         capture_output=True, text=True, timeout=300)
    print(sim.stdout + sim.stderr)
    if sim.returncode != 0:
        print("FAIL: hvdsim did not load the recorded trace")
        return 1
    with open(report) as f:
        res = json.load(f)["runs"][0]
    recorded = doc["fwd_s"] + doc["bwd_s"]
    if abs(res["compute_s"] - recorded) > 1e-3 * recorded:
        problems.append(f"hvdsim computes {res['compute_s'] * 1e3:.3f} ms a step, the trace recorded "
                        f"{recorded * 1e3:.3f} ms of forward and backward")
    predicted = res["step_time_s"]
    if not recorded <= predicted <= recorded + 0.002:
        problems.append(f"predicted np-1 step {predicted * 1e3:.2f} ms against {recorded * 1e3:.2f} ms of compute")
    print(f"tf_trace_test: recorded compute {recorded * 1e3:.2f} ms; measured np-2 step {measured * 1e3:.2f} ms, "
          f"hvdsim predicts {predicted * 1e3:.2f} ms at np 1 (printed, not asserted)")
    return verdict(problems, tmp)


if __name__ == "__main__":
    sys.exit(worker() if sys.argv[1:] == ["--worker"] else main())
