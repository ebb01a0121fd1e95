#!/usr/bin/env python3
"""A TensorFlow 2 custom training loop with hvd.tensorflow, checked against one process.

The model (an embedding table looked up with tf.gather, whose gradient is a
tf.IndexedSlices, then two dense layers) starts from rank-dependent random values;
hvd.broadcast_variables makes rank 0's everyone's. Each step is a tf.function: the loss on
this rank's batch, hvd.DistributedGradientTape (dense gradients allreduced and fused by the
runtime, the embedding's by allgathers), and an Adam update.

Rank 0 then trains the same model alone, from rank 0's initial values, on the concatenated
batches (step k: every rank's batch k, in rank order) with a plain tf.GradientTape, and
prints the largest difference of the variables. Exit code 1 above --tolerance.

    hvdrun -np 2 python examples/tensorflow/tf2_custom_loop.py
"""
import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import hvd.tensorflow as hvd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from equivalence import Counted, largest_difference, verdict  # noqa: E402

VOCAB, DIM = 20, 4


def batches(rank, steps, batch):
    """Rank ``rank``'s batches: token pairs and a target each."""
    rng = np.random.default_rng(50 + rank)
    ids = rng.integers(0, VOCAB, size=(steps, batch, 2)).astype(np.int32)
    y = (np.sin(ids.sum(-1)) + 0.05 * rng.normal(size=(steps, batch))).astype(np.float32)[..., None]
    return ids, y


def make_variables(seed):
    rng = np.random.default_rng(seed)
    shapes = [(VOCAB, DIM), (2 * DIM, 16), (16,), (16, 1), (1,)]
    return [tf.Variable(rng.normal(scale=0.3, size=s).astype(np.float32)) for s in shapes]


def loss_fn(variables, ids, y):
    emb, w1, b1, w2, b2 = variables
    h = tf.reshape(tf.gather(emb, ids), [-1, 2 * DIM])
    pred = tf.tanh(h @ w1 + b1) @ w2 + b2
    return tf.reduce_mean((pred - y) ** 2)


def train(variables, data, lr, distributed):
    opt = keras.optimizers.Adam(learning_rate=lr)

    @tf.function
    def step(ids, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(variables, ids, y)
        if distributed:
            tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        return loss

    losses = [float(step(ids, y)) for ids, y in zip(*data)]
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=8, help="batch per rank")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    hvd.init()
    variables = make_variables(1000 + hvd.rank())
    hvd.broadcast_variables(variables, root_rank=0)
    with Counted() as counted:
        train(variables, batches(hvd.rank(), args.steps, args.batch), args.lr, distributed=True)
    flat = np.concatenate([v.numpy().ravel() for v in variables])

    def reference():
        every = [batches(q, args.steps, args.batch) for q in range(hvd.size())]
        concat = (np.concatenate([b[0] for b in every], axis=1), np.concatenate([b[1] for b in every], axis=1))
        ref = make_variables(1000)
        train(ref, concat, args.lr, distributed=False)
        return {"variables": largest_difference(flat, np.concatenate([v.numpy().ravel() for v in ref]))}
    return verdict(hvd, "tf2_custom_loop", flat, reference, args.tolerance, [],
                   f"{args.steps} steps ({counted}), {flat.size} values")


if __name__ == "__main__":
    sys.exit(main())
