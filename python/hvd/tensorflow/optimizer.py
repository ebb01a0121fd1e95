"""hvd.tensorflow's optimizers and graph-mode helpers (Horovod's horovod.tensorflow):
DistributedOptimizer for tf.compat.v1 optimizers (and, passed a Keras optimizer, the Keras
one of hvd.keras), broadcast_global_variables and BroadcastGlobalVariablesHook."""
import tensorflow as tf

from hvd.tensorflow import functions, tape
from hvd.tensorflow.compression import Compression
from hvd.tensorflow.mpi_ops import Adasum, Average, global_process_set

_LegacyOptimizer = tf.compat.v1.train.Optimizer


def broadcast_global_variables(root_rank):
    """The op that assigns ``root_rank``'s value to every global variable (tf.compat.v1 graphs)."""
    if tf.executing_eagerly():
        raise RuntimeError("hvd.broadcast_global_variables() does not support eager execution. "
                           "Please use `hvd.broadcast_variables(<model/optimizer variables>)` instead.")
    return functions.broadcast_variables(tf.compat.v1.global_variables(), root_rank)


class BroadcastGlobalVariablesHook(tf.compat.v1.train.SessionRunHook):
    """Broadcasts every global variable from ``root_rank`` once the session is created (and
    initialized or restored), so all ranks start from the same values."""

    def __init__(self, root_rank, device=""):
        super().__init__()
        self.root_rank, self.device = root_rank, device
        self.bcast_op = None

    def begin(self):
        if self.bcast_op is None or self.bcast_op.graph != tf.compat.v1.get_default_graph():
            with tf.device(self.device):
                self.bcast_op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)


class _DistributedOptimizer(_LegacyOptimizer):
    """A tf.compat.v1 optimizer whose compute_gradients() returns the gradients averaged
    over the ranks; everything else is the wrapped optimizer's."""

    def __init__(self, optimizer, name, use_locking, allreduce_grads, process_set, scale_local_gradients):
        super().__init__(name=name, use_locking=use_locking)
        self._optimizer = optimizer
        self._allreduce_grads = allreduce_grads
        self._local_vars = set()
        self._process_set = process_set
        self._scale_local = scale_local_gradients

    def register_local_var(self, var):
        """Its gradient stays this rank's own (divided by the set's size unless
        scale_local_gradients=False, as Horovod does)."""
        self._local_vars.add(id(var))

    def compute_gradients(self, *args, **kwargs):
        gradients = self._optimizer.compute_gradients(*args, **kwargs)
        variables = [v for _, v in gradients]
        grads = tape.reduce_shared(self._allreduce_grads, [g for g, _ in gradients], variables, self._local_vars,
                                   self._scale_local, self._process_set)
        return list(zip(grads, variables))

    def apply_gradients(self, *args, **kwargs):
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="", device_sparse="",
                         compression=Compression.none, sparse_as_dense=False, backward_passes_per_step=1,
                         op=Average, gradient_predivide_factor=1.0, average_aggregated_gradients=False,
                         num_groups=0, groups=None, process_set=global_process_set, scale_local_gradients=True):
    """Wraps a tf.compat.v1 optimizer (gradients averaged before they are applied) or a Keras
    optimizer (hvd.keras.DistributedOptimizer)."""
    tape._check_predivide(gradient_predivide_factor, op)
    groups = tape.check_groups(groups, num_groups)
    if isinstance(optimizer, _LegacyOptimizer):
        if op == Adasum:
            raise NotImplementedError("hvd.tensorflow: the Adasum delta optimizer is not available for "
                                      "tf.compat.v1 optimizers; use op=hvd.Adasum with hvd.allreduce")
        if backward_passes_per_step != 1:
            raise NotImplementedError("hvd.tensorflow: backward_passes_per_step > 1 is available for Keras "
                                      "optimizers (hvd.keras.DistributedOptimizer), not tf.compat.v1 ones")
        name = name or f"Distributed{type(optimizer).__name__}"
        fn = tape.make_allreduce_grads_fn(name, compression, sparse_as_dense, op, gradient_predivide_factor,
                                          groups, process_set)
        return _DistributedOptimizer(optimizer, name, use_locking, fn, process_set, scale_local_gradients)
    import keras
    if isinstance(optimizer, keras.optimizers.Optimizer):
        if op == Adasum:
            raise ValueError("op == Adasum is not supported yet with Keras")
        from hvd import keras as hvd_keras
        return hvd_keras.DistributedOptimizer(
            optimizer, name=name, compression=compression, sparse_as_dense=sparse_as_dense,
            gradient_predivide_factor=gradient_predivide_factor, backward_passes_per_step=backward_passes_per_step,
            average_aggregated_gradients=average_aggregated_gradients, groups=groups, process_set=process_set,
            scale_local_gradients=scale_local_gradients)
    raise ValueError(f"Provided optimizer doesn't inherit from either legacy TensorFlow or Keras optimizer: "
                     f"{optimizer}")
