"""A tiny check collector for the python tests that run on every rank under mpirun: each
failure is printed with its rank, and the ranks agree on the outcome at the end."""
import torch

import hvd.torch as hvd  # noqa: F401  (the runtime the checks agree through)
from checks_base import BaseChecks


class Checks(BaseChecks):
    def close(self, got, want, what, rtol=1e-5, atol=1e-6):
        if got.dtype == torch.bool or not (got.dtype.is_floating_point or got.dtype.is_complex):
            same = got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want)
        else:
            wide = torch.complex128 if got.dtype.is_complex else torch.float64
            same = (got.dtype == want.dtype and got.shape == want.shape and
                    torch.allclose(got.to(wide), want.to(wide), rtol=rtol, atol=atol))
            if got.shape == want.shape and got.numel() > 0:
                self.note_worst(str(got.dtype).replace("torch.", ""),
                                (got.to(wide) - want.to(wide)).abs().max().item())
        self.ok(same, f"{what}: got {got.dtype} {tuple(got.shape)} {str(got.flatten()[:6].tolist())[:120]}, "
                      f"want {want.dtype} {tuple(want.shape)} {str(want.flatten()[:6].tolist())[:120]}")
