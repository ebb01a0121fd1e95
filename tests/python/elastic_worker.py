#!/usr/bin/env python3
"""The training script of the elastic tests (run by hvdrun --host-discovery-script): a small
model trained with hvd.elastic.run, committing at the end of every epoch: hvd.torch's
TorchState, or with --framework tf hvd.tensorflow's TensorFlowKerasState (a Keras model,
hvd's DistributedOptimizer, a tf.function step). It prints one line per epoch
("elastic_worker: worker W epoch E size S rank R t=T"), one per reset and, at the end, the
checksum of its parameters. ELASTIC_KILL="W:E:S[,...]" makes worker W SIGKILL itself at
step S of the first epoch >= E; ELASTIC_KILL_IN_COMMIT=W kills worker W inside its first
commit at size > 1 (after saving, before the generation check). ELASTIC_HANG="W:E:S" makes
worker W SIGSTOP itself there instead (alive, silent; a watchdog SIGKILLs it 120 s later so
nothing outlives the test)."""
import argparse
import hashlib
import os
import signal
import subprocess
import sys
import time

import numpy as np

ME = os.environ.get("HVD_ELASTIC_WORKER", "?")
SEED = int(ME) if ME.isdigit() else 0  # different on purpose: sync must fix it


def say(text):
    sys.stdout.write(f"elastic_worker: worker {ME} {text} t={time.time():.3f}\n")  # one write: no interleaving
    sys.stdout.flush()


def kills(var="ELASTIC_KILL"):
    out = set()
    for item in filter(None, os.environ.get(var, "").split(",")):
        w, e, s = item.split(":")
        out.add((w, int(e), int(s)))
    return out


def with_commit_kill(base, hvd):
    """``base`` (a State class) whose commit can kill this worker (ELASTIC_KILL_IN_COMMIT)."""
    class State(base):
        def commit(self):
            self.save()
            if os.environ.get("ELASTIC_KILL_IN_COMMIT") == ME and hvd.size() > 1:
                say("kills itself inside commit")
                os.kill(os.getpid(), signal.SIGKILL)
            self.check_host_updates()
    return State


def torch_trainer():
    """(hvd, state, step(epoch, step), parameters()) of the torch model."""
    import torch
    import hvd.torch as hvd
    hvd.init()
    torch.manual_seed(SEED)
    model = torch.nn.Linear(16, 4)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                                   named_parameters=model.named_parameters())

    def step(epoch, k):
        g = torch.Generator().manual_seed(epoch * 100003 + k * 101 + hvd.rank())
        x = torch.randn(32, 16, generator=g)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), x[:, :4] * 2.0 - 1.0).backward()
        opt.step()
    return (hvd, with_commit_kill(hvd.elastic.TorchState, hvd)(model, opt, epoch=0), step,
            lambda: torch.cat([p.detach().reshape(-1).double() for p in model.parameters()]).numpy())


def tf_trainer():
    """The same with hvd.tensorflow: a Keras model, a tf.function step."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    import hvd.tensorflow as hvd
    hvd.init()
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4)])
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(learning_rate=0.05, momentum=0.9))

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - (x[:, :4] * 2.0 - 1.0)) ** 2)
        opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)

    def step(epoch, k):
        rng = np.random.default_rng(epoch * 100003 + k * 101 + hvd.rank())
        train_step(tf.constant(rng.normal(size=(32, 16)).astype(np.float32)))
    state = with_commit_kill(hvd.elastic.TensorFlowKerasState, hvd)(model, opt, epoch=0)
    return hvd, state, step, lambda: np.concatenate([w.ravel().astype(np.float64) for w in model.get_weights()])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--step-time", type=float, default=0.05)
    ap.add_argument("--framework", choices=["torch", "tf"], default="torch")
    a = ap.parse_args()
    hvd, state, step, parameters = (tf_trainer if a.framework == "tf" else torch_trainer)()
    say(f"joined at size {hvd.size()} rank {hvd.rank()}")
    state.register_reset_callbacks([lambda: say(f"reset: now rank {hvd.rank()} of size {hvd.size()}")])
    todo, hangs = kills(), kills("ELASTIC_HANG")

    @hvd.elastic.run
    def train(state):
        say(f"synced at epoch {state.epoch} size {hvd.size()}")
        for state.epoch in range(state.epoch, a.epochs):
            for k in range(a.steps):
                if any(w == ME and state.epoch >= e and k == s for w, e, s in todo):
                    say(f"kills itself at epoch {state.epoch} step {k}")
                    os.kill(os.getpid(), signal.SIGKILL)
                if any(w == ME and state.epoch >= e and k == s for w, e, s in hangs):
                    say(f"hangs (SIGSTOP) at epoch {state.epoch} step {k}")
                    subprocess.Popen(["sh", "-c", f"sleep 120; kill -9 {os.getpid()} 2>/dev/null"],
                                     start_new_session=True, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    os.kill(os.getpid(), signal.SIGSTOP)
                step(state.epoch, k)
                time.sleep(a.step_time)
            say(f"epoch {state.epoch} size {hvd.size()} rank {hvd.rank()}")
            state.epoch += 1
            state.commit()

    train(state)
    say(f"done rank {hvd.rank()} size {hvd.size()} checksum {hashlib.sha1(parameters().tobytes()).hexdigest()[:16]}")
    hvd.shutdown()


if __name__ == "__main__":
    main()
