"""Recording a TensorFlow run's gradient traffic as a model trace (docs/formats.md, the
hvd-model-trace JSON that hvdbench --model and hvdsim workload.trace read), as
hvd.torch.record_trace does for torch.

Inside ``tf.function`` no Python runs per step, so the times come from the runtime's side:
``hvd._core`` notes when each allreduce kernel hands its tensor over (TensorFlow's executor
runs a gradient's allreduce as soon as the gradient is computed: that is when it is ready)
and when the runtime finishes it. DistributedGradientTape and the DistributedOptimizers
register, when they build their graph, which allreduce node carries which variable's
gradient; the recording keeps those and nothing else (metric averages, broadcasts).

Steps: a step starts when a gradient already seen in the current step is handed over again.
Per step, as medians over the recorded steps:

  ready_s   each gradient's hand-over time after the step's first one
  bwd_s     the last gradient's ready_s (backward ends with the last gradient it computes)
  sync_s    from the last hand-over to the last allreduce's end (what the update waits for)
  fwd_s     everything else the step computes: from one step's first gradient to the
            next's, minus bwd_s and sync_s

so that one simulated rank takes the measured step. The backward time before the first
gradient (the last layer's) is counted in fwd_s: no op marks the start of backward in a
graph. Gradients that travel as allgathers (tf.IndexedSlices without sparse_as_dense) are
not allreduces: they are left out, and the trace's description says how many.
"""
import os

from hvd import _common, _core

_MAX_EVENTS = 1 << 20   # allreduces recorded at most (about 100 MB at the worst)
_rec = None             # the active recorder
_gradients = {}         # allreduce node (member) name -> the variable's name, as graphs register them
_sparse = set()         # variables whose gradients were allgathered


def _variable_name(v, i):
    name = getattr(v, "path", None) or getattr(v, "name", None) or f"gradient{i}"
    return name[:-2] if name.endswith(":0") else name


def _allreduce_members(t, depth=12):
    """The hvd allreduce nodes (and member index of a grouped one) that produce ``t``, found by
    walking back from it through the ops the reduction adds after the collective (casts of
    the compression, the postscale)."""
    found, frontier, seen = [], [(t, 0)], set()
    while frontier:
        x, d = frontier.pop()
        if x.ref() in seen or d > depth:
            continue
        seen.add(x.ref())
        op = x.op
        if op.type in ("HvdAllreduce", "HvdGroupedAllreduce"):
            n = len(op.inputs) - 1   # the data inputs; the last input is the tensor name
            found.append(op.name if n == 1 else f"{op.name}.{x.value_index}")
            continue
        if op.type.startswith("Hvd"):
            continue
        frontier.extend((i, d + 1) for i in op.inputs)
    return found


def variable_names(variables):
    """The names a trace gives the gradients of ``variables`` (None: by position)."""
    if variables is None:
        return None
    names, seen = [], {}
    for i, v in enumerate(variables):
        n = _variable_name(v, i)
        seen[n] = seen.get(n, 0) + 1
        names.append(n if seen[n] == 1 else f"{n}_{seen[n] - 1}")  # unnamed tf.Variables
    return tuple(names)


def register_gradients(outputs, names):
    """Called while a gradient reduction builds its graph: which allreduce node reduces which
    variable's gradient (``outputs[i]`` is the reduced gradient of the variable ``names[i]``)."""
    import tensorflow as tf
    if tf.executing_eagerly():
        return
    for i, out in enumerate(outputs):
        if out is None:
            continue
        name = names[i] if names is not None and i < len(names) else f"gradient{i}"
        if isinstance(out, tf.IndexedSlices):
            _sparse.add(name)
            continue
        for member in _allreduce_members(out):
            _gradients[member] = name


def _variable_of(event_name):
    """The registered variable whose allreduce node is ``event_name``: the kernel's name is the
    node's, possibly under the scopes of the functions TensorFlow inlined it into."""
    if event_name in _gradients:
        return _gradients[event_name]
    for member, var in _gradients.items():
        if event_name.endswith("/" + member):
            return var
    return None


def _steps(events):
    """The gradient events cut into steps: [{variable: (enqueued_s, done_s, dtype, shape)}]."""
    steps, current = [], {}
    for name, dtype, shape, enq, done in events:
        var = _variable_of(name)
        if var is None:
            continue
        if var in current:
            steps.append(current)
            current = {}
        current[var] = (enq, done, dtype, list(shape))
    if current:
        steps.append(current)
    return steps


class _Recorder:
    def __init__(self, path, steps, warmup, batch_size, name, reference_gpu, sample_unit):
        if steps < 1 or warmup < 0:
            raise ValueError("record_trace: steps must be >= 1 and warmup >= 0")
        self.path, self.steps, self.warmup = path, steps, warmup
        self.batch_size, self.name = batch_size, name
        self.reference_gpu, self.sample_unit = reference_gpu, sample_unit
        self.done = False
        _core.trace_start(_MAX_EVENTS)

    def document(self, steps, rank_count):
        """The trace of ``steps`` (each followed by the next one's start)."""
        samples = []
        for cur, nxt in zip(steps, steps[1:]):
            start = min(e[0] for e in cur.values())
            ready = {v: e[0] - start for v, e in cur.items()}
            bwd = max(ready.values())
            last_done = max(e[1] for e in cur.values())
            sync = max(0.0, last_done - (start + bwd)) if last_done >= 0 else 0.0
            step = min(e[0] for e in nxt.values()) - start
            samples.append({"step_s": step, "bwd_s": bwd, "sync_s": sync, "ready": ready})
        samples = samples[self.warmup:self.warmup + self.steps]
        if not samples:
            return None
        tensors = {}
        for v, (_, _, dtype, shape) in steps[0].items():
            elements = 1
            for d in shape:
                elements *= d
            tensors[v] = (f"allreduce.{v}", elements, dtype, shape)
        left_out = (f"; {len(_sparse)} gradient(s) allgathered as tf.IndexedSlices left out "
                    f"({', '.join(sorted(_sparse))})" if _sparse else "")
        return _common.model_trace(samples, tensors, recorder="hvd.tensorflow", name=self.name,
                                   warmup=self.warmup, rank_count=rank_count, sample_unit=self.sample_unit,
                                   reference_gpu=self.reference_gpu, batch_size=self.batch_size, note=left_out)

    def finish(self):
        """Ends the recording and writes the trace (rank 0; nothing when fewer than warmup + 1
        complete steps were seen). Returns the path written, else None."""
        global _rec
        if self.done:
            return None
        self.done = True
        if _rec is self:
            _rec = None
        events = _core.trace_stop()
        up = _core.is_initialized()
        if up and _core.rank() != 0:
            return None
        doc = self.document(_steps(events), _core.size() if up else 1)
        if doc is None:
            return None
        _common.write_json(self.path, doc)
        return self.path


def record_trace(path, steps=10, warmup=3, batch_size=1, name=None, reference_gpu="P100",
                 sample_unit="samples"):
    """Records the gradient allreduces of DistributedGradientTape / DistributedOptimizer steps
    until ``finish()`` (or hvd.shutdown(), or the process's end) and writes the model trace
    of steps ``warmup`` .. ``warmup + steps`` to ``path`` (rank 0). ``batch_size``: samples
    per rank and step; ``reference_gpu``: the catalogue GPU the times stand for (hvdsim
    scales compute from it to the scenario's GPU: naming the scenario's keeps the times)."""
    global _rec
    if _rec is not None:
        _rec.finish()
    name = name or os.path.splitext(os.path.basename(path))[0] or "recorded"
    _rec = _Recorder(path, int(steps), int(warmup), int(batch_size), name, reference_gpu, sample_unit)
    return _rec


def _start_from_env():
    _common.record_trace_from_env(record_trace, _rec is not None)


def _finish():
    if _rec is not None:
        _rec.finish()
