#!/usr/bin/env python3
"""Keras 3 model.fit with hvd.keras, checked against one process.

Every rank starts from its own random weights and trains on its shard of a synthetic
regression set with hvd.keras.DistributedOptimizer (SGD with momentum) and Horovod's
callbacks: BroadcastGlobalVariablesCallback (rank 0's weights and optimizer state
everywhere), MetricAverageCallback (the epoch's metrics averaged over the ranks) and
LearningRateWarmupCallback. Only rank 0 writes a checkpoint (keras' ModelCheckpoint); every
rank then loads it with hvd.keras.load_model (the optimizer comes back distributed, with
its momentum) and trains one more epoch.

Rank 0 then trains the same model alone, from rank 0's initial weights, on the
concatenated batches (batch k = every rank's batch k, in rank order), with the learning
rates the warmup set, and prints the largest difference of the weights and of the
averaged epoch losses. Exit code 1 when they differ by more than --tolerance.

    hvdrun -np 2 python examples/tensorflow/keras_fit.py
"""
import argparse
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

import hvd.keras as hvd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from equivalence import Counted, largest_difference, verdict  # noqa: E402


def shard(rank, n, features=8):
    """Rank ``rank``'s samples (the same on every run)."""
    rng = np.random.default_rng(10 + rank)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = (x @ np.linspace(-1, 1, features) + 0.1 * rng.normal(size=n)).astype(np.float32)[:, None]
    return x, y


def make_model(seed, lr):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
    return model, keras.optimizers.SGD(learning_rate=lr, momentum=0.9)


class RecordLR(keras.callbacks.Callback):
    """The learning rate of every batch (what the warmup set), for the reference run."""

    def __init__(self):
        super().__init__()
        self.rates = []

    def on_train_batch_begin(self, batch, logs=None):
        self.rates.append(float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)))


class ReplayLR(keras.callbacks.Callback):
    def __init__(self, rates):
        super().__init__()
        self.rates = list(rates)

    def on_train_batch_begin(self, batch, logs=None):
        self.model.optimizer.learning_rate = self.rates.pop(0)


def distributed_run(args, ckpt):
    model, opt = make_model(1000 + hvd.rank(), args.lr)
    model.compile(optimizer=hvd.DistributedOptimizer(opt), loss="mse", jit_compile=False)
    steps = args.samples // args.batch
    record = RecordLR()
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0), hvd.callbacks.MetricAverageCallback(),
                 # Keras 3's SGD compiles its momentum into the step: no momentum correction.
                 hvd.callbacks.LearningRateWarmupCallback(args.lr, warmup_epochs=1, steps_per_epoch=steps,
                                                          momentum_correction=False), record]
    if hvd.rank() == 0:
        callbacks.append(keras.callbacks.ModelCheckpoint(ckpt))  # checkpoints on rank 0 only
    x, y = shard(hvd.rank(), args.samples)
    with Counted() as counted:
        hist = model.fit(x, y, batch_size=args.batch, epochs=args.epochs, shuffle=False, verbose=0,
                         callbacks=callbacks)
    hvd.barrier()  # rank 0's checkpoint is complete
    resumed = hvd.load_model(ckpt)
    hist2 = resumed.fit(x, y, batch_size=args.batch, epochs=1, shuffle=False, verbose=0,
                        callbacks=[hvd.callbacks.MetricAverageCallback(), record])
    return resumed, hist.history["loss"] + hist2.history["loss"], record.rates, counted


def reference_run(args, rates, size):
    """One process, rank 0's initial weights, batches of every rank's batch concatenated."""
    model, opt = make_model(1000, args.lr)
    model.compile(optimizer=opt, loss="mse", jit_compile=False)
    shards = [shard(q, args.samples) for q in range(size)]
    xs, ys = [], []
    for k in range(args.samples // args.batch):
        for x, y in shards:
            xs.append(x[k * args.batch:(k + 1) * args.batch])
            ys.append(y[k * args.batch:(k + 1) * args.batch])
    x, y = np.concatenate(xs), np.concatenate(ys)
    hist = model.fit(x, y, batch_size=args.batch * size, epochs=args.epochs + 1, shuffle=False, verbose=0,
                     callbacks=[ReplayLR(rates)])
    return model, hist.history["loss"]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--samples", type=int, default=32, help="samples per rank")
    ap.add_argument("--batch", type=int, default=8, help="batch per rank")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    hvd.init()
    ckpt = os.path.join(hvd.broadcast_object(tempfile.mkdtemp(prefix="hvd_keras_") if hvd.rank() == 0 else None),
                        "model.keras")
    model, losses, rates, counted = distributed_run(args, ckpt)
    steps = args.samples // args.batch
    weights = np.concatenate([w.ravel() for w in model.get_weights()])
    opt = model.optimizer
    problems = []
    if not (type(opt).__name__ == "SGD" and hasattr(opt, "_hvd_allreduce") and int(opt.iterations) > 0):
        problems.append("load_model did not restore a distributed SGD with its state")
    first = args.lr * (1 + (hvd.size() - 1) / steps) / hvd.size()  # Horovod's warmup at batch 0
    if abs(rates[0] - first) > 1e-6 * args.lr or abs(rates[-1] - args.lr) > 1e-6 * args.lr:
        problems.append(f"warmup rates {rates[0]:g} .. {rates[-1]:g}, expected {first:g} .. {args.lr:g}")
    def reference():
        ref, ref_losses = reference_run(args, rates, hvd.size())
        return {"weights": largest_difference(weights, np.concatenate([w.ravel() for w in ref.get_weights()])),
                "averaged epoch losses": largest_difference(losses, ref_losses)}
    return verdict(hvd, "keras_fit", weights, reference, args.tolerance, problems,
                   f"{len(rates)} steps (the first fit: {counted}), {weights.size} weights")

if __name__ == "__main__":
    sys.exit(main())
