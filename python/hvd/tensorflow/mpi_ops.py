"""The collectives of hvd.tensorflow as TensorFlow ops (Horovod's horovod.tensorflow.mpi_ops).

The ops live in ``_hvd_tf_ops.so``, built against the installed TensorFlow; they enqueue
into the runtime of ``hvd._core`` (one per process) through the C table whose address this
module hands the library once, at import. Each op is an AsyncOpKernel: it returns at once
and the runtime's completion callback finishes it, so a graph's collectives are pending
together and fuse. They run eagerly and inside ``tf.function``.

Names: the ranks match tensors by name. Eagerly, an unnamed tensor takes the process set's
next automatic name (as in hvd.torch); in a graph, the op's node name (``HvdAllreduce_`` and
the input's name, or the ``name`` given, under the name scope unless ``ignore_name_scope``),
as Horovod keys its ops.
"""
import ctypes
import os
import re

import tensorflow as tf

from hvd import _common, _core
from hvd._common import (  # noqa: F401
    Average, Sum, Min, Max, Product, Adasum, OP_NAMES,
    ProcessSet, global_process_set, _set_id, add_process_set, remove_process_set,
    init, shutdown, is_initialized, rank, size, local_rank, local_size, cross_rank, cross_size,
    mpi_built, mpi_enabled, mpi_threads_supported, gloo_built, gloo_enabled, nccl_built, ddl_built,
    ccl_built, cuda_built, rocm_built, is_homogeneous,
)

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_hvd_tf_ops.so")


def _load_library():
    """Loads the op library and gives it hvd._core's runtime table."""
    if not os.path.exists(_LIBRARY):
        raise ImportError(f"hvd.tensorflow: {_LIBRARY} is missing: this hvd was built without TensorFlow "
                          f"(configure with -DHVD_WITH_TENSORFLOW=ON, or HOROVOD_WITH_TENSORFLOW=1, with "
                          f"TensorFlow installed in the interpreter that builds it)")
    lib = tf.load_op_library(_LIBRARY)
    rc = ctypes.CDLL(_LIBRARY).hvd_capi_install(ctypes.c_void_p(_core.capi_table()))
    if rc != 0:
        raise ImportError(f"hvd.tensorflow: {_LIBRARY} was built for another hvd._core (table version {rc})")
    return lib


HVD_LIB = _load_library()

# The ops are stateful (a collective talks to the other ranks: never folded into a constant,
# never merged). tf.function's automatic control dependencies chain stateful ops in program
# order; the collectives are listed with the order-insensitive ops that must run instead,
# so that a step's collectives are pending together (and fuse) and each runs on every rank
# even where its output goes unused. barrier and join keep their place in program order.
_COLLECTIVES = ("HvdAllreduce", "HvdGroupedAllreduce", "HvdAllgather", "HvdGroupedAllgather", "HvdBroadcast",
                "HvdAlltoall", "HvdReducescatter", "HvdGroupedReducescatter", "HvdQuery")


def _register_order_insensitive(types):
    try:
        from tensorflow.python.framework import auto_control_deps as acd
        acd.MUST_RUN_ORDER_INSENSITIVE_STATEFUL_OPS = frozenset(acd.MUST_RUN_ORDER_INSENSITIVE_STATEFUL_OPS) | set(types)
    except (ImportError, AttributeError):  # another TensorFlow: correct, but one collective at a time
        pass


_register_order_insensitive(_COLLECTIVES)

_INTEGERS = (tf.uint8, tf.int8, tf.int16, tf.int32, tf.int64)
# What the ops take: the reductions the runtime's dtypes, the others those and bool.
_REDUCIBLE = (tf.uint8, tf.int8, tf.int32, tf.int64, tf.float16, tf.bfloat16, tf.float32, tf.float64)
_MOVABLE = _REDUCIBLE + (tf.bool,)


def _tensors(values, fn, allowed=_MOVABLE):
    """``values`` as tensors of dtypes the op takes (TypeError naming the op otherwise)."""
    out = [tf.convert_to_tensor(v) for v in values]
    for t in out:
        if t.dtype not in allowed:
            raise TypeError(f"hvd.{fn}: dtype {t.dtype.name} is not supported (supported: "
                            f"{', '.join(d.name for d in allowed)})")
    return out


def _executing_eagerly():
    return tf.executing_eagerly()


def _normalize_name(name):
    """A name TensorFlow takes for a node."""
    return re.sub("[^a-zA-Z0-9_]", "_", name)


def _names(kind, name, tensors, process_set):
    """(tensor_name input, node name) of a collective over ``tensors``. Eagerly the runtime
    name is explicit (``name`` or the set's next automatic one); in a graph it is the node's
    name, which the kernel reads (Horovod's keys): ``name`` or the op's type, which the graph
    makes unique (``HvdAllreduce_1``, ...), under the name scope. Not the input's name, as
    Horovod has it: a tensor a tf.function captures is named by a counter of the process,
    which differs between ranks whose histories differ, and the ranks would never match."""
    if _executing_eagerly():
        return _common._name(kind, name, process_set), None
    if name is not None:
        return "", _normalize_name(name)
    return "", "Hvd" + "".join(w.capitalize() for w in kind.split("_"))


def _op_value(op, fn, process_set):
    if op not in OP_NAMES:
        raise ValueError(f"hvd.{fn}: unknown op {op!r}")
    if op == Adasum:
        _common._check_adasum(process_set, fn)
    return int(op)


def _set_size_tensor(process_set, dtype):
    """The set's size as a tensor of ``dtype`` (read when the op runs in elastic mode)."""
    n = size_op(process_set.process_set_id) if _core.elastic_enabled() else process_set.size()
    return tf.cast(n, dtype)


def _integer_scaling(tensor, op, pre, post):
    """Integer Average and scale factors as Horovod's CPU path computes them: in double,
    truncated toward zero; None when the runtime can do it all."""
    return tensor.dtype in _INTEGERS and (op == Average or pre != 1.0 or post != 1.0)


def _scale_int(t, factor):
    return tf.cast(tf.cast(t, tf.float64) * factor, t.dtype)


def _allreduce(tensor, name=None, op=Sum, prescale_factor=1.0, postscale_factor=1.0,
               ignore_name_scope=False, process_set=global_process_set):
    """The HvdAllreduce op (no compression, no IndexedSlices: hvd.allreduce has those)."""
    tensor, = _tensors([tensor], "allreduce", _REDUCIBLE)
    op = _op_value(op, "allreduce", process_set)
    if _integer_scaling(tensor, op, prescale_factor, postscale_factor):
        x = _scale_int(tensor, prescale_factor) if prescale_factor != 1.0 else tensor
        summed = _allreduce(x, name, Sum, 1.0, 1.0, ignore_name_scope, process_set)
        factor = postscale_factor / (process_set.size() if op == Average else 1)
        return _scale_int(summed, factor) if factor != 1.0 else summed
    tname, node = _names("allreduce", name, [tensor], process_set)
    return HVD_LIB.hvd_allreduce(tensor, tname, reduce_op=op, prescale_factor=prescale_factor,
                                 postscale_factor=postscale_factor, ignore_name_scope=ignore_name_scope,
                                 process_set_id=_set_id(process_set), name=node)


def _grouped_allreduce(tensors, name=None, op=Sum, prescale_factor=1.0, postscale_factor=1.0,
                       ignore_name_scope=False, process_set=global_process_set):
    """The HvdGroupedAllreduce op: one negotiated unit, fused by the runtime."""
    tensors = _tensors(tensors, "grouped_allreduce", _REDUCIBLE)
    if not tensors:
        return []
    op = _op_value(op, "grouped_allreduce", process_set)
    if any(_integer_scaling(t, op, prescale_factor, postscale_factor) for t in tensors):
        return [_allreduce(t, None if name is None else f"{name}.{i}", op, prescale_factor, postscale_factor,
                           ignore_name_scope, process_set) for i, t in enumerate(tensors)]
    tname, node = _names("grouped_allreduce", name, tensors, process_set)
    return HVD_LIB.hvd_grouped_allreduce(tensors, tname, reduce_op=op, prescale_factor=prescale_factor,
                                         postscale_factor=postscale_factor,
                                         ignore_name_scope=ignore_name_scope,
                                         process_set_id=_set_id(process_set), name=node)


def allgather(tensor, name=None, ignore_name_scope=False, process_set=global_process_set):
    """Every rank's ``tensor`` concatenated along the first dimension (which may differ)."""
    tensor, = _tensors([tensor], "allgather")
    tname, node = _names("allgather", name, [tensor], process_set)
    return HVD_LIB.hvd_allgather(tensor, tname, ignore_name_scope=ignore_name_scope,
                                 process_set_id=_set_id(process_set), name=node)


def grouped_allgather(tensors, name=None, ignore_name_scope=False, process_set=global_process_set):
    """allgather of each tensor of the list, negotiated as one unit."""
    tensors = _tensors(tensors, "grouped_allgather")
    if not tensors:
        return []
    tname, node = _names("grouped_allgather", name, tensors, process_set)
    return HVD_LIB.hvd_grouped_allgather(tensors, tname, ignore_name_scope=ignore_name_scope,
                                         process_set_id=_set_id(process_set), name=node)


def broadcast(tensor, root_rank, name=None, ignore_name_scope=False, process_set=global_process_set):
    """``root_rank``'s ``tensor`` on every rank of the set (a global rank, a member of
    ``process_set``, as in Horovod)."""
    tensor, = _tensors([tensor], "broadcast")
    root = _common._set_root(root_rank, process_set, "broadcast")
    tname, node = _names("broadcast", name, [tensor], process_set)
    return HVD_LIB.hvd_broadcast(tensor, tname, root_rank=root, ignore_name_scope=ignore_name_scope,
                                 process_set_id=_set_id(process_set), name=node)


def broadcast_(variables, root_rank, name=None, process_set=global_process_set):
    """Assigns ``root_rank``'s values to ``variables`` in place; returns their new values."""
    values = []
    for i, v in enumerate(variables):
        values.append(v.assign(broadcast(v, root_rank, None if name is None else f"{name}.{i}",
                                         process_set=process_set)))
    return values


def alltoall(tensor, splits=None, name=None, ignore_name_scope=False, process_set=global_process_set):
    """Sends ``splits[r]`` first-dimension rows to rank r (None: an even split) and returns
    the rows received, in rank order; with ``splits`` given, (rows, received_splits)."""
    tensor, = _tensors([tensor], "alltoall")
    s = tf.constant([], dtype=tf.int32) if splits is None else tf.cast(tf.convert_to_tensor(splits), tf.int32)
    tname, node = _names("alltoall", name, [tensor], process_set)
    out, received = HVD_LIB.hvd_alltoall(tensor, s, tname, ignore_name_scope=ignore_name_scope,
                                         process_set_id=_set_id(process_set), name=node)
    return (out, received) if splits is not None else out


def _reducescatter(tensor, name=None, op=Sum, ignore_name_scope=False, process_set=global_process_set,
                   prescale_factor=1.0, postscale_factor=1.0):
    """The HvdReducescatter op: this rank's rows of the reduction (scale factors applied here)."""
    tensor, = _tensors([tensor], "reducescatter", _REDUCIBLE)
    op = _op_value(op, "reducescatter", process_set)
    if prescale_factor != 1.0:
        tensor = _scale(tensor, prescale_factor)
    rop = Sum if (tensor.dtype in _INTEGERS and op == Average) else op
    tname, node = _names("reducescatter", name, [tensor], process_set)
    out = HVD_LIB.hvd_reducescatter(tensor, tname, reduce_op=rop, ignore_name_scope=ignore_name_scope,
                                    process_set_id=_set_id(process_set), name=node)
    factor = postscale_factor / (process_set.size() if rop != op else 1)
    return _scale(out, factor) if factor != 1.0 else out


def _grouped_reducescatter(tensors, name=None, op=Sum, ignore_name_scope=False,
                           process_set=global_process_set, prescale_factor=1.0, postscale_factor=1.0):
    """The HvdGroupedReducescatter op."""
    tensors = _tensors(tensors, "grouped_reducescatter", _REDUCIBLE)
    if not tensors:
        return []
    op = _op_value(op, "grouped_reducescatter", process_set)
    if prescale_factor != 1.0:
        tensors = [_scale(t, prescale_factor) for t in tensors]
    rop = Sum if (op == Average and any(t.dtype in _INTEGERS for t in tensors)) else op
    tname, node = _names("grouped_reducescatter", name, tensors, process_set)
    outs = HVD_LIB.hvd_grouped_reducescatter(tensors, tname, reduce_op=rop, ignore_name_scope=ignore_name_scope,
                                             process_set_id=_set_id(process_set), name=node)
    factor = postscale_factor / (process_set.size() if rop != op else 1)
    return [_scale(o, factor) for o in outs] if factor != 1.0 else list(outs)


def _scale(t, factor):
    return _scale_int(t, factor) if t.dtype in _INTEGERS else t * tf.cast(factor, t.dtype)


def join():
    """Declares this rank out of data: other ranks' collectives go on without it (it
    contributes zeros) until every rank joined. Returns the last rank to join (a tensor)."""
    return HVD_LIB.hvd_join()


def barrier(process_set=global_process_set):
    """Ends when every rank of the set reached it (an op when building a graph)."""
    return HVD_LIB.hvd_barrier(process_set_id=_set_id(process_set))


def size_op(process_set_id=0, name=None):
    """The number of ranks (of the set), read when the op runs."""
    if process_set_id:
        ps = _common.process_set_by_id(process_set_id)
        return tf.constant(ps.size(), dtype=tf.int32, name=name)
    return HVD_LIB.hvd_query(query="size", name=name)


def local_size_op(name=None):
    return HVD_LIB.hvd_query(query="local_size", name=name)


def rank_op(name=None):
    return HVD_LIB.hvd_query(query="rank", name=name)


def local_rank_op(name=None):
    return HVD_LIB.hvd_query(query="local_rank", name=name)


def process_set_included_op(process_set_id=0, name=None):
    """1 when this rank is in the set, else 0."""
    ps = _common.process_set_by_id(process_set_id)
    return tf.constant(1 if ps.included() else 0, dtype=tf.int32, name=name)


for _op_type in ("HvdQuery", "HvdJoin", "HvdBarrier"):
    tf.no_gradient(_op_type)
