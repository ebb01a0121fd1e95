"""hvd.tensorflow: Horovod's ``horovod.tensorflow`` API on the hvd runtime (TensorFlow 2).

A training script moves to hvd by changing one import::

    import hvd.tensorflow as hvd
    hvd.init()
    with tf.GradientTape() as tape:
        loss = ...
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    ...
    hvd.broadcast_variables(model.variables, root_rank=0)

The collectives are TensorFlow ops (``_hvd_tf_ops.so``), eager and in ``tf.function``, on
CPU tensors, over the same runtime as hvd.torch (docs/python.md, "hvd.tensorflow / hvd.keras").
"""
from hvd import HvdError, HorovodInternalError  # noqa: F401
from hvd.tensorflow.mpi_ops import (  # noqa: F401
    Average, Sum, Min, Max, Product, Adasum,
    init, shutdown, is_initialized, rank, size, local_rank, local_size, cross_rank, cross_size,
    mpi_built, mpi_enabled, mpi_threads_supported, gloo_built, gloo_enabled, nccl_built, ddl_built,
    ccl_built, cuda_built, rocm_built, is_homogeneous,
    ProcessSet, global_process_set, add_process_set, remove_process_set,
    allgather, grouped_allgather, broadcast, broadcast_, alltoall, join, barrier,
    _allreduce, _grouped_allreduce, _reducescatter, _grouped_reducescatter,
    size_op, local_size_op, rank_op, local_rank_op, process_set_included_op,
    _executing_eagerly,
)
from hvd.tensorflow import grads as _grads  # noqa: F401  (registers the collectives' gradients)
from hvd.tensorflow.compression import Compression  # noqa: F401
from hvd.tensorflow.reduce import (  # noqa: F401
    allreduce, grouped_allreduce, reducescatter, grouped_reducescatter,
)
from hvd.tensorflow.functions import (  # noqa: F401
    broadcast_variables, broadcast_object, broadcast_object_fn, allgather_object,
)
from hvd.tensorflow.tape import DistributedGradientTape, PartialDistributedGradientTape  # noqa: F401
from hvd.tensorflow.optimizer import (  # noqa: F401
    DistributedOptimizer, broadcast_global_variables, BroadcastGlobalVariablesHook,
)
from hvd._common import process_set_by_id  # noqa: F401
from hvd.timeline import start_timeline, stop_timeline  # noqa: F401
from hvd.tensorflow.sync_batch_norm import SyncBatchNormalization  # noqa: F401,E402
from hvd.tensorflow import elastic  # noqa: F401,E402  (hvd.elastic.run, TensorFlowKerasState, ...)
from hvd.tensorflow.trace import record_trace  # noqa: F401,E402
from hvd.tensorflow import trace as _trace  # noqa: E402
from hvd import _common as _common_hooks  # noqa: E402

# HVD_RECORD_TRACE starts a recording at hvd.init(); shutdown (or the process's end) writes it.
_common_hooks._init_hooks.append(_trace._start_from_env)
_common_hooks._shutdown_hooks.append(_trace._finish)

