"""What the three examples share: the verdict that training on N ranks equals one process
on the concatenated batches. Every rank must hold the same values; rank 0 runs the
reference and compares; the ranks agree on the exit code."""
import numpy as np
import tensorflow as tf

from hvd import _core


def verdict(hvd, name, flat, reference, tolerance, problems, what):
    """``flat``: this rank's trained values (one vector). ``reference()`` (rank 0 only)
    returns {label: largest |difference|}. ``what``: the run in words. Shuts hvd down and
    returns the exit code (1 when any rank saw a problem)."""
    gathered = hvd.allgather(np.asarray(flat)[None]).numpy()
    if not all(np.array_equal(gathered[0], g) for g in gathered):
        problems.append("the ranks' values differ")
    if hvd.rank() == 0:
        diffs = reference()
        figures = ", ".join(f"{label} {d:.3g}" for label, d in diffs.items())
        print(f"{name} np={hvd.size()}: {what}; largest |difference| from one process on the concatenated "
              f"batches: {figures}", flush=True)
        if max(diffs.values()) > tolerance:
            problems.append(f"difference above the tolerance {tolerance:g}")
    for p in problems:
        print(f"{name} rank {hvd.rank()}: FAIL: {p}", flush=True)
    bad = int(hvd.allreduce(tf.constant([len(problems)]), op=hvd.Max).numpy()[0])
    hvd.shutdown()
    return 1 if bad else 0


def largest_difference(a, b):
    return float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())


class Counted:
    """``with Counted() as c:`` the runtime's tensors and responses (after fusion) of the
    block: how much the runtime fused. Small cached allreduces (HVD_EAGER_ALLREDUCE_BYTES)
    travel on the negotiation message itself and count a response each (``c.eager``)."""

    def __enter__(self):
        self._before = _core.stats()
        return self

    def __exit__(self, *exc):
        after = _core.stats()
        self.tensors, self.responses, self.eager = (after[k] - self._before[k]
                                                    for k in ("tensors", "responses", "eager_tensors"))
        return False

    def __str__(self):
        return (f"{self.tensors} tensors in {self.responses} responses, {self.eager} of them small allreduces "
                f"reduced on the negotiation's bit exchange")
