#!/usr/bin/env python3
"""Images/s of one small Keras CNN trained data-parallel on the CPU with hvd.tensorflow
(DistributedGradientTape inside tf.function, on the hvd runtime, started by hvdrun) and with
tf.distribute.MultiWorkerMirroredStrategy (TensorFlow's own collectives over gRPC, one
process a worker, TF_CONFIG on localhost): same model, batch, threads per rank and steps, at
np 1, 2 and 3, in one run. Rounds alternate the two so that a busy machine hurts both alike.
A benchmark: it prints figures and asserts nothing about time.

  python bench/tensorflow/hvd_vs_mwms.py [--np 1 2 3] [--rounds 2] [--hvdrun build/bench/hvdbench/hvdrun]
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def quiet_tf(threads):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(2)
    return tf


def make_model(tf, image_size):
    """The CNN both sides train: two convolutions, a dense layer, ten classes."""
    k = tf.keras
    return k.Sequential([
        k.layers.Input((image_size, image_size, 3)),
        k.layers.Conv2D(32, 3, activation="relu"),
        k.layers.Conv2D(64, 3, activation="relu"),
        k.layers.MaxPooling2D(),
        k.layers.Flatten(),
        k.layers.Dense(128, activation="relu"),
        k.layers.Dense(10),
    ])


def synthetic_batch(tf, batch, image_size, seed):
    g = tf.random.Generator.from_seed(seed)
    return (g.normal((batch, image_size, image_size, 3)),
            g.uniform((batch,), maxval=10, dtype=tf.int32))


def timed(step, data, target, warmup, steps):
    for i in range(warmup + steps):
        if i == warmup:
            t0 = time.perf_counter()
        step(data, target)
    return time.perf_counter() - t0


def hvd_worker(a):
    tf = quiet_tf(a.threads)
    import hvd.tensorflow as hvd
    hvd.init()
    tf.random.set_seed(42)
    model = make_model(tf, a.image_size)
    opt = tf.keras.optimizers.SGD(0.01 * hvd.size(), momentum=0.9)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    data, target = synthetic_batch(tf, a.batch_size, a.image_size, seed=hvd.rank())

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))

    step(data, target)  # builds the optimizer's slots before the broadcast
    hvd.broadcast_variables(model.variables, root_rank=0)
    hvd.broadcast_variables(opt.variables, root_rank=0)
    elapsed = timed(step, data, target, a.warmup, a.steps)
    total = hvd.allreduce(tf.constant([a.batch_size * a.steps / elapsed]), op=hvd.Sum, name="rate")
    if hvd.rank() == 0:
        print(f"RESULT images_per_sec={float(total[0]):.2f}", flush=True)
    hvd.shutdown()


def mwms_worker(a):
    tf = quiet_tf(a.threads)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    with strategy.scope():
        tf.random.set_seed(42)
        model = make_model(tf, a.image_size)
        opt = tf.keras.optimizers.SGD(0.01 * a.np, momentum=0.9)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
    data, target = synthetic_batch(tf, a.batch_size, a.image_size, seed=rank)

    @tf.function
    def step(x, y):
        def replica(x, y):
            with tf.GradientTape() as tape:
                # MWMS sums the replicas' gradients: scale the mean so the sum is the average.
                loss = tf.reduce_mean(loss_fn(y, model(x, training=True))) / a.np
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        strategy.run(replica, args=(x, y))

    elapsed = timed(step, data, target, a.warmup, a.steps)
    rate = strategy.reduce(tf.distribute.ReduceOp.SUM,
                           strategy.run(lambda: tf.constant(a.batch_size * a.steps / elapsed)), axis=None)
    if rank == 0:
        print(f"RESULT images_per_sec={float(rate):.2f}", flush=True)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def run_mwms(base, np_, env):
    workers = [f"localhost:{p}" for p in free_ports(np_)]
    procs = []
    for i in range(np_):
        cfg = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}}
        procs.append(subprocess.Popen(base + ["--worker", "mwms"], env=dict(env, TF_CONFIG=json.dumps(cfg)),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    return result("MultiWorkerMirroredStrategy", [p.returncode for p in procs], outs)


def run_hvd(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    return result(" ".join(cmd)[:200], [p.returncode], [(p.stdout, p.stderr)])


def result(what, codes, outs):
    text = "".join(o for o, _ in outs)
    m = re.search(r"RESULT images_per_sec=([0-9.]+)", text)
    if any(codes) or not m:
        errs = "".join(e[-1500:] for _, e in outs)
        sys.exit(f"hvd_vs_mwms: {what} failed (exit {codes}):\n{text[-1500:]}{errs}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--hvdrun", default=os.path.join(ROOT, "build", "bench", "hvdbench", "hvdrun"))
    ap.add_argument("--worker", choices=["hvd", "mwms"], help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.np = a.np[0]
        return hvd_worker(a) if a.worker == "hvd" else mwms_worker(a)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cores = os.cpu_count() or 1
    common = ["--batch-size", str(a.batch_size), "--image-size", str(a.image_size), "--steps", str(a.steps),
              "--warmup", str(a.warmup)]
    import tensorflow as tf
    print(f"hvd_vs_mwms: TensorFlow {tf.__version__}, Keras CNN, batch {a.batch_size} per rank, "
          f"{a.image_size}x{a.image_size} images, {a.steps} timed steps, {a.rounds} rounds, {cores} cores")
    print(f"{'np':>3} {'threads':>7} {'hvd.tensorflow img/s':>21} {'MWMS img/s':>11} {'hvd/MWMS':>9}")
    for np_ in a.np:
        threads = max(1, cores // np_)
        base = [sys.executable, os.path.abspath(__file__), *common, "--threads", str(threads), "--np", str(np_)]
        hvd_rates, mwms_rates = [], []
        for _ in range(a.rounds):
            hvd_rates.append(run_hvd([a.hvdrun, "-np", str(np_)] + base + ["--worker", "hvd"], env))
            mwms_rates.append(run_mwms(base, np_, env))
        h, m = statistics.mean(hvd_rates), statistics.mean(mwms_rates)
        print(f"{np_:>3} {threads:>7} {h:>21.1f} {m:>11.1f} {h / m:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
