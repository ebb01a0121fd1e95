"""Allreduce of sparse COO tensors (Horovod's hvd.sparse_allreduce_async): the ranks'
indices and values are allgathered; the result holds every rank's entries (indices that
several ranks have appear once per rank, summed when the tensor is coalesced)."""
import torch

from hvd.torch import mpi_ops
from hvd.torch.mpi_ops import Average, Sum, global_process_set


class SparseHandle(int):
    """The handle of a sparse allreduce: ``hvd.synchronize(handle)`` (or ``handle()``, as
    Horovod's handle is called) waits and returns the sparse result."""

    def __call__(self):
        return mpi_ops.synchronize(self)


def sparse_allreduce_async(tensor, name=None, op=Average, process_set=global_process_set):
    """Starts the allreduce of a sparse COO tensor (op Sum or Average: Average divides the
    values by the set's size); returns a SparseHandle. Same size on every rank; the number
    of entries may differ."""
    if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.sparse_coo:
        raise ValueError(f"hvd.sparse_allreduce_async: expected a sparse COO tensor, got "
                         f"{type(tensor).__name__ if not isinstance(tensor, torch.Tensor) else tensor.layout}")
    if op not in (Sum, Average):
        raise ValueError(f"hvd.sparse_allreduce_async: op must be Sum or Average, got {op!r}")
    base = mpi_ops._name("sparse_allreduce", name, process_set)
    # Allgather concatenates dim 0: indices travel as (entries, sparse dims).
    hi = mpi_ops.allgather_async(tensor._indices().t().contiguous(), name=f"{base}.indices",
                                 process_set=process_set)
    hv = mpi_ops.allgather_async(tensor._values(), name=f"{base}.values", process_set=process_set)
    core_i, finish_i = mpi_ops._handles.pop(hi)
    core_v, finish_v = mpi_ops._handles.pop(hv)
    size = tensor.size()

    def finish():
        indices, values = finish_i(), finish_v()
        if op == Average:
            values = values / process_set.size()
        return torch.sparse_coo_tensor(indices.t(), values, size, check_invariants=False)
    return SparseHandle(mpi_ops._register(core_i + core_v, finish))
