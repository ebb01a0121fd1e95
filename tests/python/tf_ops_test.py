"""hvd.tensorflow's collectives on every rank, checked against numpy references: allreduce
(every dtype and op, scale factors), grouped allreduce, allgather (rank-dependent first
dimensions), broadcast, alltoall (with splits), reducescatter, their grouped forms, process
sets, join and barrier, eagerly and inside tf.function; the runtime fusing a tf.function's
allreduces; and the errors (mismatches raise tf.errors.FailedPreconditionError on every
rank, bad arguments InvalidArgumentError / TypeError / ValueError, never a hang)."""
import os
import sys

import numpy as np

from checks_base import run_all
from tf_harness import Checks, tf

import hvd.tensorflow as hvd
from hvd import _core
from hvd._common import OP_NAMES

DTYPES = [tf.uint8, tf.int8, tf.int32, tf.int64, tf.float16, tf.bfloat16, tf.float32, tf.float64]
OPS = [hvd.Sum, hvd.Average, hvd.Min, hvd.Max, hvd.Product]


def value(rank, n, op, dt):
    """Small integer-valued data of ``rank`` (exact in every dtype and every reduction)."""
    i = np.arange(n)
    if op == hvd.Product:
        return np.where((rank + i) % 3 == 0, 2.0, 1.0)
    return (rank * 7 + i * 3) % 9 - (0.0 if dt == tf.uint8 else 4.0)


def reference(p, n, op, dt):
    rows = np.stack([value(q, n, op, dt) for q in range(p)])
    if op == hvd.Sum:
        out = rows.sum(0)
    elif op == hvd.Average:
        out = rows.sum(0) / p
        out = np.trunc(out) if dt.is_integer else out  # Horovod's CPU path truncates integer averages
    elif op == hvd.Min:
        out = rows.min(0)
    elif op == hvd.Max:
        out = rows.max(0)
    else:
        out = rows.prod(0)
    return out.astype(dt.as_numpy_dtype)


def allreduce_checks(c, r, p):
    """Every dtype and op, eagerly and in one tf.function (where they are all pending at once)."""
    cases = [(dt, op) for dt in DTYPES for op in OPS]
    inputs = [tf.constant(value(r, 5, op, dt).astype(dt.as_numpy_dtype)) for dt, op in cases]
    for (dt, op), x in zip(cases, inputs):
        c.close(hvd.allreduce(x, op=op), reference(p, 5, op, dt), f"eager allreduce {dt.name} {OP_NAMES[op]}")

    @tf.function
    def all_at_once(xs):
        return [hvd.allreduce(x, op=op) for x, (_, op) in zip(xs, cases)]
    for (dt, op), got in zip(cases, all_at_once(inputs)):
        c.close(got, reference(p, 5, op, dt), f"tf.function allreduce {dt.name} {OP_NAMES[op]}")
    x = tf.constant([1.0, 2.0, 3.0], tf.float64) * (r + 1)
    total = sum(q + 1 for q in range(p))
    c.close(hvd.allreduce(x, op=hvd.Sum, prescale_factor=0.5, postscale_factor=3.0),
            np.array([1.0, 2.0, 3.0]) * total * 1.5, "allreduce with prescale and postscale")
    xi = tf.constant([7, -7, 9], tf.int32) + r
    c.close(hvd.allreduce(xi, op=hvd.Sum, postscale_factor=0.5),
            np.trunc((np.array([7, -7, 9]) * p + total - p) * 0.5).astype(np.int32),
            "integer postscale truncates toward zero")
    c.close(hvd.allreduce(tf.Variable([2.0, 4.0]) * 0 + r, op=hvd.Sum, compression=hvd.Compression.fp16),
            np.full(2, total - p, np.float32), "allreduce with fp16 compression keeps the dtype")


def grouped_checks(c, r, p):
    xs = [tf.fill([3], float(r)), tf.fill([2, 2], r + 1), tf.constant([r], tf.float64)]
    want = [np.full(3, sum(range(p)) / p, np.float32), np.full((2, 2), sum(range(1, p + 1)), np.int32),
            np.array([sum(range(p))], np.float64)]
    for got, w in zip(hvd.grouped_allreduce(xs, op=hvd.Sum), [want[0] * p, want[1], want[2]]):
        c.close(got, w, "eager grouped_allreduce Sum, mixed dtypes")
    got = tf.function(lambda a, b: hvd.grouped_allreduce([a, b]))(xs[0], xs[2])
    c.close(got[0], want[0], "tf.function grouped_allreduce Average")
    c.close(got[1], want[2] / p, "tf.function grouped_allreduce Average (float64)")
    parts = hvd.grouped_allgather([tf.fill([r + 1, 2], r), tf.fill([1], float(r))])
    c.close(parts[0], np.concatenate([np.full((q + 1, 2), q, np.int32) for q in range(p)]), "grouped_allgather")
    c.close(parts[1], np.arange(p, dtype=np.float32), "grouped_allgather (second tensor)")
    outs = hvd.grouped_reducescatter([tf.ones([2 * p, 3]) * (r + 1), tf.ones([p], tf.float64)], op=hvd.Sum)
    c.close(outs[0], np.full((2, 3), sum(range(1, p + 1)), np.float32), "grouped_reducescatter")
    c.close(outs[1], np.full(1, float(p)), "grouped_reducescatter (second tensor)")


def gather_bcast_checks(c, r, p):
    for fn, mode in ((lambda f: f, "eager"), (tf.function, "tf.function")):
        got = fn(lambda x: hvd.allgather(x))(tf.fill([r + 1, 2], float(r)))
        c.close(got, np.concatenate([np.full((q + 1, 2), float(q), np.float32) for q in range(p)]),
                f"{mode} allgather with rank-dependent first dimensions")
        for root in (0, p - 1):
            got = fn(lambda x: hvd.broadcast(x, root))(tf.constant([[r, 2 * r]], tf.int64))
            c.close(got, np.array([[root, 2 * root]], np.int64), f"{mode} broadcast from {root}")
    c.close(hvd.allgather(tf.constant([r % 2 == 0, True])), np.array([q % 2 == 0 or k for q in range(p)
                                                                      for k in (False, True)]), "allgather bool")
    c.close(hvd.broadcast(tf.constant([r == 0]), 0), np.array([True]), "broadcast bool")
    c.close(hvd.allgather(tf.zeros([0, 3])), np.zeros((0, 3), np.float32), "allgather of empty tensors")


def alltoall_checks(c, r, p):
    splits = [(r + j) % 3 for j in range(p)]
    rows = np.concatenate([np.full((s, 2), 100 * r + j, np.float32) for j, s in enumerate(splits)])
    for fn, mode in ((lambda f: f, "eager"), (tf.function, "tf.function")):
        out, received = fn(lambda x, s: hvd.alltoall(x, splits=s))(tf.constant(rows.reshape(-1, 2)),
                                                                   tf.constant(splits, tf.int32))
        want = np.concatenate([np.full(((q + r) % 3, 2), 100 * q + r, np.float32) for q in range(p)])
        c.close(out, want.reshape(-1, 2), f"{mode} alltoall with splits")
        c.close(received, np.array([(q + r) % 3 for q in range(p)], np.int32), f"{mode} alltoall received_splits")
    even = hvd.alltoall(tf.constant(np.arange(2 * p) + 10 * r, tf.int32))
    c.close(even, np.array([10 * q + 2 * r + k for q in range(p) for k in range(2)], np.int32), "even alltoall")


def reducescatter_checks(c, r, p):
    x = tf.constant(np.arange(2 * p * 3, dtype=np.float32).reshape(2 * p, 3) + r)
    full = sum(np.arange(2 * p * 3, dtype=np.float32).reshape(2 * p, 3) + q for q in range(p))
    for fn, mode in ((lambda f: f, "eager"), (tf.function, "tf.function")):
        c.close(fn(lambda t: hvd.reducescatter(t, op=hvd.Sum))(x), full[2 * r:2 * r + 2], f"{mode} reducescatter Sum")
        c.close(fn(lambda t: hvd.reducescatter(t))(x), full[2 * r:2 * r + 2] / p, f"{mode} reducescatter Average")
    xi = tf.constant([[5], [-5]] * p, tf.int32) + r
    c.close(hvd.reducescatter(xi), np.trunc((np.array([[5], [-5]]) * p + sum(range(p))) / p).astype(np.int32),
            "integer reducescatter Average truncates")


def process_set_checks(c, r, p):
    ranks = [0, p - 1] if p > 1 else [0]
    ps = hvd.add_process_set(ranks)
    c.ok(hvd.process_set_by_id(ps.process_set_id) is ps, "process_set_by_id")
    if r in ranks:
        c.close(hvd.allreduce(tf.constant([float(r)]), op=hvd.Sum, process_set=ps),
                np.array([float(sum(ranks))], np.float32), "allreduce in a process set")
        c.close(tf.function(lambda x: hvd.allgather(x, process_set=ps))(tf.constant([r])), np.array(ranks, np.int32),
                "allgather in a process set (tf.function)")
        c.close(hvd.broadcast(tf.constant([r]), ranks[-1], process_set=ps),
                np.array([ranks[-1]], np.int32), "broadcast in a process set (root = global rank)")
    else:
        c.raises(lambda: hvd.allreduce(tf.ones(1), process_set=ps), tf.errors.InvalidArgumentError,
                 "not a member", "allreduce outside the set")
    hvd.remove_process_set(ps)
    c.raises(lambda: hvd.allreduce(tf.ones(1), process_set=ps), ValueError, "was not added",
             "allreduce in a removed set")
    c.ok(int(hvd.size_op()) == p and int(hvd.rank_op()) == r and int(hvd.local_size_op()) == hvd.local_size(),
         "size_op / rank_op / local_size_op")
    hvd.barrier()
    @tf.function
    def barrier_in_a_graph():
        hvd.barrier()  # stateful: runs though nothing uses it
    barrier_in_a_graph()
    # join: rank 0 reduces once more while the others have joined (they contribute zeros).
    if r == 0:
        c.close(hvd.allreduce(tf.ones(2), op=hvd.Sum, name="after.join"), np.ones(2, np.float32),
                "allreduce while the other ranks joined")
    last = int(hvd.join())
    c.ok(last == 0, f"join returned {last}, expected rank 0, the last to join")


def fusion_checks(c, r, p):
    """A tf.function's 32 allreduces are pending together: the runtime answers them in far
    fewer responses (fused), which its counters show."""
    xs = [tf.fill([64], float(i + r)) for i in range(32)]
    step = tf.function(lambda xs: [hvd.allreduce(x, op=hvd.Sum, name=f"tf.fused.{i}") for i, x in enumerate(xs)])
    step(xs)  # traced and run once
    before = _core.stats()
    outs = step(xs)
    after = _core.stats()
    tensors, responses = after["tensors"] - before["tensors"], after["responses"] - before["responses"]
    for i, o in enumerate(outs):
        c.close(o, np.full(64, p * i + sum(range(p)), np.float32), f"fused allreduce {i}")
    if r == 0:
        print(f"tf_ops_test np={p}: 32 allreduces in a tf.function -> {tensors} tensors in {responses} responses",
              flush=True)
    c.ok(tensors == 32 and responses < tensors, f"fusion: {tensors} tensors in {responses} responses")

    @tf.function
    def constant_and_alike():
        x = tf.constant([1.0, 2.0])
        a, b = hvd.allreduce(x, op=hvd.Sum), hvd.allreduce(x, op=hvd.Sum)  # alike: both run
        hvd.allreduce(x * 3, op=hvd.Sum)  # unused: runs all the same
        return a + b
    counts = []
    for _ in range(2):  # constant inputs: never folded into a constant, so every call reduces
        before = _core.stats()["tensors"]
        c.close(constant_and_alike(), np.array([2.0, 4.0], np.float32) * p, "allreduces of a constant")
        counts.append(_core.stats()["tensors"] - before)
    c.ok(counts == [3, 3], f"a graph's collectives all run at every call: {counts} tensors, want [3, 3]")


def error_checks(c, r, p):
    c.raises(lambda: hvd.allreduce(tf.constant([True])), TypeError, "dtype bool", "allreduce of bool")
    c.raises(tf.function(lambda: hvd.reducescatter(tf.constant([True, False]))), TypeError, "dtype bool",
             "reducescatter of bool (tf.function)")
    c.raises(lambda: hvd.allreduce(tf.ones(2), op=17), ValueError, "unknown op", "unknown op")
    c.raises(lambda: hvd.broadcast(tf.ones(2), root_rank=p + 3), tf.errors.InvalidArgumentError, "outside",
             "broadcast root out of range")
    c.raises(lambda: hvd.alltoall(tf.ones([3]), splits=[4] + [0] * (p - 1)), tf.errors.InvalidArgumentError,
             "splits add up to", "alltoall splits that do not add up")
    if p & (p - 1):
        c.raises(lambda: hvd.allreduce(tf.ones(2), op=hvd.Adasum), NotImplementedError, "power of 2",
                 "Adasum at a non-power-of-two size")
    if p < 2:
        return
    mismatch = tf.errors.FailedPreconditionError
    c.raises(lambda: hvd.allreduce(tf.ones(3 if r == 1 else 4), name="bad.shape"), mismatch,
             "Mismatched allreduce tensor shapes", "mismatched allreduce shapes")
    c.raises(lambda: hvd.allreduce(tf.ones(2, tf.float64 if r == 0 else tf.float32), name="bad.dtype"), mismatch,
             "Mismatched data types", "mismatched dtypes")
    c.raises(lambda: hvd.allgather(tf.ones([2, 3 if r == 0 else 2]), name="bad.gather"), mismatch,
             "Mismatched allgather tensor shapes", "mismatched allgather shapes")
    c.raises(lambda: hvd.broadcast(tf.ones(2), root_rank=r % 2, name="bad.root"), mismatch,
             "Mismatched broadcast root", "mismatched broadcast roots")
    bad_group = tf.function(lambda: hvd.grouped_allreduce([tf.ones(2), tf.ones(2 + (r == 0))], name="bad.group"))
    c.raises(bad_group, mismatch, "Mismatched allreduce tensor shapes", "mismatched shape in a group (tf.function)")
    c.close(hvd.allreduce(tf.ones(2), op=hvd.Sum, name="after.errors"), np.full(2, float(p), np.float32),
            "allreduce after the errors")


def init():
    """Before init a collective fails with Horovod's FailedPreconditionError; then init."""
    try:
        hvd.allreduce(tf.ones(1))
        raise SystemExit("tf_ops_test: allreduce before init did not raise")
    except tf.errors.FailedPreconditionError as e:
        assert "not been initialized" in str(e), e
    hvd.init()


def build_checks(c, r, p):
    tcp = os.environ.get("HVD_CONTROLLER") == "tcp"
    c.ok(hvd.mpi_enabled() is not tcp and hvd.gloo_enabled() is tcp and hvd.nccl_built() == 0, "build queries")


def main():
    return run_all(Checks("tf_ops_test"), init, (build_checks, allreduce_checks, grouped_checks, gather_bcast_checks,
                                                 alltoall_checks, reducescatter_checks, process_set_checks,
                                                 fusion_checks, error_checks))

if __name__ == "__main__":
    sys.exit(main())
