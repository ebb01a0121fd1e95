"""hvd.DistributedOptimizer(op=hvd.Adasum): Horovod's delta optimizer.

With Adasum the ranks do not combine gradients. Each rank applies its own optimizer step
to a parameter as soon as backward has produced its gradient, and the change that step
made (the delta, ``-lr * f(grad)`` for the wrapped optimizer's f) is what is reduced, with
op Adasum; step() then sets every parameter to its value at the start of the step plus
the reduced delta. So momentum, Adam's moments and the like stay local to each rank, and
Adasum adapts the combination of the ranks' updates (orthogonal updates add up, identical
ones count once). This mirrors Horovod's ``_DistributedAdasumOptimizer``.
"""
from contextlib import contextmanager

import torch

from hvd.torch import mpi_ops
from hvd.torch.mpi_ops import Adasum


class _DistributedAdasumOptimizer(torch.optim.Optimizer):
    def __init__(self, params, named_parameters, compression, backward_passes_per_step, process_set):
        super(self.__class__, self).__init__(params)
        self._compression = compression
        self._process_set = process_set
        if named_parameters is not None:
            named_parameters = list(named_parameters)
        else:
            named_parameters = [(f"allreduce.noname.{i}.{j}", p)
                                for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"])]
        if any(not isinstance(p, tuple) for p in named_parameters):
            raise ValueError("DistributedOptimizer: named_parameters should be a sequence of "
                             "(name, parameter) tuples, usually model.named_parameters()")
        names = [n for n, _ in named_parameters]
        if len(set(names)) != len(names):
            raise ValueError("DistributedOptimizer: parameter names in named_parameters must be unique")
        all_params = {id(p) for g in self.param_groups for p in g["params"]}
        if all_params - {id(p) for _, p in named_parameters}:
            raise ValueError("DistributedOptimizer: named_parameters does not cover every parameter "
                             "of the optimizer")
        if backward_passes_per_step < 1:
            raise ValueError("DistributedOptimizer: backward_passes_per_step must be >= 1")
        self._names = {p: n for n, p in named_parameters}
        self.backward_passes_per_step = backward_passes_per_step
        self._delay = {}
        self._handles = {}  # param -> (handle or None, compression ctx)
        self._grad_accs = []
        self._requires_update = set()
        self._starting_models = {p: torch.zeros_like(p, requires_grad=False) for _, p in named_parameters}
        self._register_hooks()

    def set_backward_passes_per_step(self, passes):
        self.backward_passes_per_step = passes
        for p in self._delay:
            self._delay[p] = passes

    def _register_hooks(self):
        for group in self.param_groups:
            for p in group["params"]:
                if not p.requires_grad:
                    continue
                p.grad = p.data.new(p.size()).zero_()
                self._requires_update.add(p)
                self._delay[p] = self.backward_passes_per_step
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(self._make_hook(p))
                self._grad_accs.append(acc)

    def _allreduce_delta_async(self, p):
        """Steps the wrapped optimizer on ``p`` alone, turns ``p`` into the step's delta and
        submits its Adasum allreduce (``p`` holds the delta until step())."""
        start = self._starting_models[p]
        stashed = []
        for group in self.param_groups:
            stashed.append(group["params"])
            group["params"] = [p] if any(p is v for v in group["params"]) else []
        try:
            start.data.copy_(p)
            super(self.__class__, self).step()
            p.data.sub_(start)  # delta = after - before
        finally:
            for saved, group in zip(stashed, self.param_groups):
                group["params"] = saved
        compressed, ctx = self._compression.compress(p)
        handle = mpi_ops.allreduce_async_(compressed.data, name=self._names.get(p), op=Adasum,
                                          process_set=self._process_set)
        return handle, ctx

    def _make_hook(self, p):
        def hook(*ignore):
            if p in self._handles and self._handles[p][0] is not None and self._delay[p] <= 0:
                raise AssertionError(
                    "Gradients were computed more than backward_passes_per_step times before "
                    "step() (increase backward_passes_per_step to accumulate gradients locally)")
            assert not p.grad.requires_grad
            assert self._delay[p] > 0
            handle, ctx = None, None
            self._delay[p] -= 1
            if self._delay[p] == 0:
                handle, ctx = self._allreduce_delta_async(p)
            self._handles[p] = (handle, ctx)
        return hook

    def synchronize(self):
        """Nothing to wait for before step(): the deltas are reduced inside step()."""

    @contextmanager
    def skip_synchronize(self):
        raise AssertionError("Skipping synchronization is not supported with the Adasum optimizer")
        yield  # pragma: no cover

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for p in self._requires_update - set(self._handles):
            self._handles[p] = self._allreduce_delta_async(p)
        for p, (handle, ctx) in list(self._handles.items()):
            if handle is None:  # step() before backward_passes_per_step passes: reduce now
                handle, ctx = self._allreduce_delta_async(p)
            delta = self._compression.decompress(mpi_ops.synchronize(handle), ctx)
            start = self._starting_models[p]
            start.data.add_(delta.data)
            p.data.copy_(start)
            self._delay[p] = self.backward_passes_per_step
        self._handles.clear()
        return loss

    def zero_grad(self, set_to_none=False):
        if self._handles:
            raise AssertionError("optimizer.zero_grad() was called after loss.backward() but before "
                                 "optimizer.step()")
        return super(self.__class__, self).zero_grad(set_to_none)


def adasum_optimizer(optimizer, named_parameters, compression, backward_passes_per_step, process_set):
    """The wrapper of ``optimizer`` over the same param_group dicts and state."""
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,),
               dict(_DistributedAdasumOptimizer.__dict__))
    opt = cls(optimizer.param_groups, named_parameters, compression, backward_passes_per_step, process_set)
    for p, s in optimizer.state.items():
        opt.state[p] = s
    return opt
