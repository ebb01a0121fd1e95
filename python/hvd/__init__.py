"""hvd: Horovod-style data-parallel training on the hvd runtime.

Use the framework module: ``import hvd.torch as hvd`` (Horovod's ``horovod.torch`` API).
The C++ runtime is in ``hvd._core``; every failure it reports is raised as
:class:`HvdError` (a ``RuntimeError``) with the runtime's message. A call the runtime
refuses when it is made (a name already pending, bad splits, ...) raises
:class:`HvdInvalidArgument` there and then: an ``HvdError`` that is also a ``ValueError``,
the exception Horovod raises for these.
"""
from hvd._core import HvdError  # noqa: F401

HorovodInternalError = HvdError


class HvdInvalidArgument(HvdError, ValueError):
    """A call refused as it was made (Horovod: ValueError); also an HvdError (RuntimeError)."""


__all__ = ["HvdError", "HorovodInternalError", "HvdInvalidArgument"]
