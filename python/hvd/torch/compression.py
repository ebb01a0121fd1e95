"""Gradient compression (Horovod's ``hvd.Compression``)."""
import torch

from hvd._compression import compression

Compression = compression(lambda t: t.dtype.is_floating_point, lambda t, dt: t.to(dt), torch.float16)
NoneCompressor = Compression.none
FP16Compressor = Compression.fp16
