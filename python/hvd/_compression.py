"""Gradient compression (Horovod's ``hvd.Compression``), one definition for every framework:
``compression(is_float, cast, half)`` builds the ``Compression`` class of a framework from how
it tells a floating-point tensor, casts one, and names float16."""


def compression(is_float, cast, half):
    """The ``Compression`` class (``Compression.none``, ``Compression.fp16``) of a framework."""

    class NoneCompressor:
        """Sends tensors as they are."""

        @staticmethod
        def compress(tensor):
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor

    class FP16Compressor:
        """Sends floating-point tensors as float16, restores their dtype on arrival."""

        @staticmethod
        def compress(tensor):
            if is_float(tensor) and tensor.dtype != half:
                return cast(tensor, half), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else cast(tensor, ctx)

    class Compression:
        """``Compression.none`` and ``Compression.fp16``."""
        none = NoneCompressor
        fp16 = FP16Compressor

    return Compression
