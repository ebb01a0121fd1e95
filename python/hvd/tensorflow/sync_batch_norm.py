"""hvd.SyncBatchNormalization (Horovod's horovod.tensorflow.SyncBatchNormalization) for
Keras 3: BatchNormalization whose training statistics are those of the batch of every rank
of the process set together. Each rank's element count, sum and sum of squares per channel
are summed over the ranks (one grouped allreduce, in float64), so per-rank batch sizes may
differ; the allreduce is differentiable, so the gradients are those of BatchNormalization
on the concatenated batch. Eval mode normalizes with the running statistics, as usual."""
import keras
import tensorflow as tf

from hvd.tensorflow import mpi_ops
from hvd.tensorflow.mpi_ops import Sum, global_process_set


class SyncBatchNormalization(keras.layers.BatchNormalization):
    def __init__(self, *args, process_set=global_process_set, **kwargs):
        if kwargs.get("synchronized"):
            raise ValueError("hvd.SyncBatchNormalization synchronizes over hvd's ranks; leave `synchronized` False")
        super().__init__(*args, **kwargs)
        self._hvd_process_set = process_set

    def _moments(self, inputs, mask):
        if mask is not None:
            raise NotImplementedError("hvd.SyncBatchNormalization does not take a mask")
        x = tf.cast(inputs, tf.float64)
        axes = list(self._reduction_axes)
        count = tf.cast(tf.reduce_prod(tf.gather(tf.shape(x), axes)), tf.float64)
        total, sq, n = mpi_ops._grouped_allreduce(
            [tf.reduce_sum(x, axes, keepdims=True), tf.reduce_sum(x * x, axes, keepdims=True), tf.reshape(count, [1])],
            op=Sum, process_set=self._hvd_process_set)
        mean = total / n
        variance = tf.maximum(sq / n - mean * mean, 0.0)
        return tf.cast(tf.squeeze(mean, axes), inputs.dtype), tf.cast(tf.squeeze(variance, axes), inputs.dtype)
