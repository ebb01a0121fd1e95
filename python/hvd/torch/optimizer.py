"""hvd.DistributedOptimizer: Horovod's data-parallel optimizer wrapper.

Each gradient is submitted to the runtime (asynchronous allreduce, named after its
parameter) from a hook that fires as soon as backward has accumulated it, so communication
overlaps the rest of backward; step() waits for them all and then runs the wrapped
optimizer's step.
"""
import warnings

import torch

from hvd.torch import mpi_ops, sparse, trace
from hvd.torch.compression import Compression
from hvd.torch.mpi_ops import Average, global_process_set
from hvd.torch.optimizer_adasum import adasum_optimizer


class _DistributedOptimizer(torch.optim.Optimizer):
    def __init__(self, params, named_parameters, compression, backward_passes_per_step, op,
                 gradient_predivide_factor, groups, sparse_as_dense, process_set):
        super(self.__class__, self).__init__(params)
        self._compression = compression
        self._op = op
        self._process_set = process_set
        self._predivide = gradient_predivide_factor
        self._sparse_as_dense = sparse_as_dense
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
        self._parameter_names = self._names  # Horovod's attribute: parameter -> name
        if backward_passes_per_step < 1:
            raise ValueError("DistributedOptimizer: backward_passes_per_step must be >= 1")
        self.backward_passes_per_step = backward_passes_per_step
        self._delay = {}
        self._handles = {}        # param -> (handle, [(param, ctx)]) of a lone allreduce
        self._group_handles = {}  # group index -> the same, for a grouped allreduce
        self._grad_accs = []
        self._synchronized = False
        self._should_sync = True
        self._build_groups(groups)
        # A rank outside the process set neither submits nor waits (Horovod: no hooks, and
        # synchronize() returns at once); step() is the wrapped optimizer's.
        if process_set.included():
            self._register_hooks()

    def _build_groups(self, groups):
        """``groups``: None/0 (every gradient alone), a count (the gradients in order, split
        into that many contiguous groups as even as they go) or lists of parameters (each
        list one grouped allreduce; parameters in none go alone)."""
        params = [p for g in self.param_groups for p in g["params"] if p.requires_grad]
        if groups is None or groups == 0:
            lists = []
        elif isinstance(groups, int) and not isinstance(groups, bool) and groups > 0:
            n = min(groups, len(params))
            lists = [params[k * len(params) // n:(k + 1) * len(params) // n] for k in range(n)]
        elif isinstance(groups, (list, tuple)) and all(isinstance(g, (list, tuple)) for g in groups):
            lists = [list(g) for g in groups]
            known = {id(p) for p in params}
            flat = [p for g in lists for p in g]
            if any(id(p) not in known for p in flat):
                raise ValueError("DistributedOptimizer: groups names a tensor that is not a trainable "
                                 "parameter of the optimizer")
            if len({id(p) for p in flat}) != len(flat):
                raise ValueError("DistributedOptimizer: a parameter is in more than one of groups")
        else:
            raise ValueError("DistributedOptimizer: groups must be a positive number of groups or a "
                             f"list of lists of parameters, got {groups!r}")
        self._groups = [g for g in lists if g]
        self._group_of = {p: gi for gi, g in enumerate(self._groups) for p in g}
        self._group_ready = [0] * len(self._groups)

    def set_backward_passes_per_step(self, passes):
        """Gradients accumulate over ``passes`` backward passes before they are allreduced
        (from the next pass on)."""
        if not isinstance(passes, int) or passes < 1:
            raise ValueError(f"set_backward_passes_per_step: passes must be an int >= 1, got {passes!r}")
        self.backward_passes_per_step = passes
        for p in self._delay:
            self._delay[p] = passes

    def _register_hooks(self):
        for group in self.param_groups:
            for p in group["params"]:
                if not p.requires_grad:
                    continue
                self._delay[p] = self.backward_passes_per_step
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(self._make_hook(p))
                self._grad_accs.append(acc)

    def _scales(self):
        if self._op == Average:
            return 1.0 / self._predivide, self._predivide
        return 1.0, 1.0

    def _submit(self, params, base):
        """Submits the gradients of ``params`` (one allreduce, or one grouped allreduce named
        after ``base``); returns (handle, [(param, ctx)])."""
        for p in params:
            trace._gradient_ready("allreduce." + self._names[p], p.grad)
        if len(params) == 1 and base is None and params[0].grad.is_sparse and not self._sparse_as_dense:
            p = params[0]
            h = sparse.sparse_allreduce_async(p.grad, "allreduce." + self._names[p], self._op,
                                              self._process_set)
            return h, [(p, None)]
        if any(p.grad.is_sparse for p in params) and not self._sparse_as_dense:
            raise ValueError("DistributedOptimizer: a sparse gradient cannot be in a group "
                             "(use sparse_as_dense=True)")
        # sparse_as_dense: a dense copy travels; synchronize() makes the result sparse again
        # (the gradient stays sparse for optimizers that need it, e.g. SparseAdam).
        pairs = [self._compression.compress(p.grad.to_dense() if p.grad.is_sparse else p.grad) for p in params]
        pre, post = self._scales()
        kw = dict(op=self._op, prescale_factor=pre, postscale_factor=post, process_set=self._process_set)
        if base is None:
            h = mpi_ops.allreduce_async_(pairs[0][0], name="allreduce." + self._names[params[0]], **kw)
        else:
            h = mpi_ops.grouped_allreduce_async_([t for t, _ in pairs], name=base, **kw)
        return h, [(p, ctx) for p, (_, ctx) in zip(params, pairs)]

    def _submit_group(self, gi):
        group = self._groups[gi]
        self._group_handles[gi] = self._submit(group, "allreduce.group." + self._names[group[0]])
        self._group_ready[gi] = 0

    def _make_hook(self, p):
        def hook(*ignore):
            if self._delay[p] <= 0:
                raise AssertionError(
                    "Gradients were computed more than backward_passes_per_step times before "
                    "step() (increase backward_passes_per_step or call step())")
            assert not p.grad.requires_grad
            self._delay[p] -= 1
            if self._delay[p] > 0:
                return
            gi = self._group_of.get(p)
            if gi is None:
                self._handles[p] = self._submit([p], None)
                return
            self._group_ready[gi] += 1
            if self._group_ready[gi] == len(self._groups[gi]):
                self._submit_group(gi)
        return hook

    def synchronize(self):
        """Waits for every gradient's allreduce. Gradients whose hook did not submit them
        (a parameter unused this step) are submitted here, zero if they have none, so that
        every rank allreduces the same tensors (a group goes whole). On a rank outside the
        optimizer's process set it does nothing."""
        if not self._process_set.included():
            self._synchronized = True
            return
        for p in self._delay:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        for p in self._delay:
            gi = self._group_of.get(p)
            if gi is None and p not in self._handles:
                self._handles[p] = self._submit([p], None)
            elif gi is not None and gi not in self._group_handles:
                self._submit_group(gi)
        for h, members in list(self._handles.values()) + list(self._group_handles.values()):
            out = mpi_ops.synchronize(h)
            outs = out if isinstance(out, list) else [out]
            for (p, ctx), o in zip(members, outs):
                o = o if ctx is None else self._compression.decompress(o, ctx)
                if p.grad.is_sparse:
                    p.grad = o if o.is_sparse else o.to_sparse()
                elif o.is_sparse:
                    p.grad = o
                elif o.data_ptr() != p.grad.data_ptr():
                    p.grad.copy_(o)
        self._handles.clear()
        self._group_handles.clear()
        self._group_ready = [0] * len(self._groups)
        for p in self._delay:
            self._delay[p] = self.backward_passes_per_step
        self._synchronized = True

    def _drop_pending(self):
        """Forgets the allreduces of an interrupted step (elastic: after a failed step the
        handles belong to a world that is gone); the next backward starts afresh."""
        self._handles.clear()
        self._group_handles.clear()
        self._group_ready = [0] * len(self._groups)
        for p in self._delay:
            self._delay[p] = self.backward_passes_per_step
        self._synchronized = False

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
            if self._synchronized:  # synchronize() was called by hand: Horovod warns, and syncs again
                warnings.warn("optimizer.step() called without optimizer.skip_synchronize() context after "
                              "optimizer.synchronize(). This can cause training slowdown. You may want to "
                              "consider using optimizer.skip_synchronize() context if you use "
                              "optimizer.synchronize() in your code.")
            self.synchronize()
        trace._after_synchronize()
        self._synchronized = False
        out = super(self.__class__, self).step(closure)
        trace._step_done()
        return out

    def zero_grad(self, *args, **kwargs):
        if self._handles or self._group_handles:
            raise AssertionError("optimizer.zero_grad() was called after loss.backward() but before "
                                 "optimizer.step() or optimizer.synchronize()")
        return super(self.__class__, self).zero_grad(*args, **kwargs)


def DistributedOptimizer(optimizer, named_parameters=None, compression=Compression.none,
                         backward_passes_per_step=1, op=Average, gradient_predivide_factor=1.0,
                         num_groups=0, groups=None, sparse_as_dense=False,
                         process_set=global_process_set):
    """Wraps ``optimizer`` so that step() applies gradients averaged (``op``) over the ranks.

    ``op=hvd.Adasum`` wraps it as Horovod's Adasum optimizer instead (optimizer_adasum.py):
    each rank steps locally and the parameter deltas are reduced with Adasum.

    ``backward_passes_per_step``: gradients accumulate locally over that many backward
    passes before they are allreduced (scale the loss yourself, as with Horovod; change it
    later with ``set_backward_passes_per_step``). ``groups``: a number of groups, or lists
    of parameters, allreduced as grouped allreduces (``num_groups``: Horovod's older
    spelling of a number). ``sparse_as_dense``: sparse gradients are made dense and
    allreduced as such; otherwise they go through ``sparse_allreduce_async`` (op Sum or
    Average).
    """
    if op not in (mpi_ops.Average, mpi_ops.Sum, mpi_ops.Min, mpi_ops.Max, mpi_ops.Product, mpi_ops.Adasum):
        raise ValueError(f"DistributedOptimizer: unsupported op {op!r}")
    if op == mpi_ops.Adasum and process_set.size() > 1:
        # Horovod's delta optimizer (optimizer_adasum.py); on one rank the plain wrapper
        # (an Adasum of one delta is the delta), as Horovod does.
        mpi_ops._check_adasum(process_set, "DistributedOptimizer")
        return adasum_optimizer(optimizer, named_parameters, compression, backward_passes_per_step,
                                process_set)
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("DistributedOptimizer: gradient_predivide_factor needs op=Average")
    if num_groups and groups is not None:
        raise ValueError("DistributedOptimizer: give num_groups or groups, not both")
    if not isinstance(num_groups, int) or num_groups < 0:
        raise ValueError(f"DistributedOptimizer: num_groups must be an int >= 0, got {num_groups!r}")
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,), dict(_DistributedOptimizer.__dict__))
    # The wrapper is built over the same param_group dicts, as Horovod's is: an LR scheduler
    # or anything else holding the original optimizer changes the wrapper's groups too.
    # (load_state_dict would replace them with copies and silently cut that link.)
    opt = cls(optimizer.param_groups, named_parameters, compression, backward_passes_per_step, op,
              gradient_predivide_factor, groups if groups is not None else num_groups,
              bool(sparse_as_dense), process_set)
    for p, s in optimizer.state.items():  # momentum buffers and the like, kept by parameter
        opt.state[p] = s
    opt._hvd_inner = opt
    return opt
