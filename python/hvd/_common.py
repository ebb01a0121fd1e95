"""What every framework binding of hvd shares (Horovod's horovod.common basics): the one
runtime of the process (init, shutdown, rank, size, ...), the build queries, the reduction
ops, process sets and the automatic names of unnamed tensors. hvd.torch and hvd.tensorflow
re-export these; a process may import both, and they then share the runtime and the sets."""
import atexit
import os
import pickle
import sys

from hvd import HvdError, HvdInvalidArgument, _core

# Reduction ops, numbered as the runtime's ReduceOp.
Average, Sum, Min, Max, Product = 0, 1, 2, 3, 4
Adasum = 5  # allreduce of float16/32/64 over a power-of-two number of ranks (docs/python.md)
OP_NAMES = {Average: "Average", Sum: "Sum", Min: "Min", Max: "Max", Product: "Product", Adasum: "Adasum"}


class ProcessSet:
    """A subset of the ranks that runs collectives of its own (``add_process_set``)."""

    def __init__(self, ranks=None):
        self.ranks = None if ranks is None else sorted(int(r) for r in ranks)
        self.process_set_id = 0 if ranks is None else None

    def size(self):
        return _core.size() if self.ranks is None else len(self.ranks)

    def rank(self):
        """This process's rank within the set (-1 when not a member)."""
        me = _core.rank()
        if self.ranks is None:
            return me
        return self.ranks.index(me) if me in self.ranks else -1

    def included(self):
        return self.rank() >= 0

    def __repr__(self):
        return f"ProcessSet(process_set_id={self.process_set_id}, ranks={self.ranks})"


global_process_set = ProcessSet()


def _set_id(process_set):
    if process_set is None:
        return 0
    if process_set.process_set_id is None:
        raise ValueError(f"hvd: {process_set!r} was not added (hvd.add_process_set) or was removed")
    return process_set.process_set_id


def add_process_set(process_set):
    """Collective: registers a ProcessSet (or a list of ranks); returns the ProcessSet."""
    if not isinstance(process_set, ProcessSet):
        process_set = ProcessSet(process_set)
    process_set.process_set_id = _core.add_process_set(process_set.ranks)
    _sets[process_set.process_set_id] = process_set
    return process_set


def remove_process_set(process_set):
    """Collective: removes a set added by add_process_set. Returns True."""
    _core.remove_process_set(_set_id(process_set))
    _sets.pop(process_set.process_set_id, None)
    process_set.process_set_id = None
    return True


_sets = {0: global_process_set}  # id -> the ProcessSet added under it


def process_set_by_id(process_set_id):
    """The ProcessSet added under ``process_set_id`` (0: the global set); ValueError if none."""
    try:
        return _sets[int(process_set_id)]
    except KeyError:
        raise ValueError(f"hvd: no process set has id {process_set_id} (was it added, or removed?)") from None


_atexit_registered = False
# What a framework module adds to init() and shutdown() (hvd.torch: its trace recorder;
# hvd.tensorflow: nothing to undo). Every framework imported in the process shares the
# one runtime, so each hook runs whichever module's init() was called.
_init_hooks = []
_shutdown_hooks = []


def init(comm=None, process_sets=None):
    """Starts the runtime (TCP world under hvdrun --tcp, MPI world under mpirun/hvdrun, else one rank). Knobs come from
    HVD_*/HOROVOD_* variables (e.g. HOROVOD_TIMELINE)."""
    if comm is not None:
        raise ValueError("hvd.init: comm is not supported (the world is MPI_COMM_WORLD)")
    fresh = not _core.is_initialized()
    _core.init()
    if fresh:  # a new world (an elastic reset, say): every member counts unnamed tensors from 0
        _noname.clear()
        for ps in list(_sets.values())[1:]:  # the old world's sets are gone with it
            ps.process_set_id = None
        _sets.clear()
        _sets[0] = global_process_set
    global _atexit_registered
    if not _atexit_registered:  # like Horovod: a script that never calls shutdown() ends cleanly
        atexit.register(_shutdown_at_exit)
        _atexit_registered = True
    for ps in process_sets or []:
        add_process_set(ps)
    for hook in _init_hooks:
        hook()


def shutdown():
    for hook in _shutdown_hooks:
        hook()
    _core.shutdown()


def _shutdown_at_exit():
    """The shutdown a script did not call. A runtime that failed (a lost rank, say) reports
    its failure here once more: one line instead of a second traceback, and exit code 1, so
    that a failure the script never saw is not lost either."""
    if not _core.is_initialized():
        return
    try:
        shutdown()
    except HvdError as e:
        print(f"hvd: shutdown at exit: {e}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


is_initialized = _core.is_initialized


def _initialized(query):
    """``query`` of the runtime; before init() raises ValueError, as Horovod does."""
    def f():
        if not _core.is_initialized():
            raise ValueError("Horovod has not been initialized; use hvd.init().")
        return query()
    f.__name__ = query.__name__
    f.__doc__ = f"The runtime's {query.__name__}() (ValueError before hvd.init())."
    return f


rank = _initialized(_core.rank)
size = _initialized(_core.size)
local_rank = _initialized(_core.local_rank)
local_size = _initialized(_core.local_size)
cross_rank = _initialized(_core.cross_rank)
cross_size = _initialized(_core.cross_size)

# ---------------------------------------------------------------------------------------
# What this build has (Horovod's *_built / *_enabled queries). hvd.torch runs CPU tensors
# over the runtime: MPI when built with it (else one rank), or the TCP backend, which stands
# for Gloo; no NCCL, CUDA, ROCm, DDL or oneCCL in this binding.


def mpi_built(verbose=False):
    """True when the runtime was built with MPI (then it runs over MPI_COMM_WORLD)."""
    return bool(_core.mpi_built)


def _tcp_launched():
    """hvdrun --tcp (or --gloo) started this process: the TCP backend carries the job."""
    return os.environ.get("HVD_CONTROLLER", os.environ.get("HOROVOD_CONTROLLER", "")) in ("tcp", "gloo")


def mpi_enabled():
    """True when MPI carries this job: built with MPI and not started by hvdrun --tcp."""
    return bool(_core.mpi_built) and not _tcp_launched()


def mpi_threads_supported():
    """True when MPI runs with MPI_THREAD_MULTIPLE (ValueError before hvd.init())."""
    if not _core.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    return bool(_core.mpi_threads_supported())


def gloo_built(verbose=False):
    """True: the TCP backend (hvdrun --tcp, Horovod's Gloo controller) is always built."""
    return True


def gloo_enabled():
    """True when hvdrun --tcp (or --gloo) started this job."""
    return _tcp_launched()


def nccl_built(verbose=False):
    """0: hvd.torch has no NCCL path (Horovod returns NCCL's version where it has one)."""
    return 0


def ddl_built(verbose=False):
    return False


def ccl_built(verbose=False):
    return False


def cuda_built(verbose=False):
    return False


def rocm_built(verbose=False):
    return False

def is_homogeneous():
    """True when every node runs the same number of ranks (size = local_size x nodes)."""
    return _core.size() == _core.local_size() * _core.cross_size()


# ---------------------------------------------------------------------------------------
# Automatic names and checks shared by the collectives

_noname = {}  # (kind, process set id) -> counter: unnamed tensors match among the set's members


def _name(kind, name, process_set=None):
    """``name``, or the next automatic name of the set: every member makes the same calls in
    the same order, so the n-th unnamed tensor of a set has the same name on every member
    (a counter per set, since members of one set must not count the others' calls, and per
    kind, so that a call only some ranks made, e.g. an allgather that raised because a rank
    had joined, does not shift the names of the other kinds: allgather_object after it)."""
    if name is not None:
        return name
    sid = _set_id(process_set)
    n = _noname.get((kind, sid), 0)
    _noname[(kind, sid)] = n + 1
    return f"{kind}.noname.{n}" if sid == 0 else f"{kind}.noname.set{sid}.{n}"


def _set_root(root_rank, process_set, fn):
    """The set's rank of ``root_rank``: roots are global ranks, as in Horovod (a member of
    the set); the runtime takes the rank within the set."""
    root = int(root_rank)
    if process_set is None or process_set.ranks is None:
        return root
    if root not in process_set.ranks:
        raise HvdInvalidArgument(f"hvd.{fn}: root rank {root} is not a member of {process_set!r} "
                                 "(root_rank is a global rank)")
    return process_set.ranks.index(root)


def _check_adasum(process_set, fn):
    """Horovod's check: Adasum needs a power-of-two number of ranks (here the set's)."""
    n = process_set.size()
    if n < 1 or n & (n - 1):
        raise NotImplementedError(f"hvd.{fn}: Running Adasum with non-power of 2 ranks is not supported "
                                  f"yet ({n} ranks)")


# ---------------------------------------------------------------------------------------
# Objects: pickled on one side, carried as bytes by the framework's own collectives


def broadcast_object_bytes(obj, is_root, bcast_size, bcast_bytes):
    """The root's ``obj`` on every rank. ``bcast_size(n)`` broadcasts the root's byte count,
    ``bcast_bytes(data)`` the root's bytes (``data`` is a zero buffer of that size elsewhere)."""
    payload = pickle.dumps(obj) if is_root else b""
    n = int(bcast_size(len(payload)))
    return pickle.loads(bcast_bytes(payload if is_root else bytes(n)))


def allgather_object_bytes(obj, gather_sizes, gather_bytes):
    """Every rank's ``obj`` in rank order: ``gather_sizes(n)`` allgathers the byte counts,
    ``gather_bytes(data)`` the bytes."""
    data = pickle.dumps(obj)
    sizes = [int(n) for n in gather_sizes(len(data))]
    raw = gather_bytes(data)
    out, off = [], 0
    for n in sizes:
        out.append(pickle.loads(raw[off:off + n]))
        off += n
    return out


def _env_int(var, default):
    v = os.environ.get(var)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"{var}: {v[:60]!r} is not an integer") from None


def record_trace_from_env(record_trace, active):
    """Starts ``record_trace`` (a framework's) as HVD_RECORD_TRACE and its companions ask,
    unless ``active`` (a recording runs already)."""
    path = os.environ.get("HVD_RECORD_TRACE")
    if path and not active:
        record_trace(path, steps=_env_int("HVD_RECORD_TRACE_STEPS", 10),
                     warmup=_env_int("HVD_RECORD_TRACE_WARMUP", 3),
                     batch_size=_env_int("HVD_RECORD_TRACE_BATCH", 1),
                     reference_gpu=os.environ.get("HVD_RECORD_TRACE_GPU", "P100"))


def model_trace(samples, tensors, *, recorder, name, warmup, rank_count, sample_unit, reference_gpu,
                batch_size, note=""):
    """The hvd-model-trace document (docs/formats.md, "no layers" form) of recorded steps, as
    both bindings' recorders write it. ``samples``: one dict a step with ``step_s``,
    ``bwd_s``, ``sync_s`` (the wait for communication) and ``ready`` ({tensor: seconds after
    backward started}); ``tensors``: {tensor: (trace name, elements, dtype, shape)} in the
    order first seen. Medians over the steps; fwd_s is the step less backward and the wait."""
    import socket
    import statistics
    med = statistics.median
    step_s = med(s["step_s"] for s in samples)
    bwd_s = med(s["bwd_s"] for s in samples)
    sync_s = med(s["sync_s"] for s in samples)
    fwd_s = max(0.0, med(s["step_s"] - s["bwd_s"] - s["sync_s"] for s in samples))
    order = list(tensors)
    ready = {n: min(bwd_s, med(s["ready"][n] for s in samples if n in s["ready"]))
             for n in order if any(n in s["ready"] for s in samples)}
    out = []
    for n in sorted(ready, key=lambda n: (ready[n], order.index(n))):
        trace_name, elements, dtype, shape = tensors[n]
        t = {"name": trace_name, "elements": elements, "dtype": dtype, "ready_s": round(ready[n], 9)}
        if shape:
            t["shape"] = shape
        out.append(t)
    return {
        "format": "hvd-model-trace", "version": 1,
        "name": name,
        "description": (f"recorded by {recorder} on {socket.gethostname()} at np {rank_count}: "
                        f"median of {len(samples)} steps after {warmup} warm-up; "
                        f"measured step {step_s:.6f} s, of which {sync_s:.6f} s waiting for "
                        f"communication{note}"),
        "sample_unit": sample_unit,
        "reference_gpu": reference_gpu,
        "reference_batch": int(batch_size),
        "reference_source": f"measured ({recorder}.record_trace); times are this machine's",
        "fwd_s": round(fwd_s, 9), "bwd_s": round(bwd_s, 9),
        "tensors": out,
    }


def write_json(path, doc):
    """Writes ``doc`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    import json
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
