"""hvd.keras.elastic (Horovod's horovod.tensorflow.keras.elastic): ``run``, ``KerasState``
(= hvd.tensorflow's TensorFlowKerasState) and the callbacks that keep a state in step with
model.fit: CommitStateCallback, UpdateBatchStateCallback, UpdateEpochStateCallback."""
import keras

from hvd.tensorflow.elastic import (  # noqa: F401
    run, reset, ObjectState, HostsUpdatedInterrupt, TensorFlowKerasState as KerasState,
)


class _StateCallback(keras.callbacks.Callback):
    def __init__(self, state):
        super().__init__()
        self.state = state


class CommitStateCallback(_StateCallback):
    """Commits ``state`` every ``batches_per_commit`` batches (and at each epoch's end)."""

    def __init__(self, state, batches_per_commit=1):
        super().__init__(state)
        self.batches_per_commit = batches_per_commit
        self.batches_remaining = batches_per_commit

    def on_batch_end(self, batch, logs=None):
        self.batches_remaining -= 1
        if self.batches_remaining == 0:
            self.state.commit()
            self.batches_remaining = self.batches_per_commit

    def on_epoch_end(self, epoch, logs=None):
        self.state.commit()
        self.batches_remaining = self.batches_per_commit


class UpdateBatchStateCallback(_StateCallback):
    """Keeps ``state.batch`` at the batch done (0 again at each epoch's end)."""

    def on_batch_end(self, batch, logs=None):
        self.state.batch = batch + 1

    def on_epoch_end(self, epoch, logs=None):
        self.state.batch = 0


class UpdateEpochStateCallback(_StateCallback):
    """Keeps ``state.epoch`` at the next epoch to run (fit's ``initial_epoch`` on a restart)."""

    def on_epoch_end(self, epoch, logs=None):
        self.state.epoch = epoch + 1
