"""The collectives of hvd.torch (Horovod's horovod.torch.mpi_ops) on the hvd runtime.

Every ``*_async`` call returns an integer handle; ``synchronize(handle)`` waits for it and
returns the result (raising HvdError with the runtime's message if it failed on any rank),
``poll(handle)`` says whether it is done. Tensors whose dtype the runtime has, contiguous,
are handed over by address: the runtime works in their storage. Other dtypes are adapted:
bool as uint8 (sum = logical or, as torch adds bools), int16 via int32, complex as its
real view (sum and average only).
"""
import itertools
import operator

import torch

from hvd import HvdError, HvdInvalidArgument, _core, _common  # noqa: F401
# The runtime, the build queries, the ops and the process sets: shared with hvd.tensorflow.
from hvd._common import (  # noqa: F401
    Average, Sum, Min, Max, Product, Adasum, OP_NAMES as _OP_NAMES,
    ProcessSet, global_process_set, _set_id, add_process_set, remove_process_set,
    init, shutdown, is_initialized, rank, size, local_rank, local_size, cross_rank, cross_size,
    mpi_built, mpi_enabled, mpi_threads_supported, gloo_built, gloo_enabled, nccl_built, ddl_built,
    ccl_built, cuda_built, rocm_built, _name, _noname, _check_adasum, _set_root,
)

_NATIVE = {
    torch.uint8: "uint8", torch.int8: "int8", torch.int32: "int32", torch.int64: "int64",
    torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
    torch.float64: "float64",
}
_COMPLEX = (torch.complex64, torch.complex128)


# ---------------------------------------------------------------------------------------
# Handles and names


_handles = {}
_handle_ids = itertools.count()


def _register(core_handles, finish):
    """A handle for ``core_handles``; a call the runtime refused as it was made (a name
    already pending, bad splits, a bad root, ...) raises HvdInvalidArgument here, as
    Horovod raises ValueError from the call itself."""
    for h in core_handles:
        msg = h.refused()
        if msg is not None:
            raise HvdInvalidArgument(msg)
    hid = next(_handle_ids)
    _handles[hid] = (core_handles, finish)
    return hid


def poll(handle):
    """True when the operation behind ``handle`` has finished (does not block)."""
    try:
        core_handles, _ = _handles[handle]
    except KeyError:
        raise ValueError(f"hvd.poll: unknown handle {handle!r}") from None
    return all(h.poll() for h in core_handles)


def synchronize(handle):
    """Waits for ``handle``; returns its result or raises HvdError."""
    try:
        core_handles, finish = _handles.pop(handle)
    except KeyError:
        raise ValueError(f"hvd.synchronize: unknown handle {handle!r}") from None
    for h in core_handles:
        h.wait()
    return finish()


def _op(average, op, fn, process_set=None):
    """The runtime's op; an Adasum allreduce over ``process_set`` is checked here."""
    if average is not None:
        if op is not None:
            raise ValueError(f"hvd.{fn}: give op or average, not both")
        return Average if average else Sum
    op = Average if op is None else op
    if op not in _OP_NAMES:
        raise ValueError(f"hvd.{fn}: unknown op {op!r}")
    if op == Adasum and process_set is not None:
        _check_adasum(process_set, fn)
    return op


def _check_tensor(tensor, fn):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"hvd.{fn}: expected a dense torch.Tensor, got {type(tensor).__name__}")
    if tensor.layout != torch.strided:
        raise ValueError(f"hvd.{fn}: expected a dense torch.Tensor, got a {tensor.layout} tensor"
                         + (" (hvd.sparse_allreduce_async reduces sparse COO tensors)"
                            if tensor.layout == torch.sparse_coo else ""))
    if tensor.device.type != "cpu":
        raise ValueError(f"hvd.{fn}: tensor is on {tensor.device}; hvd.torch handles CPU tensors")


class _Wire:
    """A tensor as the runtime sees it: ``arg`` (a native dtype, contiguous), the runtime op,
    and how to turn a result of arg's dtype back into the caller's dtype."""

    def __init__(self, tensor, op, fn):
        _check_tensor(tensor, fn)
        t = tensor if tensor.is_contiguous() else tensor.contiguous()
        dt = tensor.dtype
        self.op = op
        self.back = lambda x: x
        if dt in _NATIVE:
            self.arg = t
        elif dt == torch.bool:
            if op == Average:
                raise ValueError(f"hvd.{fn}: op Average is not defined for bool tensors")
            self.arg = t.view(torch.uint8)
            self.op = {Sum: Max, Min: Min, Max: Max, Product: Min}.get(op, op) if op is not None else None
            self.back = lambda x: x.view(torch.bool)
        elif dt == torch.int16:
            self.arg = t.to(torch.int32)
            self.back = lambda x: x.to(torch.int16)
        elif dt in _COMPLEX:
            if op is not None and op not in (Sum, Average):
                raise ValueError(f"hvd.{fn}: op {_OP_NAMES[op]} is not defined for complex tensors")
            self.arg = torch.view_as_real(t)
            self.back = torch.view_as_complex
        else:
            raise ValueError(f"hvd.{fn}: dtype {dt} is not supported")
        # True when arg is the caller's own storage (results land in place).
        self.shares = self.arg.data_ptr() == tensor.data_ptr() and t is tensor

    @property
    def dtype(self):
        return _NATIVE[self.arg.dtype]

    @property
    def shape(self):
        return list(self.arg.shape)

    def ptr(self):
        return self.arg.data_ptr()


def _output_tensor(core, dtype):
    out = torch.empty(core.output_shape(), dtype=dtype)
    core.copy_output(out.data_ptr(), out.numel() * out.element_size())
    return out


_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _host_scaling(dtypes, op, pre, post, process_set):
    """Integer tensors are scaled as Horovod's CPU path scales them: Average is Sum with
    the postscale divided by the set's size, and every factor multiplies in double and
    truncates toward zero (C++'s conversion), e.g. the Average of 2 and 3 is 2 and of -2
    and -3 is -2. Returns (runtime op, runtime pre, runtime post, None or the (pre, post)
    this side applies)."""
    if not any(d in _INTEGER for d in dtypes) or (op != Average and pre == 1.0 and post == 1.0):
        return op, pre, post, None
    if op == Average:
        op, post = Sum, post / process_set.size()
    return op, 1.0, 1.0, (float(pre), float(post))


def _scale(t, factor):
    """t *= factor in place; integers through double, truncated toward zero."""
    if factor == 1.0:
        return t
    if t.dtype in _INTEGER:
        return t.copy_((t.to(torch.float64) * factor).to(t.dtype))
    return t.mul_(factor)


# ---------------------------------------------------------------------------------------
# allreduce


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                     postscale_factor=1.0, process_set=global_process_set):
    """In-place asynchronous allreduce of ``tensor``; synchronize() returns it."""
    op = _op(average, op, "allreduce_async_", process_set)
    _check_tensor(tensor, "allreduce_async_")
    op, prescale_factor, postscale_factor, host = _host_scaling(
        [tensor.dtype], op, prescale_factor, postscale_factor, process_set)
    if host:
        _scale(tensor, host[0])
    w = _Wire(tensor, op, "allreduce_async_")
    h = _core.allreduce_async(_name("allreduce", name, process_set), w.ptr(), w.ptr(), w.dtype, w.shape, w.op,
                              float(prescale_factor), float(postscale_factor), _set_id(process_set))

    def finish(w=w, tensor=tensor):
        if not w.shares:
            tensor.copy_(w.back(w.arg))
        return _scale(tensor, host[1]) if host else tensor
    return _register([h], finish)


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                    postscale_factor=1.0, process_set=global_process_set, compression=None):
    """Asynchronous allreduce into a new tensor; ``tensor`` is left as it is."""
    op = _op(average, op, "allreduce_async", process_set)
    _check_tensor(tensor, "allreduce_async")
    if compression is not None:
        tensor, ctx = compression.compress(tensor)
    host = _host_scaling([tensor.dtype], op, prescale_factor, postscale_factor, process_set)[3]
    if tensor.dtype in _NATIVE and tensor.is_contiguous() and host is None:
        out = torch.empty_like(tensor, memory_format=torch.contiguous_format)
        h = _core.allreduce_async(_name("allreduce", name, process_set), tensor.data_ptr(), out.data_ptr(),
                                  _NATIVE[tensor.dtype], list(tensor.shape), op,
                                  float(prescale_factor), float(postscale_factor), _set_id(process_set))
        # The closure keeps the input alive until synchronize: the runtime reads its storage.
        hid = _register([h], lambda src=tensor: out)
    else:
        hid = allreduce_async_(tensor.clone(), None, name, op, prescale_factor, postscale_factor,
                               process_set)
    if compression is None:
        return hid
    core_handles, finish = _handles.pop(hid)
    return _register(core_handles, lambda: compression.decompress(finish(), ctx))


def allreduce(tensor, average=None, name=None, compression=None, op=None, prescale_factor=1.0,
              postscale_factor=1.0, process_set=global_process_set):
    """Allreduce of ``tensor`` into a new tensor (default op Average)."""
    return synchronize(allreduce_async(tensor, average, name, op, prescale_factor, postscale_factor,
                                       process_set, compression))


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
               process_set=global_process_set):
    """In-place allreduce; returns ``tensor``."""
    return synchronize(allreduce_async_(tensor, average, name, op, prescale_factor,
                                        postscale_factor, process_set))


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                             postscale_factor=1.0, process_set=global_process_set):
    """In-place allreduce of a list of tensors negotiated and fused as one unit."""
    op = _op(average, op, "grouped_allreduce_async_", process_set)
    for t in tensors:
        _check_tensor(t, "grouped_allreduce_async_")
    rop, _, _, host = _host_scaling([t.dtype for t in tensors], op, prescale_factor,
                                    postscale_factor, process_set)
    if host:
        op, prescale_factor, postscale_factor = rop, host[0], host[1]
    wires = [_Wire(t, op, "grouped_allreduce_async_") for t in tensors]
    if prescale_factor != 1.0:
        for w in wires:
            if not w.shares:
                w.arg = w.arg.clone()
                w.shares = False
            _scale(w.arg, prescale_factor)
    base = _name("grouped_allreduce", name, process_set)
    hs = _core.grouped_allreduce_async([f"{base}.{i}" for i in range(len(wires))],
                                       [w.ptr() for w in wires], [w.ptr() for w in wires],
                                       [w.dtype for w in wires], [w.shape for w in wires],
                                       wires[0].op if wires else op, _set_id(process_set))

    def finish():
        for w, t in zip(wires, tensors):
            _scale(w.arg, postscale_factor)
            if not w.shares:
                t.copy_(w.back(w.arg))
        return list(tensors)
    return _register(hs, finish)


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                            postscale_factor=1.0, process_set=global_process_set):
    """Grouped allreduce into new tensors."""
    return grouped_allreduce_async_([t.clone() for t in tensors], average, name, op,
                                    prescale_factor, postscale_factor, process_set)


def grouped_allreduce(tensors, average=None, name=None, compression=None, op=None,
                      prescale_factor=1.0, postscale_factor=1.0, process_set=global_process_set):
    ctxs = None
    if compression is not None:
        pairs = [compression.compress(t) for t in tensors]
        tensors, ctxs = [p[0] for p in pairs], [p[1] for p in pairs]
    out = synchronize(grouped_allreduce_async(tensors, average, name, op, prescale_factor,
                                              postscale_factor, process_set))
    if ctxs is not None:
        out = [compression.decompress(t, c) for t, c in zip(out, ctxs)]
    return out


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=global_process_set):
    return synchronize(grouped_allreduce_async_(tensors, average, name, op, prescale_factor,
                                                postscale_factor, process_set))


# ---------------------------------------------------------------------------------------
# allgather, broadcast, alltoall, reducescatter


def allgather_async(tensor, name=None, process_set=global_process_set):
    """Concatenation of every rank's ``tensor`` along dim 0 (first dims may differ)."""
    w = _Wire(tensor, None, "allgather_async")
    h = _core.allgather_async(_name("allgather", name, process_set), w.ptr(), w.dtype, w.shape, _set_id(process_set))
    return _register([h], lambda: w.back(_output_tensor(h, w.arg.dtype)))


def allgather(tensor, name=None, process_set=global_process_set):
    return synchronize(allgather_async(tensor, name, process_set))


def grouped_allgather_async(tensors, name=None, process_set=global_process_set):
    wires = [_Wire(t, None, "grouped_allgather_async") for t in tensors]
    base = _name("grouped_allgather", name, process_set)
    hs = _core.grouped_allgather_async([f"{base}.{i}" for i in range(len(wires))],
                                       [w.ptr() for w in wires], [w.dtype for w in wires],
                                       [w.shape for w in wires], _set_id(process_set))
    return _register(hs, lambda: [w.back(_output_tensor(h, w.arg.dtype)) for w, h in zip(wires, hs)])


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    return synchronize(grouped_allgather_async(tensors, name, process_set))


def broadcast_async_(tensor, root_rank, name=None, process_set=global_process_set):
    """In-place broadcast from ``root_rank`` (a global rank, a member of the process set)."""
    w = _Wire(tensor, None, "broadcast_async_")
    root = _set_root(root_rank, process_set, "broadcast_async_")
    h = _core.broadcast_async(_name("broadcast", name, process_set), w.ptr(), w.dtype, w.shape, root,
                              _set_id(process_set))

    def finish():
        if not w.shares:
            tensor.copy_(w.back(w.arg))
        return tensor
    return _register([h], finish)


def broadcast_async(tensor, root_rank, name=None, process_set=global_process_set):
    return broadcast_async_(tensor.clone(), root_rank, name, process_set)


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    return synchronize(broadcast_async(tensor, root_rank, name, process_set))


def broadcast_(tensor, root_rank, name=None, process_set=global_process_set):
    return synchronize(broadcast_async_(tensor, root_rank, name, process_set))


def alltoall_async(tensor, splits=None, name=None, process_set=global_process_set):
    """Sends ``splits[r]`` first-dim rows to rank r (even split when None)."""
    w = _Wire(tensor, None, "alltoall_async")
    split_list = _split_list(splits)
    h = _core.alltoall_async(_name("alltoall", name, process_set), w.ptr(), w.dtype, w.shape, split_list,
                             _set_id(process_set))

    def finish():
        out = w.back(_output_tensor(h, w.arg.dtype))
        if splits is None:
            return out
        return out, torch.tensor(h.received_splits(), dtype=torch.int32)
    return _register([h], finish)


def _split_list(splits):
    """``splits`` as a list of ints: None (even split), a sequence of ints or an int32
    tensor, as Horovod takes it (another tensor dtype is refused with ValueError). Its length
    and sum are checked by the runtime (HvdInvalidArgument, a ValueError)."""
    if splits is None:
        return []
    if isinstance(splits, torch.Tensor):
        if splits.dtype != torch.int32:
            raise HvdInvalidArgument(f"hvd.alltoall: splits must be an int32 tensor, got {splits.dtype}")
        if splits.dim() != 1:
            raise HvdInvalidArgument(f"hvd.alltoall: splits must be one-dimensional, got shape {tuple(splits.shape)}")
        return [int(v) for v in splits.tolist()]
    out = []
    for v in splits:
        if isinstance(v, (bool, float)) or not hasattr(v, "__index__"):
            raise HvdInvalidArgument(f"hvd.alltoall: splits must hold integers, got {v!r}")
        out.append(operator.index(v))
    return out


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """The received rows; with ``splits`` given, (rows, received_splits)."""
    return synchronize(alltoall_async(tensor, splits, name, process_set))


def _scatter_wire(tensor, op, pre, post, process_set, fn, dtypes=None):
    """The wire of a reducescatter input, prescaled; returns (wire, postscale). ``dtypes``:
    those of the whole group (one op for all)."""
    _check_tensor(tensor, fn)
    op, pre, post, host = _host_scaling(dtypes or [tensor.dtype], op, pre, post, process_set)
    if host:
        pre, post = host
    w = _Wire(tensor, op, fn)
    if pre != 1.0:
        w.arg = _scale(w.arg.clone(), pre)
    return w, post


def _scatter_op(op, fn):
    """The op of a reducescatter: Adasum is refused (HvdInvalidArgument: a RuntimeError, as
    Horovod's refusal is, and a ValueError)."""
    op = _op(None, op, fn)
    if op == Adasum:
        raise HvdInvalidArgument(f"hvd.{fn}: Adasum is an allreduce only (reducescatter does not support it)")
    return op


def reducescatter_async(tensor, name=None, op=None, process_set=global_process_set,
                        prescale_factor=1.0, postscale_factor=1.0):
    """Reduces across ranks and gives each rank its slice of dim 0 (default op Average)."""
    op = _scatter_op(op, "reducescatter_async")
    w, postscale_factor = _scatter_wire(tensor, op, prescale_factor, postscale_factor, process_set,
                                        "reducescatter_async")
    h = _core.reducescatter_async(_name("reducescatter", name, process_set), w.ptr(), w.dtype, w.shape, w.op,
                                  _set_id(process_set))

    def finish():
        return w.back(_scale(_output_tensor(h, w.arg.dtype), postscale_factor))
    return _register([h], finish)


def reducescatter(tensor, name=None, compression=None, op=None, process_set=global_process_set,
                  prescale_factor=1.0, postscale_factor=1.0):
    ctx = None
    if compression is not None:
        tensor, ctx = compression.compress(tensor)
    out = synchronize(reducescatter_async(tensor, name, op, process_set, prescale_factor,
                                          postscale_factor))
    return out if compression is None else compression.decompress(out, ctx)


def grouped_reducescatter_async(tensors, name=None, op=None, process_set=global_process_set,
                                prescale_factor=1.0, postscale_factor=1.0):
    op = _scatter_op(op, "grouped_reducescatter_async")
    dtypes = [t.dtype for t in tensors]
    pairs = [_scatter_wire(t, op, prescale_factor, postscale_factor, process_set,
                           "grouped_reducescatter_async", dtypes) for t in tensors]
    wires = [w for w, _ in pairs]
    base = _name("grouped_reducescatter", name, process_set)
    hs = _core.grouped_reducescatter_async([f"{base}.{i}" for i in range(len(wires))],
                                           [w.ptr() for w in wires], [w.dtype for w in wires],
                                           [w.shape for w in wires], wires[0].op if wires else op,
                                           _set_id(process_set))

    def finish():
        return [w.back(_scale(_output_tensor(h, w.arg.dtype), post))
                for (w, post), h in zip(pairs, hs)]
    return _register(hs, finish)


def grouped_reducescatter(tensors, name=None, compression=None, op=None,
                          process_set=global_process_set, prescale_factor=1.0, postscale_factor=1.0):
    ctxs = None
    if compression is not None:
        pairs = [compression.compress(t) for t in tensors]
        tensors, ctxs = [p[0] for p in pairs], [p[1] for p in pairs]
    out = synchronize(grouped_reducescatter_async(tensors, name, op, process_set, prescale_factor,
                                                  postscale_factor))
    if ctxs is not None:
        out = [compression.decompress(t, c) for t, c in zip(out, ctxs)]
    return out


def barrier(process_set=global_process_set):
    """Returns when every rank of the set has called it."""
    _core.barrier(_set_id(process_set))


def join(device=-1):
    """Declares this rank out of data; returns the last rank that joined."""
    return _core.join()
