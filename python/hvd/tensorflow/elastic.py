"""hvd.elastic for TensorFlow (Horovod's horovod.tensorflow.elastic): ``run``,
``TensorFlowKerasState``, ``TensorFlowState``, ``ObjectState``, ``HostsUpdatedInterrupt``.

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...  # steps (eager or tf.function)
            state.commit()

    state = hvd.elastic.TensorFlowKerasState(model, optimizer, epoch=0)
    train(state)

A collective that fails because a peer is gone raises a TensorFlow error from the op
(Aborted, DeadlineExceeded, Internal or Unavailable, naming an Hvd op): ``run`` takes it for
Horovod's HorovodInternalError (restore, reset, sync, call again), as Horovod's TensorFlow
binding does. See hvd/elastic.py and docs/python.md ("Elastic training").
"""
import functools

import numpy as np
import tensorflow as tf

from hvd import HvdError, _common, _core
from hvd import elastic as _elastic
from hvd.elastic import HorovodInternalError, HostsUpdatedInterrupt, State  # noqa: F401
from hvd.tensorflow import functions, mpi_ops

_LOST_PEER = (tf.errors.AbortedError, tf.errors.DeadlineExceededError, tf.errors.InternalError,
              tf.errors.UnavailableError)


def reset():
    """The reset point: shuts the runtime down (its failure after a lost peer is ignored) and
    joins the next generation of the world that includes this worker."""
    try:
        _common.shutdown()
    except HvdError:
        pass
    _common.init()


def run(func):
    """Decorator: runs ``func(state, ...)`` and survives changes of the world: restore +
    reset + sync after a collective failed (HorovodInternalError, or the TensorFlow error of
    an hvd op), reset + sync after HostsUpdatedInterrupt."""
    @functools.wraps(func)
    def translated(state, *args, **kwargs):
        try:
            return func(state, *args, **kwargs)
        except _LOST_PEER as e:
            if "Hvd" not in str(e):
                raise
            raise HorovodInternalError(f"a collective failed: {e.message}") from e
    return _elastic.run_fn(translated, reset)


def _bcast_int(value):
    return int(mpi_ops.broadcast(tf.constant([int(value)], tf.int64), 0, name="elastic.generation").numpy()[0])


class ObjectState(_elastic.ObjectState):
    """Plain attributes kept across resets: ``hvd.elastic.ObjectState(epoch=0, batch=0)``."""

    def __init__(self, **kwargs):
        super().__init__(bcast_object=functions.broadcast_object, get_rank=mpi_ops.rank, bcast_int=_bcast_int,
                         **kwargs)


class _VariablesState(ObjectState):
    """Variables kept across resets: commit() copies their values, restore() assigns the
    copies back, sync() broadcasts rank 0's; ``_variables()`` says which (subclasses)."""

    def __init__(self, **kwargs):
        self._saved_values = None
        super().__init__(**kwargs)
        self._save_values()

    def _variables(self):
        raise NotImplementedError()

    def _save_values(self):
        self._saved_values = [np.array(v.numpy(), copy=True) for v in self._variables()]

    def save(self):
        self._save_values()
        super().save()

    def restore(self):
        for v, value in zip(self._variables(), self._saved_values):
            v.assign(value)
        super().restore()

    def sync(self):
        functions.broadcast_variables(self._variables(), root_rank=0)
        self._save_values()
        super().sync()


class TensorFlowKerasState(_VariablesState):
    """A Keras model, its optimizer (``model.optimizer`` by default) and any other attributes
    (``**kwargs``, e.g. epoch=0). A worker that joins with an optimizer not built yet builds
    it before the broadcast, so that every rank holds the same variables."""

    def __init__(self, model, optimizer=None, backend=None, **kwargs):
        self.model = model
        self.optimizer = optimizer if optimizer is not None else getattr(model, "optimizer", None)
        super().__init__(**kwargs)

    def _variables(self):
        opt = self.optimizer
        if opt is not None and not opt.built and self.model.trainable_variables:
            opt.build(self.model.trainable_variables)
        return list(self.model.variables) + (list(opt.variables) if opt is not None else [])


class TensorFlowState(_VariablesState):
    """tf.Variables (eager) and any other attributes kept across resets."""

    def __init__(self, variables=None, session=None, **kwargs):
        if session is not None or variables is None:
            raise NotImplementedError("hvd.elastic.TensorFlowState keeps eager variables: give `variables` "
                                      "(tf.compat.v1 sessions are not supported in elastic mode)")
        self.variables = list(variables)
        super().__init__(**kwargs)

    def _variables(self):
        return self.variables


def generation():
    """The generation (world) this worker is in (0 outside elastic mode)."""
    return _core.elastic_generation()
