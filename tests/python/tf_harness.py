"""The check collector of the hvd.tensorflow tests (checks_base.BaseChecks with a close()
for TensorFlow tensors and numpy arrays)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # no TensorFlow start-up chatter per rank

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from checks_base import BaseChecks  # noqa: E402


def as_numpy(x):
    if isinstance(x, tf.IndexedSlices):
        x = tf.convert_to_tensor(x)
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


class Checks(BaseChecks):
    def close(self, got, want, what, rtol=1e-5, atol=1e-6):
        """``got`` (a tensor or array) equals ``want``: same dtype and shape, values within
        the tolerance for floating types, exactly otherwise."""
        g, w = as_numpy(got), np.asarray(as_numpy(want))
        dt = getattr(got, "dtype", g.dtype)
        name = dt.name if hasattr(dt, "name") else str(dt)
        floating = np.issubdtype(g.dtype, np.floating) or name == "bfloat16"
        same = g.shape == w.shape and (str(g.dtype) == str(w.dtype) or name == str(w.dtype))
        if same and floating:
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            same = bool(np.allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True))
            if g.size:
                self.note_worst(name, np.nanmax(np.abs(g64 - w64)))
        elif same:
            same = bool(np.array_equal(g, w))
        self.ok(same, f"{what}: got {name} {g.shape} {str(g.ravel()[:6].tolist())[:120]}, "
                      f"want {w.dtype} {w.shape} {str(w.ravel()[:6].tolist())[:120]}")
