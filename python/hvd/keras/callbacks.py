"""hvd.keras.callbacks: Horovod's Keras callbacks for Keras 3.

BroadcastGlobalVariablesCallback   root's model and optimizer variables on every rank, at the
                                   start of training (Keras 3 builds both before that)
MetricAverageCallback              epoch-end metrics (logs) averaged over the ranks
LearningRateScheduleCallback       lr = initial_lr * multiplier(epoch), per epoch or per batch
LearningRateWarmupCallback         Goyal et al.'s warmup from initial_lr / size to initial_lr
BestModelCheckpoint                keras' ModelCheckpoint (save_best_only) on rank 0 only
"""
import warnings

import keras
import numpy as np

import hvd.tensorflow as hvd


def _variables(obj):
    v = getattr(obj, "variables", [])
    return list(v() if callable(v) else v)


class BroadcastGlobalVariablesCallback(keras.callbacks.Callback):
    """Broadcasts the model's and the optimizer's variables from ``root_rank`` once, when
    training starts (or after the first batch if the model was not built by then)."""

    def __init__(self, root_rank, device=""):
        super().__init__()
        self.root_rank, self.device, self.broadcast_done = root_rank, device, False

    def _broadcast(self):
        hvd.broadcast_variables(_variables(self.model), root_rank=self.root_rank)
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and getattr(opt, "built", True):
            hvd.broadcast_variables(_variables(opt), root_rank=self.root_rank)
        self.broadcast_done = True

    def on_train_begin(self, logs=None):
        if not self.broadcast_done and self.model.built and _variables(self.model):
            self._broadcast()

    def on_batch_end(self, batch, logs=None):
        if not self.broadcast_done:
            self._broadcast()


class MetricAverageCallback(keras.callbacks.Callback):
    """Replaces each epoch-end metric in ``logs`` by its average over the ranks (place it
    before callbacks that read the metrics, e.g. checkpoints and early stopping)."""

    def __init__(self, device=""):
        super().__init__()
        self.device = device

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return
        names = sorted(k for k, v in logs.items() if np.ndim(v) == 0)  # the same order on every rank
        values = np.array([float(logs[k]) for k in names], dtype=np.float64)
        averaged = hvd.allreduce(values, op=hvd.Average, name=f"MetricAverageCallback.{epoch}").numpy()
        for k, v in zip(names, averaged):
            logs[k] = float(v)


def _get_lr(opt):
    return float(keras.ops.convert_to_numpy(opt.learning_rate))


class LearningRateScheduleCallback(keras.callbacks.Callback):
    """Sets the optimizer's learning rate to ``initial_lr * multiplier(epoch)`` from
    ``start_epoch`` to ``end_epoch``: at each epoch's first batch (``staircase``) or every
    batch with a fractional epoch. ``multiplier`` is a function of the epoch or a constant
    (then exponential decay). Momentum correction scales a momentum held in a variable by
    new_lr / old_lr for the batch; Keras 3's built-in optimizers hold it as a number compiled
    into the step, which cannot follow (a warning says so, once)."""

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None):
        super().__init__()
        if initial_lr is None:
            raise ValueError("Parameter `initial_lr` is required")
        self.initial_lr = initial_lr
        self.multiplier = multiplier if callable(multiplier) else (lambda e: multiplier ** (e - start_epoch))
        self.start_epoch, self.end_epoch = start_epoch, end_epoch
        self.staircase = staircase
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = None
        self._restore_momentum = None
        self._warned = False

    def _autodetect_steps_per_epoch(self):
        if self.params.get("steps"):
            return self.params["steps"]
        raise ValueError(f"Could not autodetect the number of steps per epoch. Please specify the "
                         f"steps_per_epoch parameter to the {type(self).__name__}().")

    def _adjust_learning_rate(self, epoch):
        opt = self.model.optimizer
        old_lr = _get_lr(opt)
        new_lr = self.initial_lr * self.multiplier(epoch)
        opt.learning_rate = new_lr
        if self.momentum_correction and hasattr(opt, "momentum") and old_lr > 0:
            m = opt.momentum
            if hasattr(m, "assign"):
                self._restore_momentum = float(keras.ops.convert_to_numpy(m))
                m.assign(self._restore_momentum * new_lr / old_lr)
            elif not self._warned and m:
                warnings.warn(f"{type(self).__name__}: momentum correction needs the optimizer's momentum in a "
                              f"variable; {type(opt).__name__} compiles its momentum {m} into the step")
                self._warned = True

    def on_train_begin(self, logs=None):
        if not self.staircase and not self.steps_per_epoch:
            self.steps_per_epoch = self._autodetect_steps_per_epoch()

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch

    def on_batch_begin(self, batch, logs=None):
        if self.current_epoch < self.start_epoch or (self.end_epoch is not None and
                                                     self.current_epoch >= self.end_epoch):
            return
        if self.staircase and batch == 0:
            self._adjust_learning_rate(self.current_epoch)
        elif not self.staircase:
            self._adjust_learning_rate(self.current_epoch + float(batch) / self.steps_per_epoch)

    def on_batch_end(self, batch, logs=None):
        if self._restore_momentum is not None:
            self.model.optimizer.momentum.assign(self._restore_momentum)
            self._restore_momentum = None

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = _get_lr(self.model.optimizer)


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Ramps the learning rate from ``initial_lr / size`` to ``initial_lr`` over
    ``warmup_epochs`` (batch by batch), as in Goyal et al. (and Horovod)."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True, steps_per_epoch=None, verbose=0):
        def multiplier(epoch):
            epoch += 1.0 / self.steps_per_epoch  # round numbers at the end of each epoch
            return 1.0 / hvd.size() * (epoch * (hvd.size() - 1) / warmup_epochs + 1)
        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs, staircase=False,
                         momentum_correction=momentum_correction, steps_per_epoch=steps_per_epoch)
        self.verbose = verbose

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if epoch == self.end_epoch - 1 and self.verbose > 0 and hvd.rank() == 0:
            print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to {_get_lr(self.model.optimizer):g}.")


class BestModelCheckpoint(keras.callbacks.ModelCheckpoint):
    """keras.callbacks.ModelCheckpoint with save_best_only, writing on rank 0 only."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, mode="auto", save_freq="epoch"):
        super().__init__(filepath=filepath, monitor=monitor, verbose=verbose, save_best_only=True,
                         save_weights_only=False, mode=mode, save_freq=save_freq)

    def _save_model(self, *args, **kwargs):
        if hvd.rank() == 0:
            super()._save_model(*args, **kwargs)
