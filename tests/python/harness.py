"""A tiny check collector for the python tests that run on every rank under mpirun: each
failure is printed with its rank, and the ranks agree on the outcome at the end."""
import sys
import traceback

import torch

import hvd.torch as hvd


class Checks:
    def __init__(self, name):
        self.name = name
        self.count = 0
        self.failures = []
        self.worst = {}  # dtype name -> largest |got - want| of close()'s float comparisons

    def ok(self, cond, what):
        self.count += 1
        if not cond:
            self.failures.append(what)
            print(f"[rank {hvd.rank()}] FAIL {self.name}: {what}", file=sys.stderr, flush=True)

    def close(self, got, want, what, rtol=1e-5, atol=1e-6):
        if got.dtype == torch.bool or not (got.dtype.is_floating_point or got.dtype.is_complex):
            same = got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want)
        else:
            wide = torch.complex128 if got.dtype.is_complex else torch.float64
            same = (got.dtype == want.dtype and got.shape == want.shape and
                    torch.allclose(got.to(wide), want.to(wide), rtol=rtol, atol=atol))
            if got.shape == want.shape and got.numel() > 0:
                d = (got.to(wide) - want.to(wide)).abs().max().item()
                key = str(got.dtype).replace("torch.", "")
                self.worst[key] = max(self.worst.get(key, 0.0), d)
        self.ok(same, f"{what}: got {got.dtype} {tuple(got.shape)} {str(got.flatten()[:6].tolist())[:120]}, "
                      f"want {want.dtype} {tuple(want.shape)} {str(want.flatten()[:6].tolist())[:120]}")

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
        """Agrees on the outcome (max over ranks), prints the summary, returns the exit code."""
        bad = hvd.allreduce(torch.tensor([len(self.failures)], dtype=torch.int64), op=hvd.Max,
                            name=f"{self.name}.outcome").item()
        # The equivalence figure: the largest difference from the references per dtype, over
        # the ranks (every rank compares the same dtypes).
        keys = ["float64", "float32", "float16", "bfloat16", "complex128", "complex64"]
        worst = hvd.allreduce(torch.tensor([self.worst.get(k, -1.0) for k in keys], dtype=torch.float64),
                              op=hvd.Max, name=f"{self.name}.worst").tolist()
        if hvd.rank() == 0:
            figures = ", ".join(f"{k} {w:.3g}" for k, w in zip(keys, worst) if w >= 0)
            print(f"{self.name} np={hvd.size()}: {self.count} checks on rank 0, "
                  f"{'all passed' if bad == 0 else 'FAILED on some rank'}"
                  + (f"; largest |difference| from the references: {figures}" if figures else ""), flush=True)
        hvd.shutdown()
        return 0 if bad == 0 else 1
