"""Elastic training, framework-neutral part (Horovod's horovod.common.elastic).

Under ``hvdrun --host-discovery-script ...`` the set of workers may change while a job
runs: a worker dies, or discovery offers a new slot. hvdrun (the driver) then publishes a
new *generation* of the world in the rendezvous; the workers move to it at a *reset
point*: the runtime and its transport shut down and re-initialize with the new size and
ranks. A function decorated with ``run`` (``hvd.elastic.run`` of hvd.torch) does that:

* ``HorovodInternalError`` (a collective failed: a peer died) -> ``state.restore()`` (the
  last commit), reset, ``state.sync()`` (broadcast from the new rank 0), call again;
* ``HostsUpdatedInterrupt`` (``state.commit()`` or ``state.check_host_updates()`` saw a
  newer generation, on every rank at once) -> reset, sync, call again (nothing to restore:
  it is raised right after a commit).
"""
import functools

from hvd import _core
from hvd._core import HvdError as HorovodInternalError


class HostsUpdatedInterrupt(RuntimeError):
    """The driver published a new generation (workers added or gone): reset at this commit.
    ``skip_sync`` is Horovod's (True only when hosts were only removed); hvd always syncs."""

    def __init__(self, skip_sync=False):
        super().__init__("hvd: the set of workers changed (a new generation of the world)")
        self.skip_sync = skip_sync


class State:
    """What a training loop keeps across resets: ``commit()`` saves it (and checks for a new
    generation), ``restore()`` rolls back to the last commit, ``sync()`` broadcasts it
    from rank 0. Subclasses define save/restore/sync."""

    def __init__(self, bcast_object, get_rank, bcast_int=None):
        self._bcast_object = bcast_object
        self._rank = get_rank
        self._bcast_int = bcast_int or (lambda v: int(bcast_object(v)))
        self._reset_callbacks = []

    def register_reset_callbacks(self, callbacks):
        """Functions called after every reset (e.g. to rescale the learning rate)."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        self.reset()
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state, then raises HostsUpdatedInterrupt if the workers changed."""
        self.save()
        self.check_host_updates()

    def check_host_updates(self):
        """Raises HostsUpdatedInterrupt on every rank when the driver has published a newer
        generation than this world's. Rank 0 asks the rendezvous and broadcasts the answer,
        so that all ranks raise at the same point (a collective: call it on every rank)."""
        if not _core.elastic_enabled():
            return
        current = _core.elastic_generation()
        latest = _core.elastic_latest_generation() if self._rank() == 0 else current
        if self._bcast_int(latest) > current:
            raise HostsUpdatedInterrupt(False)

    def save(self):
        raise NotImplementedError()

    def restore(self):
        raise NotImplementedError()

    def sync(self):
        raise NotImplementedError()

    def reset(self):
        pass


class ObjectState(State):
    """State of plain Python attributes: ``ObjectState(bcast_object, get_rank, epoch=0)``
    makes ``state.epoch``; commit copies the attributes, sync broadcasts them (pickled)."""

    def __init__(self, bcast_object, get_rank, bcast_int=None, **kwargs):
        self._saved_state = kwargs
        self._set_attrs()
        super().__init__(bcast_object=bcast_object, get_rank=get_rank, bcast_int=bcast_int)

    def save(self):
        self._saved_state = {attr: getattr(self, attr) for attr in self._saved_state}

    def restore(self):
        self._set_attrs()

    def sync(self):
        if self._saved_state:
            self._saved_state = self._bcast_object(self._saved_state)
            self._set_attrs()

    def _set_attrs(self):
        for attr, value in self._saved_state.items():
            setattr(self, attr, value)


def run_fn(func, reset):
    """Horovod's elastic loop around ``func(state, ...)``; ``reset()`` is the reset point."""
    @functools.wraps(func)
    def wrapper(state, *args, **kwargs):
        skip_sync = False
        while True:
            try:
                if not skip_sync:
                    state.sync()
                return func(state, *args, **kwargs)
            except HorovodInternalError:
                state.restore()
                skip_sync = False
            except HostsUpdatedInterrupt as e:
                skip_sync = e.skip_sync
            reset()
            state.on_reset()
    return wrapper
