#include "collective_mode.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>

#include "collectives/half.h"
#include "gpu_world.h"
#include "hvd/report/report.h"
#include "rank_runtime.h"
#ifdef HVD_HAVE_MPI
#include <mpi.h>

#include "hvd/mpi.h"
#endif

namespace hvd::bench {

int64_t collective_count(const std::string& op, int64_t bytes, size_t elem_size, int np) {
  int64_t c = bytes / static_cast<int64_t>(elem_size);
  if (op == "allgather" || op == "alltoall" || op == "reducescatter") c -= c % np;
  return std::max<int64_t>(c, op == "allreduce" || op == "broadcast" ? 1 : np);
}

// Reductions: small integers, so sums are exact in every type (even int8, float16).
double input_value(const std::string& op, ReduceOp rop, int r, int64_t i, int np, int64_t count) {
  const int64_t k = std::max<int64_t>(1, count / np);
  if (op == "allgather") return static_cast<double>((r * 7 + i) % 11);
  if (op == "broadcast") return r == 0 ? static_cast<double>(i % 13 + 1) : 0.0;
  if (op == "alltoall") return static_cast<double>((r * 5 + (i / k) * 3 + i % k) % 17);
  switch (rop) {
    case ReduceOp::kProduct: return i % np == r ? 2.0 : 1.0;
    case ReduceOp::kMin:
    case ReduceOp::kMax: return static_cast<double>((r + i) % 3 + 1);
    default: return static_cast<double>((r + i) % 3);
  }
}

double expected_value(const std::string& op, ReduceOp rop, int me, int64_t i, int np,
                      int64_t count) {
  const int64_t k = std::max<int64_t>(1, count / np);
  if (op == "allgather") return static_cast<double>(((i / k) * 7 + i % k) % 11);
  if (op == "broadcast") return static_cast<double>(i % 13 + 1);
  if (op == "alltoall") return static_cast<double>(((i / k) * 5 + me * 3 + i % k) % 17);
  const int64_t g = op == "reducescatter" ? me * k + i : i;  // index into the full input
  switch (rop) {
    case ReduceOp::kProduct: return 2.0;
    case ReduceOp::kMin:
    case ReduceOp::kMax: {  // values repeat with period 3 in r
      double best = rop == ReduceOp::kMin ? 1e9 : -1e9;
      for (int r = 0; r < std::min(np, 3); ++r) {
        const double v = static_cast<double>((r + g) % 3 + 1);
        best = rop == ReduceOp::kMin ? std::min(best, v) : std::max(best, v);
      }
      return best;
    }
    default: {  // every 3 consecutive ranks contribute 0 + 1 + 2
      double sum = 3.0 * (np / 3);
      for (int r = 0; r < np % 3; ++r) sum += static_cast<double>((r + g) % 3);
      return rop == ReduceOp::kAverage ? sum / np : sum;
    }
  }
}

void set_element(void* buf, DataType dt, int64_t i, double v) {
  switch (dt) {
    case DataType::kUInt8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case DataType::kInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case DataType::kInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case DataType::kInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case DataType::kFloat16:
      static_cast<uint16_t*>(buf)[i] = float_to_half(static_cast<float>(v));
      break;
    case DataType::kBFloat16:
      static_cast<uint16_t*>(buf)[i] = float_to_bf16(static_cast<float>(v));
      break;
    case DataType::kFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DataType::kFloat64: static_cast<double*>(buf)[i] = v; break;
  }
}

double get_element(const void* buf, DataType dt, int64_t i) {
  switch (dt) {
    case DataType::kUInt8: return static_cast<const uint8_t*>(buf)[i];
    case DataType::kInt8: return static_cast<const int8_t*>(buf)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(buf)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case DataType::kFloat16: return half_to_float(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kBFloat16: return bf16_to_float(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kFloat32: return static_cast<const float*>(buf)[i];
    case DataType::kFloat64: return static_cast<const double*>(buf)[i];
  }
  return 0;
}

bool matches(double got, double want, DataType dt, ReduceOp rop) {
  const bool integer = dt == DataType::kUInt8 || dt == DataType::kInt8 ||
                       dt == DataType::kInt32 || dt == DataType::kInt64;
  if (integer) return std::fabs(got - want) <= (rop == ReduceOp::kAverage ? 1.0 : 0.0);
  const double rel = (dt == DataType::kFloat16 || dt == DataType::kBFloat16) ? 1e-2
                     : dt == DataType::kFloat32                              ? 1e-5
                                                                             : 1e-12;
  return std::fabs(got - want) <= rel * std::fabs(want) + rel;
}

#ifdef HVD_HAVE_MPI

namespace {

// 64-byte aligned host memory.
struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t bytes) {
    p = std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
    if (p) std::memset(p, 0, bytes);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// One size of the sweep: what every variant needs.
struct Case {
  std::string op;
  DataType dt;
  ReduceOp rop;
  int64_t count;  // input elements per rank
  size_t es;
  int rank, np;
  int64_t bytes() const { return count * static_cast<int64_t>(es); }
  int64_t out_count() const {  // elements of this rank's result
    if (op == "reducescatter") return count / np;
    if (op == "allgather") return count;  // "size" is the gathered output, as in nccl-tests
    return count;
  }
  int64_t in_count() const { return op == "allgather" ? count / np : count; }
};

struct Measurement {
  bool ran = false;
  double us = 0;       // slowest rank's mean time per iteration
  int64_t wrong = -1;  // -1: not checked
};

void fill_input(const Case& c, void* in) {
  const int64_t n = c.in_count();
  for (int64_t i = 0; i < n; ++i)
    set_element(in, c.dt, i, input_value(c.op, c.rop, c.rank, i, c.np, c.count));
}

int64_t count_wrong(const Case& c, const void* out, ReduceOp rop) {
  int64_t wrong = 0;
  const int64_t n = c.out_count();
  for (int64_t i = 0; i < n; ++i)
    if (!matches(get_element(out, c.dt, i), expected_value(c.op, rop, c.rank, i, c.np, c.count),
                 c.dt, rop))
      ++wrong;
  return wrong;
}

MPI_Datatype mpi_type(DataType dt) {
  switch (dt) {
    case DataType::kUInt8: return MPI_UINT8_T;
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;  // no MPI type for float16/bfloat16
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kProduct: return MPI_PROD;
    default: return MPI_SUM;  // average: MPI has none; the baseline times the sum
  }
}

bool reduces(const std::string& op) { return op == "allreduce" || op == "reducescatter"; }

// The raw MPI collective for `c`; false when MPI cannot express it (type, int counts).
bool mpi_supports(const Case& c) {
  if (reduces(c.op) && mpi_type(c.dt) == MPI_DATATYPE_NULL) return false;
  return c.bytes() <= INT_MAX;
}

int mpi_once(const Case& c, MPI_Comm comm, void* in, void* out) {
  const int n = static_cast<int>(c.count);
  const int block = static_cast<int>(c.count / c.np * static_cast<int64_t>(c.es));
  if (c.op == "allreduce") return MPI_Allreduce(in, out, n, mpi_type(c.dt), mpi_op(c.rop), comm);
  if (c.op == "allgather")
    return MPI_Allgather(in, block, MPI_BYTE, out, block, MPI_BYTE, comm);
  if (c.op == "broadcast")
    return MPI_Bcast(in, static_cast<int>(c.bytes()), MPI_BYTE, 0, comm);
  if (c.op == "alltoall") return MPI_Alltoall(in, block, MPI_BYTE, out, block, MPI_BYTE, comm);
  return MPI_Reduce_scatter_block(in, out, n / c.np, mpi_type(c.dt), mpi_op(c.rop), comm);
}

// Times `once` (warm-up, barrier, n iterations); the slowest rank's mean in microseconds.
template <typename Once, typename Barrier, typename Max>
Status time_loop(const Options& o, Once once, Barrier barrier, Max max, double* us) {
  for (int i = 0; i < o.warmup_iters; ++i) {
    Status s = once();
    if (!s.ok()) return s;
  }
  Status s = barrier();
  if (!s.ok()) return s;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) {
    s = once();
    if (!s.ok()) return s;
  }
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t = t / o.iters * 1e6;
  s = max(&t);
  *us = t;
  return s;
}

Status mpi_status(int rc, const char* what) {
  return rc == MPI_SUCCESS ? Status::OK() : Status::Internal(std::string(what) + " failed");
}

// The MPI collective and the ring-neighbour exchange (the runtime's loop sleeps meanwhile).
Status measure_mpi(const Options& o, const Case& c, MPI_Comm comm, Measurement* coll,
                   Measurement* xchg) {
  Buffer in(static_cast<size_t>(c.bytes())), out(static_cast<size_t>(c.bytes()));
  auto barrier = [&] { return mpi_status(MPI_Barrier(comm), "MPI_Barrier"); };
  auto max = [&](double* t) {
    return mpi_status(MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  };
  if (mpi_supports(c)) {
    if (o.check) fill_input(c, in.p);
    auto once = [&] { return mpi_status(mpi_once(c, comm, in.p, out.p), "MPI collective"); };
    Status s = time_loop(o, once, barrier, max, &coll->us);
    if (!s.ok()) return s;
    coll->ran = true;
    if (o.check) {
      fill_input(c, in.p);
      if (c.op != "broadcast") std::memset(out.p, 0, static_cast<size_t>(c.bytes()));
      s = once();
      if (!s.ok()) return s;
      const ReduceOp check_op = c.rop == ReduceOp::kAverage ? ReduceOp::kSum : c.rop;
      int64_t wrong = count_wrong(c, c.op == "broadcast" ? in.p : out.p, check_op);
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, comm);
      coll->wrong = wrong;
    }
  }
  if (c.np > 1 && c.bytes() <= INT_MAX) {
    const int right = (c.rank + 1) % c.np, left = (c.rank + c.np - 1) % c.np;
    const int n = static_cast<int>(c.bytes());
    auto once = [&] {
      return mpi_status(MPI_Sendrecv(in.p, n, MPI_BYTE, right, 7, out.p, n, MPI_BYTE, left, 7,
                                     comm, MPI_STATUS_IGNORE),
                        "MPI_Sendrecv");
    };
    Status s = time_loop(o, once, barrier, max, &xchg->us);
    if (!s.ok()) return s;
    xchg->ran = true;
  }
  return Status::OK();
}

// The input and output of the runtime variant: host memory, or device memory of the
// runtime's GPU (allocated through the Device seam, staged through host memory for the
// test data and the check).
class Operands {
 public:
  Operands(RankRuntime& rr, size_t bytes)
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
  ~Operands() {
    if (!gpu_) return;
    dev_.synchronize();
    dev_.release(in_);
    dev_.release(out_);
  }
  Operands(const Operands&) = delete;
  Operands& operator=(const Operands&) = delete;

  DeviceKind kind() const { return gpu_ ? DeviceKind::kGPU : DeviceKind::kCPU; }
  void* in() const { return in_; }
  void* out() const { return out_; }
  /// Writes this rank's test data into the input (done when it returns).
  Status fill(const Case& c) {
    fill_input(c, gpu_ ? staging_->p : in_);
    return gpu_ ? gpu_copy(in_, staging_->p, static_cast<size_t>(c.in_count()) * c.es)
                : Status::OK();
  }
  /// Zeroes the output.
  Status clear_output() {
    if (!gpu_) {
      std::memset(out_, 0, bytes_);
      return Status::OK();
    }
    std::memset(staging_->p, 0, bytes_);
    return gpu_copy(out_, staging_->p, bytes_);
  }
  /// Counts wrong elements of a result at `result` (in, out or runtime-allocated memory
  /// of this variant's device) of `bytes` bytes.
  Status count_wrong_at(const Case& c, const void* result, size_t bytes, ReduceOp rop,
                        int64_t* wrong) {
    const void* host = result;
    if (gpu_) {
      Status s = gpu_copy(staging_->p, result, std::min(bytes, bytes_));
      if (!s.ok()) return s;
      host = staging_->p;
    }
    *wrong = count_wrong(c, host, rop);
    return Status::OK();
  }

 private:
  bool gpu_;
  Device& dev_;
  size_t bytes_;
  void* in_ = nullptr;
  void* out_ = nullptr;
  std::unique_ptr<Buffer> host_in_, host_out_, staging_;
};

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
  s = time_loop(o, once, barrier, max, &m->us);
  if (!s.ok()) return s;
  m->ran = true;
  if (o.check) {
    s = mem.fill(c);
    if (s.ok()) s = mem.clear_output();
    if (s.ok()) s = once();
    if (!s.ok()) return s;
    if (c.op == "broadcast") result = mem.in();
    int64_t wrong = 0;
    s = mem.count_wrong_at(c, result, result_bytes, c.rop, &wrong);
    if (!s.ok()) return s;
    s = sum_over_ranks(rt, "hvdbench.wrong", &wrong);
    m->wrong = wrong;
  }
  return s;
}

bool floating(DataType dt) {
  return dt == DataType::kFloat16 || dt == DataType::kBFloat16 || dt == DataType::kFloat32 ||
         dt == DataType::kFloat64;
}

// The peer of --device gpu: ncclAllReduce called directly on the NCCL world's communicator
// and the buffers hvd just used, timed as nccl-tests does (back to back, one stream
// synchronisation); the slowest rank's mean. Then, with --check, the result of the last call.
Status measure_nccl(const Options& o, const Case& c, RankRuntime& rr, Operands& mem,
                    Measurement* m) {
  Status s;
  if (o.check) s = mem.fill(c);
  if (s.ok() && o.check) s = mem.clear_output();
  if (!s.ok()) return s;
  double sec = 0;
  s = time_nccl_allreduce(rr.transport(), mem.in(), mem.out(), c.count, c.dt, c.rop, o.warmup_iters,
                          o.iters, &sec);
  if (!s.ok()) return s;
  m->us = sec * 1e6;
  s = max_over_ranks(rr.runtime(), &m->us);
  if (!s.ok()) return s;
  m->ran = true;
  if (o.check) {
    // Integer averages: NCCL has no ncclAvg for them; the direct call sums.
    const ReduceOp check_op =
        c.rop == ReduceOp::kAverage && !floating(c.dt) ? ReduceOp::kSum : c.rop;
    int64_t wrong = 0;
    s = mem.count_wrong_at(c, mem.out(), static_cast<size_t>(c.bytes()), check_op, &wrong);
    if (!s.ok()) return s;
    s = sum_over_ranks(rr.runtime(), "hvdbench.nccl_wrong", &wrong);
    m->wrong = wrong;
  }
  return s;
}

const char* mpi_name(const std::string& op) {
  if (op == "allreduce") return "MPI_Allreduce";
  if (op == "allgather") return "MPI_Allgather";
  if (op == "broadcast") return "MPI_Bcast";
  if (op == "alltoall") return "MPI_Alltoall";
  return "MPI_Reduce_scatter_block";
}

void print_header(const Options& o, const Config& cfg, int np) {
  std::printf("# hvdbench --collective %s: %d rank%s, dtype %s, op %s, %d iterations after %d "
              "warm-up, sizes %lld..%lld x%lld\n",
              o.collective.c_str(), np, np == 1 ? "" : "s", o.dtype.c_str(), o.op.c_str(),
              o.iters, o.warmup_iters, static_cast<long long>(o.min_bytes),
              static_cast<long long>(o.max_bytes), static_cast<long long>(o.step_factor));
  if (o.rounds > 1)
    std::printf("# %d rounds per size (MPI, exchange, hvd back to back); each time is the median "
                "round\n",
                o.rounds);
  std::printf("# hvd: the full runtime API per call (enqueue, negotiation every %g ms cycle (0: on enqueue), "
              "algorithm, copies),\n#      allreduce algorithm %s, pipeline segment %lld bytes; "
              "out-of-place except broadcast\n",
              cfg.cycle_time_ms, cfg.allreduce_algorithm.c_str(),
              static_cast<long long>(cfg.pipeline_chunk));
  std::printf("# MPI: %s on a duplicate of MPI_COMM_WORLD%s; exchange: MPI_Sendrecv of <size> "
              "bytes to rank+1 from rank-1\n#      on every rank at once (one ring step: the "
              "ring's physical limit)\n",
              mpi_name(o.collective), o.op == "average" ? " (MPI_SUM: MPI has no average)" : "");
  std::printf("# time: slowest rank's mean per call; algbw = size/time; busbw = algbw x %s "
              "(nccl-tests); GB/s = 1e9 B/s\n#\n",
              o.collective == "allreduce" ? "2(n-1)/n"
              : o.collective == "broadcast" ? "1"
                                            : "(n-1)/n");
  std::printf("# %41s %-32s %-32s %s\n", "", "------------- hvd --------------",
              "------------- MPI --------------", "--- exchange ----");
  std::printf("# %11s %12s %8s %7s %9s %7s %7s %6s %9s %7s %7s %6s %9s %7s\n", "size", "count",
              "type", "redop", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
              "#wrong", "time", "bw");
  std::printf("# %11s %12s %8s %7s %9s %7s %7s %6s %9s %7s %7s %6s %9s %7s\n", "(B)",
              "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
              "", "(us)", "(GB/s)");
  std::fflush(stdout);
}

void print_header_gpu(const Options& o, const Config& cfg, int np) {
  std::printf(
      "# hvdbench --collective %s --device gpu: %d rank%s (one GPU each), dtype %s, op "
      "%s, %d iterations after %d warm-up, sizes %lld..%lld x%lld\n",
      o.collective.c_str(), np, np == 1 ? "" : "s", o.dtype.c_str(), o.op.c_str(), o.iters,
      o.warmup_iters, static_cast<long long>(o.min_bytes), static_cast<long long>(o.max_bytes),
      static_cast<long long>(o.step_factor));
  std::printf("# GPU: %s; rank r uses GPU (local rank mod GPUs of the node)\n",
              gpu_versions().c_str());
  std::printf(
      "# hvd: the full runtime API per call on device tensors (enqueue, negotiation every "
      "%g ms cycle (0: on enqueue),\n#      allreduce algorithm %s (auto: NCCL's "
      "collective for GPU tensors), fusion buffer copies), until the\n#      handle "
      "completes (after the GPU finished); out-of-place except broadcast\n",
      cfg.cycle_time_ms, cfg.allreduce_algorithm.c_str());
  if (o.collective == "allreduce")
    std::printf(
        "# NCCL: ncclAllReduce called directly on the world communicator and the same "
        "device buffers, out-of-place;\n#      timed like nccl-tests: iterations "
        "enqueued back to back, one cudaStreamSynchronize%s\n",
        o.op == "average" ? "; average: ncclAvg (integers: ncclSum)" : "");
  else
    std::printf("# NCCL: direct figures only for allreduce (n/a here)\n");
  std::printf(
      "# time: slowest rank's mean per call; algbw = size/time; busbw = algbw x %s "
      "(nccl-tests; 0 on one rank); GB/s = 1e9 B/s;\n# hvd/NCCL = NCCL time / hvd "
      "time\n#\n",
      o.collective == "allreduce"   ? "2(n-1)/n"
      : o.collective == "broadcast" ? "1"
                                    : "(n-1)/n");
  std::printf("# %41s %-32s %-32s %s\n", "", "------------- hvd --------------",
              "------------- NCCL -------------", "hvd/NCCL");
  std::printf("# %11s %12s %8s %7s %9s %7s %7s %6s %9s %7s %7s %6s %8s\n", "size", "count", "type",
              "redop", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "");
  std::printf("# %11s %12s %8s %7s %9s %7s %7s %6s %9s %7s %7s %6s %8s\n", "(B)", "(elements)", "",
              "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(%)");
  std::fflush(stdout);
}

std::string cell_wrong(const Measurement& m) {
  return !m.ran ? "n/a" : m.wrong < 0 ? "-" : std::to_string(m.wrong);
}

void print_row(const Case& c, const Measurement& h, const Measurement& m, const Measurement& x,
               double* busbw_sum_hvd, double* busbw_sum_mpi) {
  const double f = report::busbw_factor(c.op, c.np);
  auto bw = [&](const Measurement& z) { return z.ran && z.us > 0 ? c.bytes() / z.us / 1e3 : 0.0; };
  char hv[64] = "", mp[64] = "", xc[64] = "";
  if (h.ran) std::snprintf(hv, sizeof hv, "%9.1f %7.3f %7.3f", h.us, bw(h), bw(h) * f);
  else std::snprintf(hv, sizeof hv, "%9s %7s %7s", "n/a", "", "");
  if (m.ran) std::snprintf(mp, sizeof mp, "%9.1f %7.3f %7.3f", m.us, bw(m), bw(m) * f);
  else std::snprintf(mp, sizeof mp, "%9s %7s %7s", "n/a", "", "");
  if (x.ran) std::snprintf(xc, sizeof xc, "%9.1f %7.3f", x.us, bw(x));
  else std::snprintf(xc, sizeof xc, "%9s %7s", "n/a", "");
  std::printf("  %11lld %12lld %8s %7s %s %6s %s %6s %s\n", static_cast<long long>(c.bytes()),
              static_cast<long long>(c.count), std::string(dtype_name(c.dt)).c_str(),
              reduces(c.op) ? std::string(op_name(c.rop)).c_str() : "none", hv,
              cell_wrong(h).c_str(), mp, cell_wrong(m).c_str(), xc);
  *busbw_sum_hvd += bw(h) * f;
  *busbw_sum_mpi += bw(m) * f;
}

void print_row_gpu(const Case& c, const Measurement& h, const Measurement& n, double* busbw_sum_hvd,
                   double* busbw_sum_nccl) {
  const double f = report::busbw_factor(c.op, c.np);
  auto bw = [&](const Measurement& z) { return z.ran && z.us > 0 ? c.bytes() / z.us / 1e3 : 0.0; };
  char hv[64] = "", nc[64] = "", eff[16] = "";
  if (h.ran)
    std::snprintf(hv, sizeof hv, "%9.1f %7.3f %7.3f", h.us, bw(h), bw(h) * f);
  else
    std::snprintf(hv, sizeof hv, "%9s %7s %7s", "n/a", "", "");
  if (n.ran)
    std::snprintf(nc, sizeof nc, "%9.1f %7.3f %7.3f", n.us, bw(n), bw(n) * f);
  else
    std::snprintf(nc, sizeof nc, "%9s %7s %7s", "n/a", "", "");
  if (h.ran && n.ran && h.us > 0)
    std::snprintf(eff, sizeof eff, "%8.1f", 100.0 * n.us / h.us);
  else
    std::snprintf(eff, sizeof eff, "%8s", "n/a");
  std::printf("  %11lld %12lld %8s %7s %s %6s %s %6s %s\n", static_cast<long long>(c.bytes()),
              static_cast<long long>(c.count), std::string(dtype_name(c.dt)).c_str(),
              reduces(c.op) ? std::string(op_name(c.rop)).c_str() : "none", hv,
              cell_wrong(h).c_str(), nc, cell_wrong(n).c_str(), eff);
  *busbw_sum_hvd += bw(h) * f;
  *busbw_sum_nccl += bw(n) * f;
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

int fail(const std::string& what, const Status& s, int np) {
  std::cerr << "hvdbench: " << what << ": " << s.message() << "\n";
  if (np > 1) abort_mpi(kExitRuntimeFailure);
  finalize_mpi();
  return kExitRuntimeFailure;
}

}  // namespace

int run_collective_mode(const Options& o) {
  Config cfg;
  if (!knobs_from_env(&cfg)) return kExitBadInput;
  const bool gpu = o.device == "gpu";
  Status s;
  s = init_mpi(nullptr, nullptr);
  if (!s.ok()) {
    std::cerr << "hvdbench: MPI start-up: " << s.message() << "\n";
    return kExitRuntimeFailure;
  }
  int rank = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
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
    finalize_mpi();
    return kExitRuntimeFailure;
  }
  if (!s.ok()) return fail("runtime start", s, np);
  if (rank == 0) gpu ? print_header_gpu(o, cfg, np) : print_header(o, cfg, np);
  MPI_Comm comm = MPI_COMM_NULL;
  if (!gpu) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  // Each size: `rounds` rounds of (peers, hvd) back to back, so that a slow spell of a
  // shared host hits both sides; each figure is the median of its rounds. The runtime is
  // up but idle (its loop sleeps) while the peers run.
  for (size_t i = 0; i < cases.size(); ++i) {
    Operands mem(*rr, static_cast<size_t>(cases[i].bytes()));
    std::vector<Measurement> h(static_cast<size_t>(o.rounds)), m(h.size()), x(h.size());
    for (size_t r = 0; r < h.size(); ++r) {
      if (!gpu) {
        s = measure_mpi(o, cases[i], comm, &m[r], &x[r]);
        if (!s.ok()) return fail("MPI baseline", s, np);
      }
      s = measure_hvd(o, cases[i], *rr, mem, &h[r]);
      if (!s.ok()) return fail("hvd " + o.collective, s, np);
      if (gpu && o.collective == "allreduce") {
        s = measure_nccl(o, cases[i], *rr, mem, &m[r]);
        if (!s.ok()) return fail("ncclAllReduce (direct)", s, np);
      }
    }
    hv[i] = median_of_rounds(h);
    mp[i] = median_of_rounds(m);
    xc[i] = median_of_rounds(x);
  }
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  const RuntimeStats stats = rr->runtime().stats();
  s = rr->shutdown();
  if (!s.ok()) return fail("runtime shutdown", s, np);
  rr.reset();
  int64_t wrong = 0;
  if (rank == 0) {
    double sum_h = 0, sum_m = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (gpu)
        print_row_gpu(cases[i], hv[i], mp[i], &sum_h, &sum_m);
      else
        print_row(cases[i], hv[i], mp[i], xc[i], &sum_h, &sum_m);
      wrong += std::max<int64_t>(0, hv[i].wrong) + std::max<int64_t>(0, mp[i].wrong);
    }
    const double n = static_cast<double>(cases.size());
    std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(wrong),
                o.check ? (wrong ? "FAILED" : "OK") : "(not checked; use --check)");
    std::printf("# Avg bus bandwidth    : hvd %.4f GB/s, %s %.4f GB/s\n", sum_h / n,
                gpu ? "NCCL" : "MPI", sum_m / n);
    std::printf("# hvd runtime, rank 0  : %lld cycles (%lld run by the waiting caller), "
                "negotiation %.1f us per cycle, %lld cache hits, %lld misses\n#\n",
                static_cast<long long>(stats.cycles), static_cast<long long>(stats.caller_cycles),
                stats.cycles ? stats.negotiation_s / stats.cycles * 1e6 : 0.0,
                static_cast<long long>(stats.cache_hits), static_cast<long long>(stats.cache_misses));
    std::fflush(stdout);
  }
  finalize_mpi();
  return wrong ? kExitRuntimeFailure : kExitOk;
}

#else

int run_collective_mode(const Options&) {
  std::cerr << "hvdbench: collective mode needs MPI; this hvdbench was built without it\n";
  return kExitRuntimeFailure;
}

#endif

}  // namespace hvd::bench
