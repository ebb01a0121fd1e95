"""hvd: Horovod-style data-parallel training on the hvd runtime.

Use the framework module: ``import hvd.torch as hvd`` (Horovod's ``horovod.torch`` API).
The C++ runtime is in ``hvd._core``; every failure it reports is raised as
:class:`HvdError` (a ``RuntimeError``) with the runtime's message.
"""
from hvd._core import HvdError  # noqa: F401

HorovodInternalError = HvdError

__all__ = ["HvdError", "HorovodInternalError"]
