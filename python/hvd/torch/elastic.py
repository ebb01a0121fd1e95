"""hvd.elastic for PyTorch (Horovod's horovod.torch.elastic): ``run``, ``TorchState``,
``ObjectState``, ``ElasticSampler``, ``HostsUpdatedInterrupt`` and the reset point
``reset()``.

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
import math

import torch

from hvd import HvdError, _core
from hvd import elastic as _common
from hvd.elastic import HostsUpdatedInterrupt, State  # noqa: F401
from hvd.torch import mpi_ops
from hvd.torch.functions import allgather_object, broadcast_object, broadcast_optimizer_state, broadcast_parameters


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


class _StateDictHandler:
    """Keeps an object with state_dict()/load_state_dict() across resets: save() deep-copies
    its state dict, restore() loads the copy back; sync() is the subclass's."""

    def __init__(self, value):
        self.value = value
        self.save()

    def save(self):
        self._saved = copy.deepcopy(self.value.state_dict())

    def restore(self):
        self.value.load_state_dict(copy.deepcopy(self._saved))


class _ModelHandler(_StateDictHandler):
    def sync(self):
        broadcast_parameters(self.value.state_dict(), root_rank=0)


class _OptimizerHandler(_StateDictHandler):
    def restore(self):
        self._drop_pending()
        super().restore()

    def sync(self):
        self._drop_pending()
        broadcast_optimizer_state(self.value, root_rank=0)

    def _drop_pending(self):
        drop = getattr(self.value, "_drop_pending", None)  # a DistributedOptimizer's
        if drop:
            drop()


class ElasticSampler(torch.utils.data.Sampler):
    """Horovod's ElasticSampler: this rank's share of a dataset's indices, which resumes
    where the workers were when the world changes. Each epoch (``set_epoch``) every index is
    visited once over all ranks; ``record_batch(batch_idx, batch_size)`` (or
    ``record_indices``) marks what this rank has processed; held in a ``TorchState``
    (``TorchState(model, optimizer, sampler=sampler)``) it is committed and restored with the
    rest, and ``sync()`` takes the union of every rank's processed indices, so that after a
    reset the new world shares out only the indices not processed yet. Shuffling is by
    ``seed + epoch``, the same on every rank; the share is padded, as torch's
    DistributedSampler pads, so that every rank gets the same number."""

    def __init__(self, dataset, shuffle=True, seed=0):
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.processed_indices = set()
        self.num_replicas = 0
        self.rank = 0
        self.remaining_indices = []
        self.num_samples = 0
        self.total_size = 0
        self.indices = []
        self.reset()

    def set_epoch(self, epoch):
        """A new epoch: nothing processed yet, a new shuffle."""
        self.epoch = epoch
        self.processed_indices = set()
        self.reset()

    def record_batch(self, batch_idx, batch_size):
        """Marks the ``batch_idx``-th batch of this rank's share (``batch_size`` indices) processed."""
        self.record_indices(self.get_indices(batch_idx, batch_size))

    def record_indices(self, indices):
        self.processed_indices.update(indices)

    def get_indices(self, batch_idx, batch_size):
        """The dataset indices of this rank's ``batch_idx``-th batch."""
        start = batch_idx * batch_size
        return self.indices[start:min(start + batch_size, len(self.indices))]

    def state_dict(self):
        return dict(epoch=self.epoch, processed_indices=self.processed_indices)

    def load_state_dict(self, state_dict):
        self.epoch = state_dict["epoch"]
        self.processed_indices = set(state_dict["processed_indices"])
        self.reset()

    def reset(self):
        """Shares out the indices not processed yet among the world as it is now."""
        self.num_replicas = mpi_ops.size()
        self.rank = mpi_ops.rank()
        self.remaining_indices = [i for i in range(len(self.dataset)) if i not in self.processed_indices]
        self.num_samples = int(math.ceil(len(self.remaining_indices) / self.num_replicas))
        self.total_size = self.num_samples * self.num_replicas
        self.indices = self._share()

    def _share(self):
        indices = list(self.remaining_indices)
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = [indices[i] for i in torch.randperm(len(indices), generator=g).tolist()]
        if indices:
            while len(indices) < self.total_size:  # pad to a multiple of the world
                indices += indices[:self.total_size - len(indices)]
        return indices[self.rank:self.total_size:self.num_replicas]

    def __iter__(self):
        self.indices = self._share()
        return iter(self.indices)

    def __len__(self):
        return self.num_samples


class _SamplerHandler(_StateDictHandler):
    def sync(self):
        # Every rank's processed indices, then rank 0's epoch with their union, everywhere.
        everyone = allgather_object(self.value.processed_indices, name="elastic.sampler.processed")
        state = self.value.state_dict()
        state["processed_indices"] = set().union(*everyone)
        self.value.load_state_dict(broadcast_object(state, root_rank=0, name="elastic.sampler.state"))


class TorchState(ObjectState):
    """A model, an optimizer and any other attributes (``**kwargs``, e.g. epoch=0, or an
    ElasticSampler), kept across resets: commit() deep-copies the state dicts, restore()
    loads them back, sync() broadcasts the parameters and the optimizer state from rank 0
    (and merges the samplers' processed indices)."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        handlers = {}
        if model is not None:
            handlers["model"] = _ModelHandler(model)
        if optimizer is not None:
            handlers["optimizer"] = _OptimizerHandler(optimizer)
        for name, value in list(kwargs.items()):  # samplers keep their own state (not pickled whole)
            if isinstance(value, ElasticSampler):
                handlers[name] = _SamplerHandler(kwargs.pop(name))
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
