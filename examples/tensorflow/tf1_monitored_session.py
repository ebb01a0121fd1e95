#!/usr/bin/env python3
"""A tf.compat.v1 graph trained in a MonitoredTrainingSession with hvd.tensorflow, checked
against one process.

The graph's variables start from rank-dependent random values; hvd.BroadcastGlobalVariablesHook
assigns rank 0's to every rank once the session exists. hvd.DistributedOptimizer wraps a
MomentumOptimizer: compute_gradients() averages the gradients over the ranks. Only rank 0
gives the session a checkpoint directory (it alone writes checkpoints).

Rank 0 then builds the same graph with rank 0's seed and a plain MomentumOptimizer and runs
it alone on the concatenated batches (step k: every rank's batch k, in rank order), and
prints the largest difference of the variables. Exit code 1 above --tolerance.

    hvdrun -np 2 python examples/tensorflow/tf1_monitored_session.py
"""
import argparse
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import hvd.tensorflow as hvd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from equivalence import largest_difference, verdict  # noqa: E402

v1 = tf.compat.v1


def rank_batches(rank, steps, batch):
    rng = np.random.default_rng(70 + rank)
    x = rng.normal(size=(steps, batch, 6)).astype(np.float32)
    y = (np.cos(x.sum(-1)) > 0).astype(np.float32)[..., None]
    return x, y


def build(seed, optimizer_wrapper):
    """The graph: placeholders, a two-layer classifier, its training op; returns the pieces."""
    v1.set_random_seed(seed)
    x = v1.placeholder(tf.float32, [None, 6])
    y = v1.placeholder(tf.float32, [None, 1])
    w1 = v1.get_variable("w1", [6, 12], initializer=v1.random_normal_initializer(stddev=0.5))
    b1 = v1.get_variable("b1", [12], initializer=v1.zeros_initializer())
    w2 = v1.get_variable("w2", [12, 1], initializer=v1.random_normal_initializer(stddev=0.5))
    logits = tf.nn.relu(x @ w1 + b1) @ w2
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    step = v1.train.get_or_create_global_step()
    opt = optimizer_wrapper(v1.train.MomentumOptimizer(0.1, momentum=0.9))
    train_op = opt.minimize(loss, global_step=step)
    return x, y, train_op, [w1, b1, w2]


def distributed_run(args, ckpt_dir):
    with tf.Graph().as_default():
        x, y, train_op, variables = build(1000 + hvd.rank(), hvd.DistributedOptimizer)
        hooks = [hvd.BroadcastGlobalVariablesHook(0)]
        xs, ys = rank_batches(hvd.rank(), args.steps, args.batch)
        with v1.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir if hvd.rank() == 0 else None,
                                               hooks=hooks, save_summaries_steps=None,
                                               log_step_count_steps=None) as sess:
            for k in range(args.steps):
                sess.run(train_op, feed_dict={x: xs[k], y: ys[k]})
            return [sess.run(v) for v in variables]


def reference_run(args, size):
    every = [rank_batches(q, args.steps, args.batch) for q in range(size)]
    xs, ys = np.concatenate([b[0] for b in every], axis=1), np.concatenate([b[1] for b in every], axis=1)
    with tf.Graph().as_default():
        x, y, train_op, variables = build(1000, lambda opt: opt)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for k in range(args.steps):
                sess.run(train_op, feed_dict={x: xs[k], y: ys[k]})
            return sess.run(variables)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8, help="batch per rank")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    hvd.init()
    ckpt_dir = tempfile.mkdtemp(prefix="hvd_tf1_") if hvd.rank() == 0 else None
    values = distributed_run(args, ckpt_dir)
    flat = np.concatenate([v.ravel() for v in values])
    problems = []
    if hvd.rank() == 0 and not tf.train.latest_checkpoint(ckpt_dir):
        problems.append(f"rank 0 wrote no checkpoint in {ckpt_dir}")

    def reference():
        ref = np.concatenate([v.ravel() for v in reference_run(args, hvd.size())])
        return {"variables": largest_difference(flat, ref)}
    return verdict(hvd, "tf1_monitored_session", flat, reference, args.tolerance, problems,
                   f"{args.steps} steps, {flat.size} values")


if __name__ == "__main__":
    sys.exit(main())
