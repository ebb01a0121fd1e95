"""Recording a training run's gradient traffic as a model trace (docs/formats.md, the
hvd-model-trace JSON that hvdbench --model and hvdsim workload.trace read).

Per step it measures: when backward starts and ends (torch.autograd.backward), when each
gradient is ready (DistributedOptimizer's hooks; name = the parameter's, elements, dtype),
and how long step() waited for communication. The trace (rank 0 writes it once the steps
are recorded) gives per-step medians, in the trace's "no layers" form:

  bwd_s     backward, from its call to its return
  ready_s   each gradient's hook time after backward started
  fwd_s     everything else the step computes (data, forward, loss, optimizer update):
            step time - backward - the wait for communication in step()

so that replaying it on one rank gives the measured step time again.
"""
import os
import time

import torch

from hvd import _common

_rec = None  # the active recorder


class _Recorder:
    def __init__(self, path, steps, warmup, batch_size, name, reference_gpu, sample_unit):
        if steps < 1 or warmup < 0:
            raise ValueError("record_trace: steps must be >= 1 and warmup >= 0")
        self.path, self.steps, self.warmup = path, steps, warmup
        self.batch_size, self.name = batch_size, name
        self.reference_gpu, self.sample_unit = reference_gpu, sample_unit
        self.tensors = {}      # name -> (elements, dtype, shape), first-seen order
        self.samples = []      # recorded steps
        self.seen_steps = 0
        self.prev_end = None
        self._new_step()
        self._orig_backward = torch.autograd.backward
        rec = self

        def backward(*args, **kwargs):
            t0 = time.perf_counter()
            if rec.bwd_start is None:
                rec.bwd_start = t0
            try:
                return rec._orig_backward(*args, **kwargs)
            finally:
                rec.bwd_time += time.perf_counter() - t0
        torch.autograd.backward = backward

    def _new_step(self):
        self.bwd_start = None
        self.bwd_time = 0.0
        self.ready = {}
        self.sync_start = None
        self.sync_s = 0.0

    def gradient_ready(self, name, grad):
        now = time.perf_counter()
        if name not in self.tensors:
            dtype = str(grad.dtype).replace("torch.", "")
            self.tensors[name] = (grad.numel(), dtype, list(grad.shape))
        start = self.bwd_start if self.bwd_start is not None else now
        self.ready[name] = now - start

    def step_done(self):
        now = time.perf_counter()
        if self.prev_end is not None and self.bwd_start is not None:
            self.seen_steps += 1
            if self.seen_steps > self.warmup:
                self.samples.append({"step_s": now - self.prev_end, "bwd_s": self.bwd_time,
                                     "sync_s": self.sync_s, "ready": dict(self.ready)})
        self.prev_end = now
        self._new_step()
        if len(self.samples) >= self.steps:
            self.finish()

    def document(self, rank_count):
        tensors = {n: (n, e, dt, shape) for n, (e, dt, shape) in self.tensors.items()}
        return _common.model_trace(self.samples, tensors, recorder="hvd.torch", name=self.name,
                                   warmup=self.warmup, rank_count=rank_count, sample_unit=self.sample_unit,
                                   reference_gpu=self.reference_gpu, batch_size=self.batch_size)

    def finish(self):
        global _rec
        torch.autograd.backward = self._orig_backward
        if _rec is self:
            _rec = None
        if not self.samples:
            return
        from hvd.torch import mpi_ops
        up = mpi_ops.is_initialized()  # a trace may be recorded without hvd.init()
        if not up or mpi_ops.rank() == 0:
            _common.write_json(self.path, self.document(mpi_ops.size() if up else 1))


def record_trace(path, steps=10, warmup=3, batch_size=1, name=None, reference_gpu="P100",
                 sample_unit="samples"):
    """Records the next ``warmup + steps`` optimizer steps of a DistributedOptimizer and
    writes the model trace to ``path`` (rank 0). ``batch_size``: samples per rank and step;
    ``reference_gpu``: the catalogue GPU the times stand for (hvdsim scales compute from it
    to the scenario's GPU: naming the scenario's keeps the measured times)."""
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


def _gradient_ready(name, grad):
    if _rec is not None:
        _rec.gradient_ready(name, grad)


def _before_synchronize():
    if _rec is not None:
        _rec.sync_start = time.perf_counter()


def _after_synchronize():
    if _rec is not None and _rec.sync_start is not None:
        _rec.sync_s += time.perf_counter() - _rec.sync_start


def _step_done():
    if _rec is not None:
        _rec.step_done()
