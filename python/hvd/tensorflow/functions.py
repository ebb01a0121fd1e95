"""Variables and objects (Horovod's horovod.tensorflow.functions): broadcast_variables,
broadcast_object, broadcast_object_fn, allgather_object."""
import numpy as np
import tensorflow as tf

from hvd import _common
from hvd.tensorflow import mpi_ops
from hvd.tensorflow.mpi_ops import global_process_set


def _assign_broadcasts(variables, root_rank, process_set):
    return tf.group(*[v.assign(mpi_ops.broadcast(v, root_rank, process_set=process_set)) for v in variables])




def broadcast_variables(variables, root_rank, process_set=global_process_set):
    """Assigns ``root_rank``'s value to each variable on every rank. Eagerly it runs at once;
    in a graph (tf.compat.v1) it returns the op that does it."""
    variables = list(variables)
    if not variables:
        return None if tf.executing_eagerly() else tf.no_op()
    if tf.executing_eagerly():
        # In one tf.function (closing over the variables, whatever their kind: tf or Keras):
        # the broadcasts are pending together instead of one round trip each.
        @tf.function
        def assign():
            _assign_broadcasts(variables, root_rank, process_set)
        assign()
        return None
    return _assign_broadcasts(variables, root_rank, process_set)


def _object_name(kind, name, process_set):
    """Unnamed object collectives take the set's next automatic name, never one derived from
    the object (the ranks' objects differ; the names must not)."""
    return f"{kind}.{name}" if name else _common._name(kind, None, process_set)


def _run(tensor, session):
    """The value of ``tensor``: eagerly its numpy, in a graph what ``session`` computes."""
    if tf.executing_eagerly():
        return tensor.numpy()
    if session is None:
        raise ValueError("hvd: in graph mode (tf.compat.v1) give the session to run the collective in")
    return session.run(tensor)


def _to_bytes_tensor(data):
    return tf.constant(np.frombuffer(data, dtype=np.uint8) if data else np.zeros(0, np.uint8))


def broadcast_object(obj, root_rank=0, session=None, name=None, process_set=global_process_set):
    """Pickles ``obj`` on the root and returns the root's object on every rank (the other
    ranks' ``obj`` is ignored). In graph mode give the ``session`` to run in."""
    name = _object_name("broadcast_object", name, process_set)
    is_root = _common.rank() == root_rank  # root_rank is a global rank, as in Horovod

    def bcast_size(n):
        t = mpi_ops.broadcast(tf.constant([n], tf.int64), root_rank, name=f"{name}.size", process_set=process_set)
        return _run(t, session)[0]

    def bcast_bytes(data):
        t = mpi_ops.broadcast(_to_bytes_tensor(data), root_rank, name=f"{name}.data", process_set=process_set)
        return _run(t, session).tobytes()
    return _common.broadcast_object_bytes(obj, is_root, bcast_size, bcast_bytes)


def broadcast_object_fn(root_rank=0, session=None, name=None, process_set=global_process_set):
    """A function ``f(obj)`` that broadcasts ``obj`` from ``root_rank`` (Horovod's form for
    graph mode, where the session is fixed once)."""
    def fn(obj):
        return broadcast_object(obj, root_rank, session, name, process_set)
    return fn


def allgather_object(obj, session=None, name=None, process_set=global_process_set):
    """Every rank's ``obj`` (any picklable object), in rank order, on every rank."""
    name = _object_name("allgather_object", name, process_set)

    def gather_sizes(n):
        t = mpi_ops.allgather(tf.constant([n], tf.int64), name=f"{name}.sizes", process_set=process_set)
        return _run(t, session).tolist()

    def gather_bytes(data):
        t = mpi_ops.allgather(_to_bytes_tensor(data), name=f"{name}.data", process_set=process_set)
        return _run(t, session).tobytes()
    return _common.allgather_object_bytes(obj, gather_sizes, gather_bytes)
