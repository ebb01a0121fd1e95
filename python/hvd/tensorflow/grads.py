"""Gradients of hvd.tensorflow's collectives, registered with TensorFlow, as hvd.torch (and
Horovod) define them:

  allreduce       allreduce of the gradient with the same op, scale factors and set
  allgather       allreduce (Average) of the gradient, then this rank's rows
  broadcast       allreduce (Average) of the gradient on the root, zeros elsewhere
  alltoall        alltoall of the gradient, sent back with the splits received
  reducescatter   allgather of the gradient, times 1/size for Average (scale factors are
                  applied around the op, where TensorFlow differentiates them)

Every rank must differentiate through the same collectives in the same order.
"""
import tensorflow as tf
from tensorflow.python.framework import ops

from hvd import _common
from hvd.tensorflow import mpi_ops
from hvd.tensorflow.mpi_ops import Average


def _attrs(op):
    """(process set, ignore_name_scope) of a collective op."""
    return _common.process_set_by_id(op.get_attr("process_set_id")), op.get_attr("ignore_name_scope")


def _dense(grad, like):
    if grad is None:
        return tf.zeros_like(like)
    return tf.convert_to_tensor(grad)


@ops.RegisterGradient("HvdAllreduce")
def _allreduce_grad(op, grad):
    ps, ins = _attrs(op)
    g = mpi_ops._allreduce(_dense(grad, op.outputs[0]), op=op.get_attr("reduce_op"),
                           prescale_factor=op.get_attr("prescale_factor"),
                           postscale_factor=op.get_attr("postscale_factor"), ignore_name_scope=ins,
                           process_set=ps)
    return [g, None]


@ops.RegisterGradient("HvdGroupedAllreduce")
def _grouped_allreduce_grad(op, *grads):
    ps, ins = _attrs(op)
    dense = [_dense(g, o) for g, o in zip(grads, op.outputs)]
    out = mpi_ops._grouped_allreduce(dense, op=op.get_attr("reduce_op"),
                                     prescale_factor=op.get_attr("prescale_factor"),
                                     postscale_factor=op.get_attr("postscale_factor"),
                                     ignore_name_scope=ins, process_set=ps)
    return list(out) + [None]


def _my_rows(grad, x, ps, ins):
    """This rank's rows of an allgathered gradient: the Average allreduce of ``grad``, then
    the slice at this rank's offset (first dimensions may differ between ranks)."""
    reduced = mpi_ops._allreduce(grad, op=Average, ignore_name_scope=ins, process_set=ps)
    rows = tf.shape(x, out_type=tf.int32)[:1]
    counts = mpi_ops.allgather(rows, ignore_name_scope=ins, process_set=ps)
    offset = tf.reduce_sum(counts[:ps.rank()])
    return reduced[offset:offset + rows[0]]


@ops.RegisterGradient("HvdAllgather")
def _allgather_grad(op, grad):
    ps, ins = _attrs(op)
    return [_my_rows(_dense(grad, op.outputs[0]), op.inputs[0], ps, ins), None]


@ops.RegisterGradient("HvdGroupedAllgather")
def _grouped_allgather_grad(op, *grads):
    ps, ins = _attrs(op)
    n = len(op.outputs)
    return [_my_rows(_dense(g, o), x, ps, ins) for g, o, x in zip(grads, op.outputs, op.inputs[:n])] + [None]


@ops.RegisterGradient("HvdBroadcast")
def _broadcast_grad(op, grad):
    ps, ins = _attrs(op)
    reduced = mpi_ops._allreduce(_dense(grad, op.outputs[0]), op=Average, ignore_name_scope=ins, process_set=ps)
    if ps.rank() != op.get_attr("root_rank"):
        # Not tf.zeros_like: a graph optimizer may make that a constant, drop the allreduce
        # (nothing would use it) on these ranks only, and leave the root waiting for them.
        reduced = reduced * 0
    return [reduced, None]


@ops.RegisterGradient("HvdAlltoall")
def _alltoall_grad(op, grad, _received_splits_grad):
    ps, ins = _attrs(op)
    back, _ = mpi_ops.alltoall(_dense(grad, op.outputs[0]), splits=op.outputs[1], ignore_name_scope=ins,
                               process_set=ps)
    return [back, None, None]


def _scatter_adjoint(grad, op, ps, ins):
    full = mpi_ops.allgather(grad, ignore_name_scope=ins, process_set=ps)
    return full / tf.cast(ps.size(), full.dtype) if op.get_attr("reduce_op") == Average else full


@ops.RegisterGradient("HvdReducescatter")
def _reducescatter_grad(op, grad):
    ps, ins = _attrs(op)
    return [_scatter_adjoint(_dense(grad, op.outputs[0]), op, ps, ins), None]


@ops.RegisterGradient("HvdGroupedReducescatter")
def _grouped_reducescatter_grad(op, *grads):
    ps, ins = _attrs(op)
    return [_scatter_adjoint(_dense(g, o), op, ps, ins) for g, o in zip(grads, op.outputs)] + [None]
