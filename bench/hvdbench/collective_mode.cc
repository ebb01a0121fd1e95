// Collective mode, nccl-tests style: for each size, `rounds` rounds of the peers (the MPI
// baseline, collective_mpi.cc; or NCCL's, collective_nccl.cc) and the hvd runtime's full API
// back to back; the median round of each goes in the table (collective_table.cc), with the
// results checked (collective_check.cc) under --check.
#include <iostream>

#include "bench_world.h"
#include "collective_parts.h"
#include "gpu_world.h"

namespace hvd::bench {

Operands::Operands(RankRuntime& rr, size_t bytes)
    : gpu_(rr.device_kind() == DeviceKind::kGPU), dev_(rr.device()), bytes_(bytes) {
  if (!gpu_) {
    host_in_ = std::make_unique<Buffer>(bytes);
    host_out_ = std::make_unique<Buffer>(bytes);
    in_ = host_in_->p;
    out_ = host_out_->p;
    return;
  }
  in_ = dev_.allocate(std::max<size_t>(bytes, 1));
  out_ = dev_.allocate(std::max<size_t>(bytes, 1));
  staging_ = std::make_unique<Buffer>(bytes);
}

Operands::~Operands() {
  if (!gpu_) return;
  dev_.synchronize();
  dev_.release(in_);
  dev_.release(out_);
}

Status Operands::fill(const Case& c) {
  fill_input(c, gpu_ ? staging_->p : in_);
  return gpu_ ? gpu_copy(in_, staging_->p, static_cast<size_t>(c.in_count()) * c.es) : Status::OK();
}

Status Operands::clear_output() {
  if (!gpu_) {
    std::memset(out_, 0, bytes_);
    return Status::OK();
  }
  std::memset(staging_->p, 0, bytes_);
  return gpu_copy(out_, staging_->p, bytes_);
}

Status Operands::count_wrong_at(const Case& c, const void* result, size_t bytes, ReduceOp rop, int64_t* wrong) {
  const void* host = result;
  if (gpu_) {
    HVD_RETURN_IF_ERROR(gpu_copy(staging_->p, result, std::min(bytes, bytes_)));
    host = staging_->p;
  }
  *wrong = count_wrong(c, host, rop);
  return Status::OK();
}

Status max_over_ranks(Runtime& rt, double* t) {
  return rt.allreduce("hvdbench.time", Tensor{t, DataType::kFloat64, {1}},
                      Tensor{t, DataType::kFloat64, {1}}, ReduceOp::kMax);
}

Status sum_over_ranks(Runtime& rt, const char* name, int64_t* v) {
  double d = static_cast<double>(*v);
  Status s = rt.allreduce(name, Tensor{&d, DataType::kFloat64, {1}},
                          Tensor{&d, DataType::kFloat64, {1}}, ReduceOp::kSum);
  *v = static_cast<int64_t>(d);
  return s;
}

namespace {

// Phase 2: the same operation through the hvd runtime's public API, on host tensors or,
// with --device gpu, on device tensors (a handle completes once the GPU work is done: the
// executor synchronises the device before completing GPU responses, so the host clock
// around a blocking call times the whole collective).
Status measure_hvd(const Options& o, const Case& c, RankRuntime& rr, Operands& mem,
                   Measurement* m) {
  Runtime& rt = rr.runtime();
  const std::string name = "hvdbench." + c.op + "." + std::to_string(c.bytes());
  const void* result = mem.out();
  size_t result_bytes = static_cast<size_t>(c.bytes());
  Handle keep;  // runtime-allocated output of the last call
  auto once = [&]() -> Status {
    Tensor t{mem.in(), c.dt, {c.in_count()}, mem.kind()};
    if (c.op == "allreduce")
      return rt.allreduce(name, t, Tensor{mem.out(), c.dt, {c.count}, mem.kind()}, c.rop);
    if (c.op == "broadcast") return rt.broadcast(name, t, 0);
    Handle h = c.op == "allgather" ? rt.allgather_async(name, t)
               : c.op == "alltoall" ? rt.alltoall_async(name, t, {})
                                    : rt.reducescatter_async(name, t, c.rop);
    Status s = h->wait();
    keep = h;
    result = h->output();
    result_bytes = h->output_bytes();
    return s;
  };
  auto barrier = [&] { return rt.barrier(); };
  auto max = [&](double* t) { return max_over_ranks(rt, t); };
  Status s;
  if (o.check) s = mem.fill(c);
  if (!s.ok()) return s;
  HVD_RETURN_IF_ERROR(time_loop(o, once, barrier, max, &m->us));
  m->ran = true;
  if (o.check) {
    s = mem.fill(c);
    if (s.ok()) s = mem.clear_output();
    if (s.ok()) s = once();
    if (!s.ok()) return s;
    if (c.op == "broadcast") result = mem.in();
    int64_t wrong = 0;
    HVD_RETURN_IF_ERROR(mem.count_wrong_at(c, result, result_bytes, c.rop, &wrong));
    s = sum_over_ranks(rt, "hvdbench.wrong", &wrong);
    m->wrong = wrong;
  }
  return s;
}

// The median round (time) of one variant; wrong counts add up over the rounds.
Measurement median_of_rounds(const std::vector<Measurement>& rounds) {
  std::vector<double> t;
  Measurement out;
  for (const Measurement& m : rounds) {
    if (!m.ran) continue;
    t.push_back(m.us);
    if (m.wrong >= 0) out.wrong = std::max<int64_t>(0, out.wrong) + m.wrong;
  }
  if (t.empty()) return out;
  std::sort(t.begin(), t.end());
  out.ran = true;
  out.us = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
  return out;
}

}  // namespace

int run_collective_mode(const Options& o) {
  Config cfg;
  if (!knobs_from_env(&cfg)) return kExitBadInput;
  const bool gpu = o.device == "gpu";
  if (!BenchWorld::built_with_mpi()) {
    std::cerr << "hvdbench: collective mode needs MPI; this hvdbench was built without it\n";
    return kExitRuntimeFailure;
  }
  BenchWorld w;
  Status s = w.start(true);
  if (!s.ok()) return w.fail("MPI start-up: " + s.message());
  const int rank = w.rank, np = w.size;
  const DataType dt = *parse_dtype(o.dtype);
  const ReduceOp rop = *parse_op(o.op);
  std::vector<Case> cases;
  for (int64_t b : size_sweep(o.min_bytes, o.max_bytes, o.step_factor)) {
    const size_t es = dtype_size(dt);
    cases.push_back({o.collective, dt, rop, collective_count(o.collective, b, es, np), es, rank, np});
  }
  // mp: the MPI collective (host) or NCCL called directly (GPU); xc: the MPI exchange.
  std::vector<Measurement> hv(cases.size()), mp(cases.size()), xc(cases.size());
  std::unique_ptr<RankRuntime> rr;
  bool agreed = false;
  s = RankRuntime::start(WorldKind::kMpi, cfg, 0, &rr, gpu ? MemoryKind::kGpu : MemoryKind::kHost,
                         &agreed);
  if (!s.ok() && agreed) {
    // Every rank failed alike (no GPU, NCCL set-up): one line from rank 0, a clean exit.
    if (rank == 0) std::cerr << "hvdbench: --device gpu: " << s.message() << "\n";
    w.finalize();
    return kExitRuntimeFailure;
  }
  if (!s.ok()) return w.fail("runtime start: " + s.message());
  if (rank == 0) print_header(o, cfg, np, gpu);
  std::unique_ptr<MpiBaseline> mpi;
  if (!gpu) {
    const double give_up = cfg.stall_check_disable ? 0.0 : cfg.stall_shutdown_time_s;
    mpi = std::make_unique<MpiBaseline>(give_up, [t = rr->timeline()] {
      if (t) t->flush();
    });
  }
  // Each size: `rounds` rounds of (peers, hvd) back to back, so that a slow spell of a
  // shared host hits both sides; each figure is the median of its rounds. The runtime is
  // up but idle (its loop sleeps) while the peers run.
  for (size_t i = 0; i < cases.size(); ++i) {
    Operands mem(*rr, static_cast<size_t>(cases[i].bytes()));
    std::vector<Measurement> h(static_cast<size_t>(o.rounds)), m(h.size()), x(h.size());
    for (size_t r = 0; r < h.size(); ++r) {
      if (!gpu) {
        s = mpi->measure(o, cases[i], &m[r], &x[r]);
        if (!s.ok()) return w.fail("MPI baseline: " + s.message());
      }
      s = measure_hvd(o, cases[i], *rr, mem, &h[r]);
      if (rr->timeline()) rr->timeline()->flush();  // a later failure keeps the sizes done
      if (!s.ok()) return w.fail("hvd " + o.collective + ": " + s.message());
      if (gpu && o.collective == "allreduce") {
        s = measure_nccl(o, cases[i], *rr, mem, &m[r]);
        if (!s.ok()) return w.fail("ncclAllReduce (direct): " + s.message());
      }
    }
    hv[i] = median_of_rounds(h);
    mp[i] = median_of_rounds(m);
    xc[i] = median_of_rounds(x);
  }
  mpi.reset();
  const RuntimeStats stats = rr->runtime().stats();
  s = rr->shutdown();
  if (!s.ok()) return w.fail("runtime shutdown: " + s.message());
  rr.reset();
  const int64_t wrong = rank == 0 ? print_table(o, gpu, cases, hv, mp, xc, stats) : 0;
  w.finalize();
  return wrong ? kExitRuntimeFailure : kExitOk;
}

}  // namespace hvd::bench
