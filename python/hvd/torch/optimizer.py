"""hvd.DistributedOptimizer: Horovod's data-parallel optimizer wrapper.

Each gradient is submitted to the runtime (asynchronous allreduce, named after its
parameter) from a hook that fires as soon as backward has accumulated it, so communication
overlaps the rest of backward; step() waits for them all and then runs the wrapped
optimizer's step.
"""
import torch

from hvd.torch import mpi_ops, trace
from hvd.torch.compression import Compression
from hvd.torch.mpi_ops import Average, global_process_set


class _DistributedOptimizer(torch.optim.Optimizer):
    def __init__(self, params, named_parameters, compression, backward_passes_per_step, op,
                 gradient_predivide_factor, process_set):
        super(self.__class__, self).__init__(params)
        self._compression = compression
        self._op = op
        self._process_set = process_set
        self._predivide = gradient_predivide_factor
        if named_parameters is not None:
            named_parameters = list(named_parameters)
        else:
            named_parameters = [(f"allreduce.noname.{i}.{j}", p)
                                for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"])]
        names = [n for n, _ in named_parameters]
        if len(set(names)) != len(names):
            raise ValueError("DistributedOptimizer: parameter names in named_parameters must be unique")
        all_params = {id(p) for g in self.param_groups for p in g["params"]}
        named_ids = {id(p) for _, p in named_parameters}
        if all_params - named_ids:
            raise ValueError("DistributedOptimizer: named_parameters does not cover every parameter "
                             "of the optimizer")
        self._names = {p: n for n, p in named_parameters}
        if backward_passes_per_step < 1:
            raise ValueError("DistributedOptimizer: backward_passes_per_step must be >= 1")
        self.backward_passes_per_step = backward_passes_per_step
        self._delay = {}
        self._handles = {}  # param -> (handle, ctx)
        self._grad_accs = []
        self._synchronized = False
        self._should_sync = True
        self._register_hooks()

    def _register_hooks(self):
        for group in self.param_groups:
            for p in group["params"]:
                if not p.requires_grad:
                    continue
                self._delay[p] = self.backward_passes_per_step
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(self._make_hook(p))
                self._grad_accs.append(acc)

    def _submit(self, p):
        name = "allreduce." + self._names[p]
        trace._gradient_ready(name, p.grad)
        tensor, ctx = self._compression.compress(p.grad)
        if self._op == Average:
            pre, post = 1.0 / self._predivide, self._predivide
        else:
            pre, post = 1.0, 1.0
        h = mpi_ops.allreduce_async_(tensor, name=name, op=self._op, prescale_factor=pre,
                                     postscale_factor=post, process_set=self._process_set)
        return h, ctx, tensor

    def _make_hook(self, p):
        def hook(*ignore):
            if self._handles.get(p) is not None:
                if self._delay[p] <= 0:
                    raise AssertionError(
                        "Gradients were computed more than backward_passes_per_step times before "
                        "step() (increase backward_passes_per_step or call step())")
            assert not p.grad.requires_grad
            self._delay[p] -= 1
            if self._delay[p] == 0:
                self._handles[p] = self._submit(p)
        return hook

    def synchronize(self):
        """Waits for every gradient's allreduce. Gradients whose hook did not submit them
        (a parameter unused this step) are submitted here, zero if they have none, so that
        every rank allreduces the same tensors."""
        for p in self._delay:
            if self._handles.get(p) is None:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                self._handles[p] = self._submit(p)
        for p, (h, ctx, tensor) in list(self._handles.items()):
            out = self._compression.decompress(mpi_ops.synchronize(h), ctx)
            if out.data_ptr() != p.grad.data_ptr():
                p.grad.copy_(out)
        self._handles.clear()
        for p in self._delay:
            self._delay[p] = self.backward_passes_per_step
        self._synchronized = True

    def skip_synchronize(self):
        """Context manager: step() without synchronize() (after calling it by hand)."""
        opt = self

        class _Skip:
            def __enter__(self):
                opt._should_sync = False

            def __exit__(self, *exc):
                opt._should_sync = True
        return _Skip()

    def step(self, closure=None):
        trace._before_synchronize()
        if self._should_sync:
            if self._synchronized:
                pass  # synchronize() was called by hand
            else:
                self.synchronize()
        trace._after_synchronize()
        self._synchronized = False
        out = super(self.__class__, self).step(closure)
        trace._step_done()
        return out

    def zero_grad(self, set_to_none=False):
        if self._handles:
            raise AssertionError("optimizer.zero_grad() was called after loss.backward() but before "
                                 "optimizer.step() or optimizer.synchronize()")
        return super(self.__class__, self).zero_grad(set_to_none)


def DistributedOptimizer(optimizer, named_parameters=None, compression=Compression.none,
                         backward_passes_per_step=1, op=Average, gradient_predivide_factor=1.0,
                         process_set=global_process_set):
    """Wraps ``optimizer`` so that step() applies gradients averaged (``op``) over the ranks.

    ``backward_passes_per_step``: gradients accumulate locally over that many backward
    passes before they are allreduced (scale the loss yourself, as with Horovod).
    """
    if op not in (mpi_ops.Average, mpi_ops.Sum, mpi_ops.Min, mpi_ops.Max, mpi_ops.Product):
        raise ValueError(f"DistributedOptimizer: unsupported op {op!r}")
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("DistributedOptimizer: gradient_predivide_factor needs op=Average")
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,), dict(_DistributedOptimizer.__dict__))
    # The wrapper is built over the same param_group dicts, as Horovod's is: an LR scheduler
    # or anything else holding the original optimizer changes the wrapper's groups too.
    # (load_state_dict would replace them with copies and silently cut that link.)
    opt = cls(optimizer.param_groups, named_parameters, compression, backward_passes_per_step, op,
              gradient_predivide_factor, process_set)
    for p, s in optimizer.state.items():  # momentum buffers and the like, kept by parameter
        opt.state[p] = s
    opt._hvd_inner = opt
    return opt
