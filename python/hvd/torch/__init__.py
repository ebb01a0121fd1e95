"""hvd.torch: Horovod's ``horovod.torch`` API on the hvd runtime.

A training script moves to hvd by changing one import::

    import hvd.torch as hvd
    hvd.init()
    opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)

Tensors are CPU tensors; the runtime reads and writes their storage directly wherever the
dtype is one it has (uint8, int8, int32, int64, float16, bfloat16, float32, float64).
bool, int16 and complex tensors are converted on the way (see docs/python.md).
"""
from hvd import HvdError, HorovodInternalError, HvdInvalidArgument  # noqa: F401
from hvd.torch.compression import Compression  # noqa: F401
from hvd.torch.mpi_ops import (  # noqa: F401
    Average, Sum, Min, Max, Product, Adasum,
    init, shutdown, is_initialized, rank, size, local_rank, local_size, cross_rank, cross_size,
    allreduce_, allreduce_async, allreduce_async_,
    grouped_allreduce_, grouped_allreduce_async, grouped_allreduce_async_,
    allgather_async, grouped_allgather_async,
    broadcast_, broadcast_async, broadcast_async_,
    alltoall_async,
    reducescatter_async, grouped_reducescatter_async,
    barrier, join, poll, synchronize,
    mpi_built, mpi_enabled, mpi_threads_supported, gloo_built, gloo_enabled, nccl_built, ddl_built,
    ccl_built, cuda_built, rocm_built,
    ProcessSet, global_process_set, add_process_set, remove_process_set,
)
from hvd.torch.grad_ops import (  # noqa: F401  (differentiable)
    allreduce, grouped_allreduce, allgather, grouped_allgather, broadcast, alltoall,
    reducescatter, grouped_reducescatter,
)
from hvd.torch.sparse import sparse_allreduce_async  # noqa: F401
from hvd.torch.sync_batch_norm import SyncBatchNorm  # noqa: F401
from hvd.torch.timeline import start_timeline, stop_timeline  # noqa: F401
from hvd.torch.functions import (  # noqa: F401
    broadcast_parameters, broadcast_optimizer_state, broadcast_object, allgather_object,
)
from hvd.torch.optimizer import DistributedOptimizer  # noqa: F401
from hvd.torch.trace import record_trace  # noqa: F401
from hvd.torch import trace as _trace
from hvd import _common as _common

# HVD_RECORD_TRACE starts at init() and the recording is written at shutdown().
_common._init_hooks.append(_trace._start_from_env)
_common._shutdown_hooks.append(_trace._finish)
# Handles never synchronized go with the world, before the runtime: a result buffer the
# runtime allocated (allgather, alltoall, reducescatter) is freed by its device, which the
# runtime's shutdown destroys (freeing it later crashed the process at exit).
from hvd.torch import mpi_ops as _mpi_ops  # noqa: E402
_common._shutdown_hooks.append(_mpi_ops._handles.clear)
from hvd.torch import elastic  # noqa: F401,E402  (hvd.elastic.run, TorchState, ...)
