"""hvd.keras (also ``hvd.tensorflow.keras``): Horovod's Keras API for Keras 3 on the
TensorFlow backend, over hvd.tensorflow's ops::

    import hvd.keras as hvd
    hvd.init()
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(0.01 * hvd.size()))
    model.compile(optimizer=opt, loss=..., jit_compile=False)
    model.fit(x, y, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0),
                                hvd.callbacks.MetricAverageCallback()])

Keras 3's optimizers apply gradients in ``apply(grads, variables)`` (``apply_gradients``
calls it): the DistributedOptimizer averages the gradients there, so ``model.fit`` and a
custom loop that calls ``apply`` or ``apply_gradients`` both train data-parallel.
"""
import keras
import tensorflow as tf

import hvd.tensorflow as _hvd_tf
from hvd.tensorflow import Average, Compression, global_process_set

# hvd.tensorflow's basics, under the same names (as Horovod's horovod.tensorflow.keras has them).
_SHARED = """HvdError HorovodInternalError Sum Min Max Product Adasum init shutdown is_initialized rank size
local_rank local_size cross_rank cross_size mpi_built mpi_enabled mpi_threads_supported gloo_built gloo_enabled
nccl_built ddl_built ccl_built cuda_built rocm_built ProcessSet add_process_set remove_process_set
broadcast_object allgather_object broadcast_variables join barrier start_timeline stop_timeline is_homogeneous
SyncBatchNormalization""".split()
globals().update({name: getattr(_hvd_tf, name) for name in _SHARED})

from hvd.keras.optimizer import DistributedOptimizer, PartialDistributedOptimizer, distributed_class  # noqa: F401,E402
from hvd.keras import callbacks  # noqa: F401,E402
from hvd.keras import elastic  # noqa: F401,E402


def allreduce(value, name=None, average=None, prescale_factor=1.0, postscale_factor=1.0, op=None,
              compression=Compression.none, process_set=global_process_set):
    """The reduction (default Average) of a tensor-compatible value over the ranks."""
    return _hvd_tf.allreduce(tf.convert_to_tensor(value), average=average, compression=compression, op=op,
                             prescale_factor=prescale_factor, postscale_factor=postscale_factor, name=name,
                             process_set=process_set)


def allgather(value, name=None, process_set=global_process_set):
    """Every rank's value concatenated along the first dimension."""
    return _hvd_tf.allgather(tf.convert_to_tensor(value), name=name, process_set=process_set)


def broadcast(value, root_rank, name=None, process_set=global_process_set):
    """``root_rank``'s value on every rank."""
    return _hvd_tf.broadcast(tf.convert_to_tensor(value), root_rank, name=name, process_set=process_set)


def reducescatter(value, name=None, op=Average, process_set=global_process_set):
    """This rank's rows of the reduction of a tensor-compatible value."""
    return _hvd_tf.reducescatter(tf.convert_to_tensor(value), name=name, op=op, process_set=process_set)


def broadcast_global_variables(root_rank):
    """Keras 3 has no global graph of variables: broadcast a model's variables with
    ``hvd.broadcast_variables(model.variables, root_rank)`` or the callback."""
    raise RuntimeError("hvd.keras.broadcast_global_variables() needs a tf.compat.v1 graph; with Keras 3 use "
                       "hvd.callbacks.BroadcastGlobalVariablesCallback(root_rank) or "
                       "hvd.broadcast_variables(model.variables, root_rank)")


def _optimizer_classes(custom_optimizers):
    """Keras's optimizer classes by name (and the custom ones), each mapped to its
    distributed subclass: what deserialization builds instead."""
    classes = [c for c in vars(keras.optimizers).values()
               if isinstance(c, type) and issubclass(c, keras.optimizers.Optimizer)]
    classes += list(custom_optimizers or [])
    return {c.__name__: distributed_class(c) for c in classes}


def load_model(filepath, custom_optimizers=None, custom_objects=None, compression=Compression.none):
    """keras.models.load_model with the saved optimizer rebuilt as a DistributedOptimizer
    (its state, e.g. momentum, restored): training goes on data-parallel where it stopped.
    ``custom_optimizers``: Optimizer subclasses of the file besides Keras's own."""
    objects = _optimizer_classes(custom_optimizers)
    objects.update(custom_objects or {})
    model = keras.models.load_model(filepath, custom_objects=objects)
    opt = getattr(model, "optimizer", None)
    if opt is not None and hasattr(opt, "_hvd_setup"):
        opt._hvd_setup(compression=compression)
    return model
