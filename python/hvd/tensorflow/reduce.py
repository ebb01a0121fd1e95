"""hvd.tensorflow's reductions as Horovod's horovod.tensorflow has them: allreduce (of dense
tensors, and of tf.IndexedSlices by two allgathers), grouped_allreduce, reducescatter and
grouped_reducescatter, with compression and Average by default."""
import tensorflow as tf

from hvd.tensorflow import mpi_ops
from hvd.tensorflow.compression import Compression
from hvd.tensorflow.mpi_ops import Average, Sum, Adasum, global_process_set


def _resolve_op(op, average, fn):
    """Horovod's op / deprecated average pair; Average by default."""
    if average is not None:
        if op is not None:
            raise ValueError(f"hvd.{fn}: give op or average, not both")
        return Average if average else Sum
    return Average if op is None else op


def _sparse_check(op, prescale_factor, postscale_factor):
    if op == Adasum:
        raise NotImplementedError("The Adasum reduction does not currently support sparse tensors. As a "
                                  "workaround please pass sparse_as_dense=True to DistributedOptimizer")
    if op not in (Sum, Average):
        raise NotImplementedError("Only Sum and Average ops are supported with tf.IndexedSlices")
    if prescale_factor != 1.0 or postscale_factor != 1.0:
        raise NotImplementedError("Pre/postscale_factor are not supported with tf.IndexedSlices")


def _sparse_allreduce(slices_list, op, process_set, ignore_name_scope):
    """IndexedSlices reduced as Horovod does: every rank's values and indices allgathered
    (duplicates add up when densified), values divided by the set's size for Average."""
    values = mpi_ops.grouped_allgather([s.values for s in slices_list], process_set=process_set,
                                       ignore_name_scope=ignore_name_scope)
    indices = mpi_ops.grouped_allgather([s.indices for s in slices_list], process_set=process_set,
                                        ignore_name_scope=ignore_name_scope)
    out = []
    for v, i, s in zip(values, indices, slices_list):
        if op == Average:
            v = v / mpi_ops._set_size_tensor(process_set, v.dtype)
        out.append(tf.IndexedSlices(v, i, dense_shape=s.dense_shape))
    return out


def _compressed(collective, tensor, compression, **kwargs):
    """``collective`` of ``tensor`` as ``compression`` sends it, back in the tensor's dtype."""
    compressed, ctx = compression.compress(tf.convert_to_tensor(tensor))
    return compression.decompress(collective(compressed, **kwargs), ctx)


def allreduce(tensor, average=None, device_dense="", device_sparse="", compression=Compression.none, op=None,
              prescale_factor=1.0, postscale_factor=1.0, name=None, process_set=global_process_set,
              ignore_name_scope=False):
    """Allreduce of a tf.Tensor, tf.Variable or tf.IndexedSlices (default op Average).
    device_dense / device_sparse are accepted for Horovod's signature (CPU tensors here)."""
    op = _resolve_op(op, average, "allreduce")
    if isinstance(tensor, tf.IndexedSlices):
        _sparse_check(op, prescale_factor, postscale_factor)
        return _sparse_allreduce([tensor], op, process_set, ignore_name_scope)[0]
    return _compressed(mpi_ops._allreduce, tensor, compression, name=name, op=op, prescale_factor=prescale_factor,
                       postscale_factor=postscale_factor, ignore_name_scope=ignore_name_scope, process_set=process_set)


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="", compression=Compression.none,
                      op=None, prescale_factor=1.0, postscale_factor=1.0, process_set=global_process_set,
                      ignore_name_scope=False, name=None):
    """Allreduce of a list (dense tensors as one fused unit, IndexedSlices by allgathers)."""
    if not tensors:
        return tensors
    op = _resolve_op(op, average, "grouped_allreduce")
    out = [None] * len(tensors)
    sparse = [i for i, t in enumerate(tensors) if isinstance(t, tf.IndexedSlices)]
    dense = [i for i, t in enumerate(tensors) if not isinstance(t, tf.IndexedSlices)]
    if sparse:
        _sparse_check(op, prescale_factor, postscale_factor)
        for i, r in zip(sparse, _sparse_allreduce([tensors[i] for i in sparse], op, process_set, ignore_name_scope)):
            out[i] = r
    if dense:
        compressed, ctxs = zip(*[compression.compress(tf.convert_to_tensor(tensors[i])) for i in dense])
        summed = mpi_ops._grouped_allreduce(list(compressed), name=name, op=op, prescale_factor=prescale_factor,
                                            postscale_factor=postscale_factor, ignore_name_scope=ignore_name_scope,
                                            process_set=process_set)
        for i, s, c in zip(dense, summed, ctxs):
            out[i] = compression.decompress(s, c)
    return out


def reducescatter(tensor, device_dense="", compression=Compression.none, op=Average, name=None,
                  process_set=global_process_set, ignore_name_scope=False, prescale_factor=1.0,
                  postscale_factor=1.0):
    """This rank's rows (first dimension) of the reduction of ``tensor`` (default Average)."""
    return _compressed(mpi_ops._reducescatter, tensor, compression, name=name, op=op,
                       ignore_name_scope=ignore_name_scope, process_set=process_set, prescale_factor=prescale_factor,
                       postscale_factor=postscale_factor)


def grouped_reducescatter(tensors, device_dense="", compression=Compression.none, op=Average,
                          process_set=global_process_set, prescale_factor=1.0, postscale_factor=1.0):
    """reducescatter of each tensor of the list, negotiated as one unit."""
    if not tensors:
        return tensors
    compressed, ctxs = zip(*[compression.compress(tf.convert_to_tensor(t)) for t in tensors])
    outs = mpi_ops._grouped_reducescatter(list(compressed), op=op, process_set=process_set,
                                          prescale_factor=prescale_factor, postscale_factor=postscale_factor)
    return [compression.decompress(o, c) for o, c in zip(outs, ctxs)]
