"""The collectives of hvd.torch that autograd differentiates through (Horovod's
HorovodAllreduce, HorovodAllgather, ... functions).

``allreduce``, ``grouped_allreduce``, ``allgather``, ``grouped_allgather``, ``broadcast``,
``alltoall``, ``reducescatter`` and ``grouped_reducescatter`` return tensors with a
``grad_fn`` when an input requires grad; backward runs the adjoint collective, as Horovod
defines it:

  allreduce       allreduce of the gradient with the same op, scale factors and set
  allgather       allreduce (Average) of the gradient, then this rank's rows
  broadcast       allreduce (Average) of the gradient on the root, zeros elsewhere
  alltoall        alltoall of the gradient, sent back with the splits received
  reducescatter   allgather of the gradient times the scale factors, and times the set's
                  size for Sum (Horovod's HorovodReducescatter.backward)

Every rank must run backward through the same collectives in the same order (the
gradients travel under automatic names, like any unnamed tensor). The in-place and
asynchronous variants (``allreduce_``, ``*_async``) do not record a graph, as in Horovod.
"""
import torch

from hvd.torch import mpi_ops
from hvd.torch.mpi_ops import Average, Sum, global_process_set


def _needs_graph(fn, *tensors):
    """True when autograd records ``fn``; first the inputs are checked (dense CPU tensors)."""
    for t in tensors:
        mpi_ops._check_tensor(t, fn)
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


# ---------------------------------------------------------------------------------------
# allreduce


class _Allreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, process_set):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return mpi_ops.allreduce(tensor, name=name, op=op, prescale_factor=prescale_factor,
                                 postscale_factor=postscale_factor, process_set=process_set)

    @staticmethod
    def backward(ctx, grad):
        op, pre, post, ps = ctx.args
        return (allreduce(grad, op=op, prescale_factor=pre, postscale_factor=post, process_set=ps),
                None, None, None, None, None)


def allreduce(tensor, average=None, name=None, compression=None, op=None, prescale_factor=1.0,
              postscale_factor=1.0, process_set=global_process_set):
    """Allreduce of ``tensor`` into a new tensor (default op Average); differentiable."""
    op = mpi_ops._op(average, op, "allreduce")
    if not _needs_graph("allreduce", tensor):
        return mpi_ops.allreduce(tensor, None, name, compression, op, prescale_factor,
                                 postscale_factor, process_set)
    ctx = None
    if compression is not None:
        tensor, ctx = compression.compress(tensor)
    out = _Allreduce.apply(tensor, name, op, prescale_factor, postscale_factor, process_set)
    return out if compression is None else compression.decompress(out, ctx)


class _GroupedAllreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, prescale_factor, postscale_factor, process_set, *tensors):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return tuple(mpi_ops.grouped_allreduce(list(tensors), name=name, op=op,
                                               prescale_factor=prescale_factor,
                                               postscale_factor=postscale_factor,
                                               process_set=process_set))

    @staticmethod
    def backward(ctx, *grads):
        op, pre, post, ps = ctx.args
        out = grouped_allreduce(list(grads), op=op, prescale_factor=pre, postscale_factor=post,
                                process_set=ps)
        return (None, None, None, None, None, *out)


def grouped_allreduce(tensors, average=None, name=None, compression=None, op=None,
                      prescale_factor=1.0, postscale_factor=1.0, process_set=global_process_set):
    """Allreduce of a list of tensors negotiated as one unit; differentiable."""
    op = mpi_ops._op(average, op, "grouped_allreduce")
    if not _needs_graph("grouped_allreduce", *tensors):
        return mpi_ops.grouped_allreduce(tensors, None, name, compression, op, prescale_factor,
                                         postscale_factor, process_set)
    ctxs = None
    if compression is not None:
        pairs = [compression.compress(t) for t in tensors]
        tensors, ctxs = [p[0] for p in pairs], [p[1] for p in pairs]
    out = list(_GroupedAllreduce.apply(name, op, prescale_factor, postscale_factor, process_set,
                                       *tensors))
    if ctxs is not None:
        out = [compression.decompress(t, c) for t, c in zip(out, ctxs)]
    return out


# ---------------------------------------------------------------------------------------
# allgather


def _my_rows(grad, rows, process_set):
    """This rank's rows of an allgathered gradient: the Average allreduce of ``grad``, then
    the slice at this rank's offset (first dimensions may differ between ranks)."""
    reduced = allreduce(grad, op=Average, process_set=process_set)
    counts = mpi_ops.allgather(torch.tensor([rows], dtype=torch.int64), process_set=process_set)
    offset = int(counts[:process_set.rank()].sum().item())
    return reduced.narrow(0, offset, rows)


class _Allgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, process_set):
        ctx.rows, ctx.process_set = tensor.shape[0], process_set
        return mpi_ops.allgather(tensor, name=name, process_set=process_set)

    @staticmethod
    def backward(ctx, grad):
        return _my_rows(grad, ctx.rows, ctx.process_set), None, None


def allgather(tensor, name=None, process_set=global_process_set):
    """Concatenation of every rank's ``tensor`` along dim 0; differentiable."""
    if not _needs_graph("allgather", tensor):
        return mpi_ops.allgather(tensor, name, process_set)
    return _Allgather.apply(tensor, name, process_set)


class _GroupedAllgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, process_set, *tensors):
        ctx.rows, ctx.process_set = [t.shape[0] for t in tensors], process_set
        return tuple(mpi_ops.grouped_allgather(list(tensors), name=name, process_set=process_set))

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *[_my_rows(g, n, ctx.process_set) for g, n in zip(grads, ctx.rows)])


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    """Allgather of a list of tensors negotiated as one unit; differentiable."""
    if not _needs_graph("grouped_allgather", *tensors):
        return mpi_ops.grouped_allgather(tensors, name, process_set)
    return list(_GroupedAllgather.apply(name, process_set, *tensors))


# ---------------------------------------------------------------------------------------
# broadcast, alltoall


class _Broadcast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, root_rank, name, process_set):
        ctx.root_rank, ctx.process_set = root_rank, process_set
        return mpi_ops.broadcast(tensor, root_rank, name=name, process_set=process_set)

    @staticmethod
    def backward(ctx, grad):
        reduced = allreduce(grad, op=Average, process_set=ctx.process_set)
        if mpi_ops.rank() != ctx.root_rank:  # root_rank is a global rank, as in Horovod
            reduced = torch.zeros_like(reduced)
        return reduced, None, None, None


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    """``root_rank``'s tensor on every rank, in a new tensor; differentiable."""
    if not _needs_graph("broadcast", tensor):
        return mpi_ops.broadcast(tensor, root_rank, name, process_set)
    return _Broadcast.apply(tensor, root_rank, name, process_set)


class _Alltoall(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, splits, name, process_set):
        out, received = mpi_ops.alltoall(tensor, splits, name=name, process_set=process_set)
        ctx.received, ctx.process_set = received, process_set
        ctx.mark_non_differentiable(received)
        return out, received

    @staticmethod
    def backward(ctx, grad, _received_grad):
        back, _ = alltoall(grad, splits=ctx.received, process_set=ctx.process_set)
        return back, None, None, None


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """The received rows; with ``splits`` given, (rows, received_splits); differentiable."""
    if not _needs_graph("alltoall", tensor):
        return mpi_ops.alltoall(tensor, splits, name, process_set)
    given = splits is not None
    if not given:
        n = process_set.size()
        if tensor.dim() == 0 or tensor.shape[0] % n:
            return mpi_ops.alltoall(tensor, None, name, process_set)  # the runtime's error
        splits = [tensor.shape[0] // n] * n
    out, received = _Alltoall.apply(tensor, splits, name, process_set)
    return (out, received) if given else out


# ---------------------------------------------------------------------------------------
# reducescatter


def _scatter_adjoint(grads, op, pre, post, process_set):
    """Horovod's reducescatter backward: each gradient times the set's size for Sum (not
    for Average) and the scale factors, then allgathered (one grouped allgather for a
    group)."""
    factor = pre * post * (process_set.size() if op == Sum else 1)
    grads = [g * factor if factor != 1.0 else g for g in grads]
    return grouped_allgather(grads, process_set=process_set)


class _Reducescatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, process_set, prescale_factor, postscale_factor):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return mpi_ops.reducescatter(tensor, name=name, op=op, process_set=process_set,
                                     prescale_factor=prescale_factor,
                                     postscale_factor=postscale_factor)

    @staticmethod
    def backward(ctx, grad):
        op, pre, post, ps = ctx.args
        return _scatter_adjoint([grad], op, pre, post, ps)[0], None, None, None, None, None


def _check_scatter_op(op, fn):
    op = mpi_ops._scatter_op(op, fn)
    if op not in (Sum, Average):
        raise ValueError(f"hvd.{fn}: gradients need op Sum or Average, not {mpi_ops._OP_NAMES[op]}")
    return op


def reducescatter(tensor, name=None, compression=None, op=None, process_set=global_process_set,
                  prescale_factor=1.0, postscale_factor=1.0):
    """Reduces across ranks, each rank keeps its slice of dim 0 (default Average);
    differentiable for Sum and Average."""
    if not _needs_graph("reducescatter", tensor):
        return mpi_ops.reducescatter(tensor, name, compression, op, process_set, prescale_factor,
                                     postscale_factor)
    op = _check_scatter_op(op, "reducescatter")
    ctx = None
    if compression is not None:
        tensor, ctx = compression.compress(tensor)
    out = _Reducescatter.apply(tensor, name, op, process_set, prescale_factor, postscale_factor)
    return out if compression is None else compression.decompress(out, ctx)


class _GroupedReducescatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, process_set, prescale_factor, postscale_factor, *tensors):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return tuple(mpi_ops.grouped_reducescatter(list(tensors), name=name, op=op,
                                                   process_set=process_set,
                                                   prescale_factor=prescale_factor,
                                                   postscale_factor=postscale_factor))

    @staticmethod
    def backward(ctx, *grads):
        op, pre, post, ps = ctx.args
        return (None, None, None, None, None, *_scatter_adjoint(list(grads), op, pre, post, ps))


def grouped_reducescatter(tensors, name=None, compression=None, op=None,
                          process_set=global_process_set, prescale_factor=1.0, postscale_factor=1.0):
    """Reducescatter of a list of tensors negotiated as one unit; differentiable."""
    if not _needs_graph("grouped_reducescatter", *tensors):
        return mpi_ops.grouped_reducescatter(tensors, name, compression, op, process_set,
                                             prescale_factor, postscale_factor)
    op = _check_scatter_op(op, "grouped_reducescatter")
    ctxs = None
    if compression is not None:
        pairs = [compression.compress(t) for t in tensors]
        tensors, ctxs = [p[0] for p in pairs], [p[1] for p in pairs]
    out = list(_GroupedReducescatter.apply(name, op, process_set, prescale_factor,
                                           postscale_factor, *tensors))
    if ctxs is not None:
        out = [compression.decompress(t, c) for t, c in zip(out, ctxs)]
    return out
