"""Gradient compression of hvd.tensorflow (Horovod's ``hvd.Compression``): ``none`` and
``fp16`` (floating-point tensors travel as float16 and come back in their dtype)."""
import tensorflow as tf

from hvd._compression import compression

Compression = compression(lambda t: t.dtype.is_floating, lambda t, dt: tf.cast(t, dt), tf.float16)
NoneCompressor = Compression.none
FP16Compressor = Compression.fp16
