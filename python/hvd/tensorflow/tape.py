"""Averaging a step's gradients (Horovod's _make_allreduce_grads_fn) and DistributedGradientTape.

Each gradient is its own allreduce (or, with ``groups``, one grouped allreduce per group);
the ops are issued together and the runtime fuses what is ready in the same cycle. Eagerly
the reduction runs inside a ``tf.function`` for the same reason, as Horovod's does.
"""
import tensorflow as tf

from hvd.tensorflow import reduce
from hvd.tensorflow import trace as _trace
from hvd.tensorflow.compression import Compression
from hvd.tensorflow.mpi_ops import Average, global_process_set


def check_groups(groups, num_groups=0):
    """Horovod's ``groups`` (an int > 0 or a list of lists of variables), ``num_groups``'s
    older spelling folded in."""
    if num_groups and groups is None:
        groups = num_groups
    if groups is not None and not (isinstance(groups, list) or (isinstance(groups, int) and groups > 0)):
        raise ValueError("groups should be a non-negative integer or a list of list of tf.Variable.")
    return groups


def _index_groups(grads, variables, groups):
    """Positions of the non-None gradients, split as ``groups`` asks: n groups of about equal
    count, or the variables' lists (a variable in no list is a group of its own)."""
    present = [i for i, g in enumerate(grads) if g is not None]
    if isinstance(groups, int):
        n = min(groups, len(present)) or 1
        return [present[k * len(present) // n:(k + 1) * len(present) // n] for k in range(n)]
    where = {id(v): i for i, v in enumerate(variables or []) if grads[i] is not None}
    out = []
    for group in groups:
        idx = [where.pop(id(v)) for v in group if id(v) in where]
        if idx:
            out.append(idx)
    return out + [[i] for i in sorted(where.values())]


_fns = {}  # the functions made so far: a tape made every step reuses its traced reduction


def make_allreduce_grads_fn(name, compression=Compression.none, sparse_as_dense=False, op=Average,
                            gradient_predivide_factor=1.0, groups=None, process_set=global_process_set):
    """fn(grads, variables=None) -> the reduced gradients (None stays None). The same
    arguments give the same function (and so, eagerly, the same traced tf.function)."""
    group_key = tuple(tuple(id(v) for v in g) for g in groups) if isinstance(groups, list) else groups
    key = (name, compression, sparse_as_dense, op, gradient_predivide_factor, group_key, id(process_set))
    if key not in _fns:
        _fns[key] = _allreduce_grads_fn(name, compression, sparse_as_dense, op, gradient_predivide_factor,
                                        groups, process_set)
    return _fns[key]


def _allreduce_grads_fn(name, compression, sparse_as_dense, op, gradient_predivide_factor, groups, process_set):
    pre, post = (1.0 / gradient_predivide_factor, gradient_predivide_factor) if op == Average else (1.0, 1.0)
    kw = dict(compression=compression, op=op, prescale_factor=pre, postscale_factor=post, process_set=process_set)

    def reduce_all(grads, index_groups, names):
        with tf.name_scope(name + "_Allreduce"):
            if sparse_as_dense:
                grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]
            out = list(grads)
            if index_groups is None:
                out = [None if g is None else reduce.allreduce(g, **kw) for g in grads]
            else:
                for idx in index_groups:
                    for i, r in zip(idx, reduce.grouped_allreduce([grads[i] for i in idx], **kw)):
                        out[i] = r
            _trace.register_gradients(out, names)
            return out

    graph_fn = tf.function(reduce_all)

    def allreduce_grads(grads, variables=None):
        grads = list(grads)
        if not process_set.included():
            return grads
        index_groups = None if groups is None else tuple(map(tuple, _index_groups(grads, variables, groups)))
        names = _trace.variable_names(variables)
        if tf.executing_eagerly():
            return list(graph_fn(grads, index_groups, names))
        return reduce_all(grads, index_groups, names)
    return allreduce_grads


def reduce_shared(allreduce_grads, grads, sources, local_ids, scale_local, process_set):
    """``grads`` with those of the sources not registered as local (``local_ids``: their id())
    reduced by ``allreduce_grads``; local ones stay this rank's, divided by the set's size
    when ``scale_local`` (Horovod's scale_local_gradients)."""
    shared = [i for i, s in enumerate(sources) if id(s) not in local_ids]
    out = list(grads)
    for i, g in zip(shared, allreduce_grads([grads[i] for i in shared], [sources[i] for i in shared])):
        out[i] = g
    if scale_local and local_ids:
        n = process_set.size()
        for i, s in enumerate(sources):
            g = out[i]
            if id(s) in local_ids and g is not None:
                out[i] = tf.IndexedSlices(g.values / n, g.indices, g.dense_shape) if isinstance(
                    g, tf.IndexedSlices) else g / n
    return out


def _check_predivide(gradient_predivide_factor, op):
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("gradient_predivide_factor not supported with op != Average")


class _DistributedGradientTape(tf.GradientTape):
    """A GradientTape whose gradient() returns gradients allreduced over the process set."""

    def _hvd_setup(self, allreduce_grads, process_set, scale_local_gradients):
        self._allreduce_grads = allreduce_grads
        self._hvd_process_set = process_set
        self._scale_local = scale_local_gradients
        self._local_sources = set()

    def register_local_source(self, source):
        """Its gradient stays this rank's own (divided by the set's size, as Horovod does,
        unless scale_local_gradients=False)."""
        self._local_sources.add(id(source))

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        flat = tf.nest.flatten(sources)
        grads = super().gradient(target, flat, output_gradients, **kwargs)
        out = reduce_shared(self._allreduce_grads, grads, flat, self._local_sources, self._scale_local,
                            self._hvd_process_set)
        return tf.nest.pack_sequence_as(sources, out)


def DistributedGradientTape(gradtape, device_dense="", device_sparse="", compression=Compression.none,
                            sparse_as_dense=False, op=Average, gradient_predivide_factor=1.0, num_groups=0,
                            groups=None, process_set=global_process_set, scale_local_gradients=True):
    """Wraps a tf.GradientTape (used as the ``with`` block's tape) so that gradient() returns
    the gradients averaged (``op``) over the ranks of ``process_set``."""
    _check_predivide(gradient_predivide_factor, op)
    groups = check_groups(groups, num_groups)
    cls = type(gradtape.__class__.__name__, (_DistributedGradientTape, gradtape.__class__), {})
    tape = cls.__new__(cls)
    tape.__dict__.update(gradtape.__dict__)  # the recording (the same underlying tape)
    tape._hvd_setup(make_allreduce_grads_fn("DistributedGradientTape", compression, sparse_as_dense, op,
                                            gradient_predivide_factor, groups, process_set),
                    process_set, scale_local_gradients)
    return tape


def PartialDistributedGradientTape(gradtape, device_dense="", device_sparse="", compression=Compression.none,
                                   sparse_as_dense=False, op=Average, gradient_predivide_factor=1.0,
                                   num_groups=0, groups=None, process_set=global_process_set, local_layers=None,
                                   scale_local_gradients=True):
    """DistributedGradientTape whose ``local_layers``' variables keep their local gradients."""
    tape = DistributedGradientTape(gradtape, device_dense, device_sparse, compression, sparse_as_dense, op,
                                   gradient_predivide_factor, num_groups, groups, process_set,
                                   scale_local_gradients)
    layers = [] if local_layers is None else (local_layers if isinstance(local_layers, (list, tuple))
                                              else [local_layers])
    for layer in layers:
        for v in layer.trainable_weights:
            tape.register_local_source(v)
    return tape
