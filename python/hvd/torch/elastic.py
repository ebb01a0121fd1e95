"""hvd.elastic for PyTorch (Horovod's horovod.torch.elastic): ``run``, ``TorchState``,
``ObjectState``, ``HostsUpdatedInterrupt`` and the reset point ``reset()``.

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...  # steps
            state.commit()

    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    train(state)

See hvd/elastic.py for what happens on a failure and docs/python.md ("Elastic training").
"""
import copy

import torch

from hvd import HvdError, _core
from hvd import elastic as _common
from hvd.elastic import HostsUpdatedInterrupt, State  # noqa: F401
from hvd.torch import mpi_ops
from hvd.torch.functions import broadcast_object, broadcast_optimizer_state, broadcast_parameters


def reset():
    """The reset point: shuts the runtime down (its failure after a lost peer is ignored)
    and joins the next generation of the world that includes this worker (new size and
    rank; waits up to the elastic timeout). Every worker of that generation must reach it."""
    try:
        mpi_ops.shutdown()
    except HvdError:
        pass
    mpi_ops.init()


def run(func):
    """Decorator: runs ``func(state, ...)`` and survives changes of the world (see
    hvd/elastic.py): restore + reset + sync after HorovodInternalError, reset + sync after
    HostsUpdatedInterrupt."""
    return _common.run_fn(func, reset)


def _bcast_int(value):
    t = torch.tensor([int(value)], dtype=torch.int64)
    mpi_ops.broadcast_(t, 0, name="elastic.generation")
    return int(t.item())


class ObjectState(_common.ObjectState):
    """Plain attributes kept across resets: ``hvd.elastic.ObjectState(epoch=0, batch=0)``."""

    def __init__(self, **kwargs):
        super().__init__(bcast_object=broadcast_object, get_rank=mpi_ops.rank, bcast_int=_bcast_int, **kwargs)


class _ModelHandler:
    def __init__(self, model):
        self.value = model
        self.save()

    def save(self):
        self._saved = copy.deepcopy(self.value.state_dict())

    def restore(self):
        self.value.load_state_dict(self._saved)

    def sync(self):
        broadcast_parameters(self.value.state_dict(), root_rank=0)


class _OptimizerHandler:
    def __init__(self, optimizer):
        self.value = optimizer
        self.save()

    def save(self):
        self._saved = copy.deepcopy(self.value.state_dict())

    def restore(self):
        self._drop_pending()
        self.value.load_state_dict(self._saved)

    def sync(self):
        self._drop_pending()
        broadcast_optimizer_state(self.value, root_rank=0)

    def _drop_pending(self):
        drop = getattr(self.value, "_drop_pending", None)  # a DistributedOptimizer's
        if drop:
            drop()


class TorchState(ObjectState):
    """A model, an optimizer and any other attributes (``**kwargs``, e.g. epoch=0), kept
    across resets: commit() deep-copies the state dicts, restore() loads them back, sync()
    broadcasts the parameters and the optimizer state from rank 0."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        handlers = {}
        if model is not None:
            handlers["model"] = _ModelHandler(model)
        if optimizer is not None:
            handlers["optimizer"] = _OptimizerHandler(optimizer)
        self.__dict__["_handlers"] = handlers
        for name, h in handlers.items():
            self.__dict__[name] = h.value
        super().__init__(**kwargs)

    def save(self):
        for h in self._handlers.values():
            h.save()
        super().save()

    def restore(self):
        for h in self._handlers.values():
            h.restore()
        super().restore()

    def sync(self):
        for h in self._handlers.values():
            h.sync()
        super().sync()

    def __setattr__(self, name, value):
        handlers = self.__dict__.get("_handlers", {})
        if name in handlers:
            handlers[name].value = value
        super().__setattr__(name, value)


def generation():
    """The generation (world) this worker is in (0 outside elastic mode)."""
    return _core.elastic_generation()
