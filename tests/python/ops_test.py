#!/usr/bin/env python3
"""Every hvd.torch collective against a torch reference, for every CPU dtype, in place and
out of place, blocking and through async handles; process sets; object and model helpers;
errors (mismatched shapes raise HvdError on every rank). Run under mpirun at any np: each
rank computes every rank's input itself, so it knows the exact expected result."""
import os
import sys

import torch

import hvd.torch as hvd
from harness import Checks

DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.complex64,
          torch.complex128]
OPS = {hvd.Sum: "Sum", hvd.Average: "Average", hvd.Min: "Min", hvd.Max: "Max", hvd.Product: "Product"}


def tol(dtype):
    return {torch.float16: (1e-2, 1e-2), torch.bfloat16: (3e-2, 3e-2)}.get(dtype, (1e-5, 1e-6))


def value(rank, shape, dtype, op=hvd.Sum, seed=0):
    """Rank `rank`'s input: small values (no integer overflow), near 1 for Product."""
    g = torch.Generator().manual_seed(1000 * seed + rank)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=dtype)
    if dtype.is_floating_point:
        if op == hvd.Product:
            return (0.5 + torch.rand(shape, generator=g)).to(dtype)
        return torch.randn(shape, generator=g).to(dtype)
    return torch.randint(0, 4, shape, generator=g).to(dtype)


def ops_for(dtype):
    if dtype == torch.bool:
        return [hvd.Sum, hvd.Min, hvd.Max, hvd.Product]
    if dtype.is_complex:
        return [hvd.Sum, hvd.Average]
    if dtype.is_floating_point:
        return list(OPS)
    return [hvd.Sum, hvd.Min, hvd.Max, hvd.Product]


def reference(tensors, op):
    dt = tensors[0].dtype
    if dt == torch.bool:
        st = torch.stack(tensors)
        return st.any(0) if op in (hvd.Sum, hvd.Max) else st.all(0)
    wide = torch.complex128 if dt.is_complex else torch.float64 if dt.is_floating_point else torch.int64
    st = torch.stack([t.to(wide) for t in tensors])
    if op == hvd.Sum:
        out = st.sum(0)
    elif op == hvd.Average:
        out = st.sum(0) / len(tensors)
    elif op == hvd.Min:
        out = st.min(0).values
    elif op == hvd.Max:
        out = st.max(0).values
    else:
        out = st.prod(0)
    return out.to(dt)


def allreduce_checks(c, r, p):
    shape = (5, 7)
    for dt in DTYPES:
        rt, at = tol(dt)
        for op in ops_for(dt):
            ins = [value(q, shape, dt, op, seed=1) for q in range(p)]
            want = reference(ins, op)
            x = ins[r].clone()
            got = hvd.allreduce(x, op=op)
            what = f"allreduce {dt} {OPS[op]}"
            c.close(got, want, what, rt, at)
            c.ok(torch.equal(x, ins[r]), f"{what}: the input changed")
            y = ins[r].clone()
            ptr = y.data_ptr()
            out = hvd.allreduce_(y, op=op)
            c.ok(out is y and y.data_ptr() == ptr, f"{what}: allreduce_ did not return its tensor")
            c.close(y, want, what + " in place", rt, at)
            h = hvd.allreduce_async(ins[r], op=op)
            c.close(hvd.synchronize(h), want, what + " async", rt, at)
            z = ins[r].clone()
            h = hvd.allreduce_async_(z, op=op)
            while not hvd.poll(h):
                pass
            hvd.synchronize(h)
            c.close(z, want, what + " async in place", rt, at)
        # grouped: two tensors of this dtype, fused as one unit
        op = hvd.Sum
        a = [value(q, (3,), dt, op, seed=2) for q in range(p)]
        b = [value(q, (2, 2), dt, op, seed=3) for q in range(p)]
        got = hvd.grouped_allreduce([a[r], b[r]], op=op)
        c.close(got[0], reference(a, op), f"grouped_allreduce {dt} [0]", rt, at)
        c.close(got[1], reference(b, op), f"grouped_allreduce {dt} [1]", rt, at)
        ga, gb = a[r].clone(), b[r].clone()
        hvd.synchronize(hvd.grouped_allreduce_async_([ga, gb], op=op))
        c.close(gb, reference(b, op), f"grouped_allreduce_async_ {dt}", rt, at)
    # A group of mixed dtypes: each member reduced in its own type.
    mixed = [[value(q, (3,), torch.float32, seed=6), value(q, (2,), torch.float64, seed=7),
              value(q, (5,), torch.float16, seed=8), value(q, (4,), torch.float32, seed=9)] for q in range(p)]
    got = hvd.grouped_allreduce(mixed[r], op=hvd.Sum)
    for i in range(4):
        c.close(got[i], reference([m[i] for m in mixed], hvd.Sum), f"grouped_allreduce of mixed dtypes [{i}]",
                1e-2 if mixed[r][i].dtype == torch.float16 else 1e-5, 1e-2 if mixed[r][i].dtype == torch.float16 else 1e-6)
        c.ok(got[i].dtype == mixed[r][i].dtype, f"grouped_allreduce of mixed dtypes [{i}] keeps its dtype")
    # Non-contiguous input, scale factors, fp16 compression, default op Average.
    base = [value(q, (4, 6), torch.float32, seed=4) for q in range(p)]
    t = base[r].t()
    c.ok(not t.is_contiguous(), "transposed tensor is not contiguous")
    c.close(hvd.allreduce(t, op=hvd.Sum), reference([b.t().contiguous() for b in base], hvd.Sum),
            "allreduce of a transposed tensor")
    tt = base[r].clone().t()
    hvd.allreduce_(tt, op=hvd.Sum)
    c.close(tt, reference([b.t().contiguous() for b in base], hvd.Sum), "allreduce_ of a transposed tensor")
    for dt in (torch.float32, torch.float64):
        ins = [value(q, (9,), dt, seed=5) for q in range(p)]
        got = hvd.allreduce(ins[r], op=hvd.Sum, prescale_factor=0.5, postscale_factor=3.0)
        c.close(got, reference(ins, hvd.Sum) * 1.5, f"allreduce {dt} prescale 0.5 postscale 3")
        got = hvd.grouped_allreduce([ins[r]], op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.25)
        c.close(got[0], reference(ins, hvd.Sum) * 0.5, f"grouped_allreduce {dt} scaled")
    c.close(hvd.allreduce(base[r]), reference(base, hvd.Average), "allreduce default op Average")
    c.close(hvd.allreduce(base[r], average=False), reference(base, hvd.Sum), "allreduce average=False")
    c.close(hvd.allreduce(base[r], compression=hvd.Compression.fp16, op=hvd.Sum),
            reference(base, hvd.Sum), "allreduce Compression.fp16", 1e-2, 1e-2)
    # Adasum (adasum_test.py covers it): Horovod refuses a non-power-of-two number of ranks.
    same = torch.linspace(-1.0, 2.0, 11)
    if p & (p - 1):
        c.raises(lambda: hvd.allreduce(same, op=hvd.Adasum), NotImplementedError, "non-power of 2",
                 "Adasum on a non-power-of-two world")
    else:
        c.close(hvd.allreduce(same, op=hvd.Adasum), same, "Adasum of identical tensors")


def gather_scatter_checks(c, r, p):
    for dt in DTYPES:
        rt, at = tol(dt)
        rows = [value(q, (q + 1, 3), dt, seed=6) for q in range(p)]
        c.close(hvd.allgather(rows[r]), torch.cat(rows), f"allgather {dt} ragged")
        c.close(hvd.synchronize(hvd.allgather_async(rows[r])), torch.cat(rows), f"allgather_async {dt}")
        other = [value(q, (2, 2), dt, seed=7) for q in range(p)]
        got = hvd.grouped_allgather([rows[r], other[r]])
        c.close(got[0], torch.cat(rows), f"grouped_allgather {dt} [0]")
        c.close(got[1], torch.cat(other), f"grouped_allgather {dt} [1]")
        for root in range(p):
            src = [value(q, (4,), dt, seed=8 + root) for q in range(p)]
            x = src[r].clone()
            got = hvd.broadcast(x, root)
            c.close(got, src[root], f"broadcast {dt} root {root}")
            c.ok(torch.equal(x, src[r]), f"broadcast {dt}: the input changed")
            hvd.broadcast_(x, root)
            c.close(x, src[root], f"broadcast_ {dt} root {root}")
            y = src[r].clone()
            hvd.synchronize(hvd.broadcast_async_(y, root))
            c.close(y, src[root], f"broadcast_async_ {dt}")
            c.close(hvd.synchronize(hvd.broadcast_async(src[r], root)), src[root], f"broadcast_async {dt}")
        # alltoall: rank q sends (d + 1) rows to rank d, row values tagged by sender.
        send = [torch.cat([value(q, (d + 1, 2), dt, seed=20 + d) for d in range(p)]) for q in range(p)]
        got, splits = hvd.alltoall(send[r], splits=[d + 1 for d in range(p)])
        want = torch.cat([value(q, (r + 1, 2), dt, seed=20 + r) for q in range(p)])
        c.close(got, want, f"alltoall {dt} with splits")
        c.ok(splits.tolist() == [r + 1] * p, f"alltoall {dt}: received splits {splits.tolist()}")
        even = [value(q, (2 * p, 1), dt, seed=30) for q in range(p)]
        got = hvd.synchronize(hvd.alltoall_async(even[r]))
        c.close(got, torch.cat([e[2 * r:2 * r + 2] for e in even]), f"alltoall_async {dt} even")
        if dt != torch.bool:
            op = hvd.Sum
            full = [value(q, (2 * p, 3), dt, op, seed=40) for q in range(p)]
            want = reference(full, op)[2 * r:2 * r + 2]
            c.close(hvd.reducescatter(full[r], op=op), want, f"reducescatter {dt} Sum", rt, at)
            c.close(hvd.synchronize(hvd.reducescatter_async(full[r], op=op)), want, f"reducescatter_async {dt}", rt, at)
            got = hvd.grouped_reducescatter([full[r], full[r]], op=op)
            c.close(got[1], want, f"grouped_reducescatter {dt}", rt, at)
            if dt.is_floating_point or dt.is_complex:
                c.close(hvd.reducescatter(full[r]), reference(full, hvd.Average)[2 * r:2 * r + 2],
                        f"reducescatter {dt} default Average", rt, at)


def process_set_checks(c, r, p):
    ranks = [0] if p == 1 else [0, p - 1]
    ps = hvd.add_process_set(ranks)
    c.ok(ps.process_set_id is not None and ps.process_set_id > 0, f"process set id {ps.process_set_id}")
    if r in ranks:
        got = hvd.allreduce(torch.tensor([float(r + 1)]), op=hvd.Sum, process_set=ps)
        c.close(got, torch.tensor([float(sum(q + 1 for q in ranks))]), "allreduce in a process set")
        got = hvd.allgather(torch.tensor([r]), process_set=ps)
        c.close(got, torch.tensor(ranks), "allgather in a process set")
        c.ok(ps.rank() == ranks.index(r) and ps.size() == len(ranks), "ProcessSet rank/size")
    else:
        c.raises(lambda: hvd.allreduce(torch.ones(1), process_set=ps), hvd.HvdError, "not a member",
                 "allreduce outside the set")
    hvd.remove_process_set(ps)
    c.raises(lambda: hvd.allreduce(torch.ones(1), process_set=ps), ValueError, "was not added",
             "allreduce in a removed set")
    hvd.barrier()
    last = hvd.join()
    c.ok(0 <= last < p, f"join returned {last}")


def helper_checks(c, r, p):
    c.ok(hvd.broadcast_object({"from": r, "list": [1, 2]}, root_rank=0) == {"from": 0, "list": [1, 2]},
         "broadcast_object")
    c.ok(hvd.allgather_object(("rank", r)) == [("rank", q) for q in range(p)], "allgather_object")
    # The usual idiom: only the root has the object, the others pass None (tensor names
    # must not depend on the object's type, or the ranks never match: a hang).
    for root in range(p):
        got = hvd.broadcast_object({"epoch": 3, "root": root} if r == root else None, root_rank=root)
        c.ok(got == {"epoch": 3, "root": root}, f"broadcast_object from {root}, None elsewhere: {got!r}")
    got = hvd.broadcast_object([1, 2] if r == 0 else "not a list", 0)
    c.ok(got == [1, 2], f"broadcast_object of objects of different types: {got!r}")
    mixed = {"r": r} if r % 2 == 0 else None
    c.ok(hvd.allgather_object(mixed) == [{"r": q} if q % 2 == 0 else None for q in range(p)],
         "allgather_object of objects of different types")
    torch.manual_seed(r)  # rank-divergent init
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    for (n, a), (_, b) in zip(model.state_dict().items(), ref.state_dict().items()):
        c.close(a, b, f"broadcast_parameters {n}", 0, 0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 * (r + 1), momentum=0.5 + 0.1 * r)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    c.ok(opt.param_groups[0]["lr"] == 0.1 and abs(opt.param_groups[0]["momentum"] - 0.5) < 1e-12,
         f"broadcast_optimizer_state options: {opt.param_groups[0]['lr']}, {opt.param_groups[0]['momentum']}")
    # A fresh Adam inside a DistributedOptimizer: its state is made (without an allreduce)
    # and the root's, options included, is everyone's; training then goes on.
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    dopt = hvd.DistributedOptimizer(torch.optim.Adam(lin.parameters(), lr=0.01 * (r + 1)),
                                    named_parameters=lin.named_parameters())
    hvd.broadcast_optimizer_state(dopt, root_rank=0)
    c.ok(dopt.param_groups[0]["lr"] == 0.01 and len(dopt.state) == 2,
         f"broadcast_optimizer_state of a fresh Adam: lr {dopt.param_groups[0]['lr']}, {len(dopt.state)} states")
    dopt.zero_grad()
    lin(torch.ones(4, 3) * (r + 1)).sum().backward()
    dopt.step()
    w = hvd.allgather(lin.weight.detach().flatten().unsqueeze(0))
    c.ok(all(torch.equal(w[0], w[k]) for k in range(p)), "weights equal on every rank after a step")


def error_checks(c, r, p):
    # Not a dense tensor: a clear TypeError / ValueError, before anything is submitted.
    c.raises(lambda: hvd.allreduce([1, 2, 3]), TypeError, "expected a dense torch.Tensor, got list",
             "allreduce of a list")
    c.raises(lambda: hvd.allreduce_async_([1.0]), TypeError, "expected a dense torch.Tensor", "allreduce_async_ of a list")
    sparse = torch.ones(2).to_sparse()
    for fn in (hvd.allreduce, hvd.allreduce_, hvd.allgather, lambda t: hvd.broadcast(t, 0)):
        c.raises(lambda: fn(sparse), ValueError, "sparse_allreduce_async", "collective of a sparse tensor")
    if p < 2:
        return
    # Mismatched shapes: every rank raises with the runtime's message, and the runtime
    # keeps working afterwards.
    c.raises(lambda: hvd.allreduce(torch.ones(3 if r == 1 else 4), name="bad.shape"), hvd.HvdError,
             "Mismatched allreduce tensor shapes", "mismatched allreduce shapes")
    c.raises(lambda: hvd.allgather(torch.ones(2, 3 if r == 0 else 2), name="bad.gather"), hvd.HvdError,
             "Mismatched allgather tensor shapes", "mismatched allgather shapes")
    c.raises(lambda: hvd.allreduce(torch.ones(2, dtype=torch.float64 if r == 0 else torch.float32),
                                   name="bad.dtype"), hvd.HvdError, "Mismatched data types",
             "mismatched dtypes")
    c.raises(lambda: hvd.broadcast(torch.ones(2), root_rank=r % 2, name="bad.root"), hvd.HvdError,
             "Mismatched broadcast root", "mismatched broadcast roots")
    c.raises(lambda: hvd.grouped_allreduce([torch.ones(2), torch.ones(2 + (r == 0))], name="bad.group"),
             hvd.HvdError, "Mismatched allreduce tensor shapes", "mismatched shape in a group")
    c.raises(lambda: hvd.broadcast(torch.ones(2), root_rank=p + 3), hvd.HvdError, "outside",
             "broadcast root out of range")
    c.close(hvd.allreduce(torch.ones(2), op=hvd.Sum, name="after.errors"), torch.full((2,), float(p)),
            "allreduce after the errors")


def build_and_init_checks(c, r, p):
    """Horovod's queries of what is built, and their answers after init."""
    tcp = os.environ.get("HVD_CONTROLLER") == "tcp"  # hvdrun --tcp: no MPI in this job
    c.ok(hvd.mpi_built() is True and hvd.mpi_enabled() is not tcp, "mpi_built / mpi_enabled")
    c.ok(hvd.mpi_threads_supported() is not tcp, "mpi_threads_supported (the runtime asks for MPI_THREAD_MULTIPLE)")
    c.ok(hvd.gloo_built() is True and hvd.gloo_enabled() is tcp, "gloo_built / gloo_enabled (the TCP backend)")
    c.ok(not any(f() for f in (hvd.ddl_built, hvd.ccl_built, hvd.cuda_built,
                               hvd.rocm_built)) and hvd.nccl_built() == 0, "no NCCL, CUDA, ROCm, DDL, oneCCL")
    # broadcast_parameters takes a list of parameters, or of (name, parameter) pairs.
    params = [torch.full((3,), float(r)), torch.full((2, 2), 10.0 + r)]
    hvd.broadcast_parameters(params, root_rank=0)
    c.ok(all(torch.equal(t, torch.full_like(t, v)) for t, v in zip(params, (0.0, 10.0))), "broadcast_parameters(list)")
    pairs = [("a", torch.full((2,), float(r)))]
    hvd.broadcast_parameters(pairs, root_rank=p - 1)
    c.ok(torch.equal(pairs[0][1], torch.full((2,), float(p - 1))), "broadcast_parameters([(name, p)])")


def main():
    for q in (hvd.rank, hvd.size, hvd.local_rank, hvd.cross_size):
        try:
            q()
            raise SystemExit(f"ops_test: {q.__name__}() before init did not raise")
        except ValueError as e:
            assert "not been initialized" in str(e), e
    hvd.init()
    c = Checks("ops_test")
    r, p = hvd.rank(), hvd.size()
    c.run(build_and_init_checks, c, r, p)
    for fn in (allreduce_checks, gather_scatter_checks, process_set_checks, helper_checks, error_checks):
        c.run(fn, c, r, p)
    sys.exit(c.finish())


if __name__ == "__main__":
    main()
