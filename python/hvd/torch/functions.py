"""Model and object helpers of hvd.torch (Horovod's horovod.torch.functions)."""
import torch

from hvd import _common
from hvd.torch import mpi_ops
from hvd.torch.mpi_ops import global_process_set


def broadcast_parameters(params, root_rank, process_set=global_process_set):
    """Broadcasts ``params`` from ``root_rank``, in place: a state_dict(), named_parameters(),
    or a list of parameters or of (name, parameter) pairs, as Horovod takes them. Unnamed
    parameters are named by their position, the same on every rank."""
    if isinstance(params, dict):
        items = sorted(params.items())
    elif isinstance(params, list) or hasattr(params, "__iter__"):
        items = [p if isinstance(p, tuple) else (f"param.{i}", p) for i, p in enumerate(params)]
        if any(len(p) != 2 for p in items):
            raise ValueError("broadcast_parameters: expected parameters or (name, parameter) pairs")
    else:
        raise ValueError(f"broadcast_parameters: invalid params of type {type(params).__name__}")
    handles = []
    for name, p in items:
        if p is None:
            continue
        t = p.data if isinstance(p, torch.nn.Parameter) else p
        if not isinstance(t, torch.Tensor):
            continue
        handles.append(mpi_ops.broadcast_async_(t, root_rank, name="broadcast_parameters." + name,
                                                process_set=process_set))
    for h in handles:
        mpi_ops.synchronize(h)


def _object_name(kind, name, process_set):
    """The base name of an object collective's tensors. Unnamed calls take the set's next
    automatic name (mpi_ops._name), never anything derived from ``obj``: the ranks' objects
    differ (non-root ranks of a broadcast_object usually pass None), the names must not."""
    return f"{kind}.{name}" if name else mpi_ops._name(kind, None, process_set)


def broadcast_object(obj, root_rank=0, name=None, process_set=global_process_set):
    """Pickles ``obj`` on root (a global rank, a member of ``process_set``) and returns the
    root's object on every rank of the set (the other ranks' ``obj`` is ignored: ``broadcast_object(x if hvd.rank() == 0 else None, 0)`` works)."""
    name = _object_name("broadcast_object", name, process_set)
    is_root = mpi_ops.rank() == root_rank  # root_rank is a global rank, as in Horovod

    def bcast_size(n):
        t = torch.tensor([n], dtype=torch.int64)
        return mpi_ops.broadcast_(t, root_rank, name=f"{name}.size", process_set=process_set).item()

    def bcast_bytes(data):
        t = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        return mpi_ops.broadcast_(t, root_rank, name=f"{name}.data", process_set=process_set).numpy().tobytes()
    return _common.broadcast_object_bytes(obj, is_root, bcast_size, bcast_bytes)


def allgather_object(obj, name=None, process_set=global_process_set):
    """Every rank's ``obj``, in rank order, on every rank (objects of any types)."""
    name = _object_name("allgather_object", name, process_set)

    def gather_sizes(n):
        return mpi_ops.allgather(torch.tensor([n], dtype=torch.int64), name=f"{name}.sizes",
                                 process_set=process_set).tolist()

    def gather_bytes(data):
        t = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        return mpi_ops.allgather(t, name=f"{name}.data", process_set=process_set).numpy().tobytes()
    return _common.allgather_object_bytes(obj, gather_sizes, gather_bytes)


def broadcast_optimizer_state(optimizer, root_rank, process_set=global_process_set):
    """Broadcasts an optimizer's state (tensors in place, scalars and options by object)."""
    if isinstance(optimizer, torch.optim.LBFGS):
        raise ValueError("cannot broadcast torch.optim.LBFGS state")
    opt = getattr(optimizer, "_hvd_inner", optimizer)
    state_dict = opt.state_dict()
    # A fresh optimizer has no state yet: make it (a zero-gradient step of plain state) so that
    # every rank has the same tensors to receive into, as Horovod does.
    if len(state_dict["state"]) == 0:
        for group in opt.param_groups:
            for p in group["params"]:
                if p.requires_grad and id(p) not in {id(k) for k in opt.state}:
                    p.grad = p.data.new_zeros(p.size())
        saved = [dict(g) for g in opt.param_groups]
        for g in opt.param_groups:  # a step with lr 0 and no decay leaves the weights alone
            for k in ("lr", "weight_decay"):
                if k in g:
                    g[k] = 0.0
        # The wrapped optimizer's own step: a DistributedOptimizer's would allreduce.
        base = type(opt).__bases__[0] if hasattr(opt, "_delay") else type(opt)
        base.step(opt)
        for g, s in zip(opt.param_groups, saved):
            for k in ("lr", "weight_decay"):
                if k in s:
                    g[k] = s[k]
        state_dict = opt.state_dict()
    # Options (lr, momentum, ...) and scalar state travel as one object from the root.
    scalars = {"groups": [{k: v for k, v in g.items() if k != "params"} for g in state_dict["param_groups"]],
               "state": {pid: {k: v for k, v in st.items() if not isinstance(v, torch.Tensor)}
                         for pid, st in state_dict["state"].items()}}
    scalars = broadcast_object(scalars, root_rank, name="broadcast_optimizer_state.scalars",
                               process_set=process_set)
    for g, opts in zip(state_dict["param_groups"], scalars["groups"]):
        g.update(opts)  # "params" (ids) stays this rank's
    handles = []
    for pid in sorted(state_dict["state"]):
        st = state_dict["state"][pid]
        for k in sorted(st):
            v = st[k]
            if isinstance(v, torch.Tensor):
                handles.append(mpi_ops.broadcast_async_(v, root_rank, name=f"broadcast_optimizer_state.{pid}.{k}",
                                                        process_set=process_set))
            else:
                st[k] = scalars["state"].get(pid, {}).get(k, v)
    for h in handles:
        mpi_ops.synchronize(h)
    opt.load_state_dict(state_dict)
