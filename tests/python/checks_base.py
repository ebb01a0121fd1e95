"""The framework-neutral part of the python tests' check collector: each failure is printed
with its rank, and the ranks agree on the outcome at the end (through hvd._core and numpy,
so that a test of one framework needs no other). harness.Checks (torch) and
tf_harness.Checks (TensorFlow) add their close()."""
import sys
import traceback

import numpy as np

from hvd import _common, _core

# The dtypes whose largest difference from the references finish() reports.
FLOAT_KEYS = ["float64", "float32", "float16", "bfloat16", "complex128", "complex64"]


def world_max(values, name):
    """The element-wise maximum of a float64 vector over the ranks."""
    a = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty_like(a)
    _core.allreduce_async(name, a.ctypes.data, out.ctypes.data, "float64", list(a.shape), 3, 1.0, 1.0, 0).wait()
    return out


class BaseChecks:
    def __init__(self, name):
        self.name = name
        self.count = 0
        self.failures = []
        self.worst = {}  # dtype name -> largest |got - want| of close()'s float comparisons

    def ok(self, cond, what):
        self.count += 1
        if not cond:
            self.failures.append(what)
            print(f"[rank {_core.rank()}] FAIL {self.name}: {what}", file=sys.stderr, flush=True)

    def note_worst(self, key, diff):
        self.worst[key] = max(self.worst.get(key, 0.0), float(diff))

    def raises(self, fn, exc, text, what):
        try:
            fn()
        except exc as e:
            self.ok(text in str(e), f"{what}: message {str(e)[:200]!r} lacks {text!r}")
            return
        except Exception as e:  # noqa: BLE001
            self.ok(False, f"{what}: raised {type(e).__name__}: {str(e)[:200]}, expected {exc.__name__}")
            return
        self.ok(False, f"{what}: did not raise {exc.__name__}")

    def run(self, fn, *args):
        try:
            fn(*args)
        except Exception:  # noqa: BLE001
            self.ok(False, f"{fn.__name__} raised:\n{traceback.format_exc()}")

    def finish(self):
        """Agrees on the outcome (max over ranks), prints the summary, shuts the runtime down,
        returns the exit code."""
        bad = world_max([len(self.failures)], f"{self.name}.outcome")[0]
        # The equivalence figure: the largest difference from the references per dtype, over
        # the ranks (every rank compares the same dtypes).
        worst = world_max([self.worst.get(k, -1.0) for k in FLOAT_KEYS], f"{self.name}.worst")
        if _core.rank() == 0:
            figures = ", ".join(f"{k} {w:.3g}" for k, w in zip(FLOAT_KEYS, worst) if w >= 0)
            print(f"{self.name} np={_core.size()}: {self.count} checks on rank 0, "
                  f"{'all passed' if bad == 0 else 'FAILED on some rank'}"
                  + (f"; largest |difference| from the references: {figures}" if figures else ""), flush=True)
        _common.shutdown()
        return 0 if bad == 0 else 1


def run_all(checks, init, fns):
    """The usual main: init(), each fn(checks, rank, size), then finish(); the exit code."""
    init()
    for fn in fns:
        checks.run(fn, checks, _core.rank(), _core.size())
    return checks.finish()
