"""hvd.keras.DistributedOptimizer for Keras 3 optimizers.

The wrapped optimizer is rebuilt (from its config) as an instance of a subclass of its own
class whose ``apply(grads, variables)`` first averages the gradients over the ranks; the
subclass keeps the class's name and module, so a model saved with it loads as the plain
optimizer anywhere, and as a distributed one through hvd.keras.load_model.
``backward_passes_per_step`` uses Keras's own gradient accumulation
(``gradient_accumulation_steps``): the averaged gradients are accumulated and applied every
n steps (summed, as Horovod's default average_aggregated_gradients=False has it).
"""
import keras

from hvd.tensorflow import tape as _tape
from hvd.tensorflow.compression import Compression
from hvd.tensorflow.mpi_ops import Average, global_process_set


class _DistributedMixin:
    """What the distributed subclass adds to a Keras optimizer class."""

    def _hvd_setup(self, name=None, compression=Compression.none, sparse_as_dense=False, op=Average,
                   gradient_predivide_factor=1.0, groups=None, process_set=global_process_set,
                   scale_local_gradients=True, sum_accumulated=False):
        self._hvd_allreduce = _tape.make_allreduce_grads_fn(
            name or f"Distributed{type(self).__name__}", compression, sparse_as_dense, op,
            gradient_predivide_factor, groups, process_set)
        self._hvd_process_set = process_set
        self._hvd_scale_local = scale_local_gradients
        self._hvd_local = set()
        self._hvd_sum_accumulated = sum_accumulated

    def register_local_var(self, var):
        """Its gradient stays this rank's own (divided by the set's size unless
        scale_local_gradients=False, as Horovod does)."""
        self._hvd_local.add(id(var))

    def apply(self, grads, trainable_variables=None):
        if not hasattr(self, "_hvd_allreduce"):  # built by deserialization: the defaults
            self._hvd_setup()
        grads = list(grads)
        variables = list(trainable_variables) if trainable_variables is not None else list(
            self._trainable_variables)
        out = _tape.reduce_shared(self._hvd_allreduce, grads, variables, self._hvd_local, self._hvd_scale_local,
                                  self._hvd_process_set)
        if self._hvd_sum_accumulated and self.gradient_accumulation_steps:
            steps = self.gradient_accumulation_steps
            out = [None if g is None else g * steps for g in out]
        return super().apply(out, trainable_variables)


_classes = {}


def distributed_class(base):
    """The distributed subclass of the Keras optimizer class ``base`` (one per class)."""
    if getattr(base, "_hvd_distributed", False):
        return base
    if base not in _classes:
        _classes[base] = type(base.__name__, (_DistributedMixin, base),
                              {"__module__": base.__module__, "__qualname__": base.__qualname__,
                               "_hvd_distributed": True})
    return _classes[base]


def DistributedOptimizer(optimizer, name=None, device_dense="", device_sparse="", compression=Compression.none,
                         sparse_as_dense=False, gradient_predivide_factor=1.0, op=Average,
                         backward_passes_per_step=1, average_aggregated_gradients=False, num_groups=0, groups=None,
                         process_set=global_process_set, scale_local_gradients=True):
    """A Keras optimizer like ``optimizer`` (same class, same config) that averages the
    gradients over the ranks of ``process_set`` before applying them."""
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise ValueError(f"hvd.keras.DistributedOptimizer: expected a keras.optimizers.Optimizer, got "
                         f"{type(optimizer).__name__}")
    _tape._check_predivide(gradient_predivide_factor, op)
    groups = _tape.check_groups(groups, num_groups)
    if backward_passes_per_step < 1:
        raise ValueError(f"backward_passes_per_step must be >= 1, got {backward_passes_per_step}")
    config = optimizer.get_config()
    if backward_passes_per_step > 1:
        config["gradient_accumulation_steps"] = backward_passes_per_step
    opt = distributed_class(type(optimizer)).from_config(config)
    opt._hvd_setup(name, compression, sparse_as_dense, op, gradient_predivide_factor, groups, process_set,
                   scale_local_gradients, sum_accumulated=not average_aggregated_gradients)
    return opt


def PartialDistributedOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                                compression=Compression.none, sparse_as_dense=False, gradient_predivide_factor=1.0,
                                op=Average, backward_passes_per_step=1, average_aggregated_gradients=False,
                                groups=None, process_set=global_process_set, local_layers=None,
                                scale_local_gradients=True):
    """DistributedOptimizer whose ``local_layers``' variables keep their local gradients."""
    opt = DistributedOptimizer(optimizer, name, device_dense, device_sparse, compression, sparse_as_dense,
                               gradient_predivide_factor, op, backward_passes_per_step,
                               average_aggregated_gradients, 0, groups, process_set, scale_local_gradients)
    layers = local_layers if isinstance(local_layers, (list, tuple)) else [] if local_layers is None else [local_layers]
    for layer in layers:
        for v in layer.trainable_weights:
            opt.register_local_var(v)
    return opt
