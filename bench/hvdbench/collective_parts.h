// The parts collective mode (collective_mode.cc) is made of, shared by its files:
//   collective_check.cc  the test data and the check of results
//   collective_mpi.cc    the MPI baseline (the raw MPI collective and the ring exchange)
//   collective_nccl.cc   the NCCL baseline of --device gpu (ncclAllReduce called directly)
//   collective_table.cc  the table (one printer for both: host and --device gpu)
//   collective_mode.cc   the sweep: the hvd runtime's variant, rounds, medians
#pragma once

#include <functional>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collective_mode.h"
#include "hvd/config.h"
#include "hvd/status.h"
#include "rank_runtime.h"

namespace hvd::bench {

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

/// Writes rank c.rank's test data into `in` (host memory).
void fill_input(const Case& c, void* in);
/// The elements of a result at `out` (host memory) that are not what they should be.
int64_t count_wrong(const Case& c, const void* out, ReduceOp rop);
/// True for the collectives that reduce (allreduce, reducescatter).
bool reduces(const std::string& op);

// Times `once` (warm-up, barrier, n iterations); the slowest rank's mean in microseconds.
template <typename Once, typename Barrier, typename Max>
Status time_loop(const Options& o, Once once, Barrier barrier, Max max, double* us) {
  for (int i = 0; i < o.warmup_iters; ++i) HVD_RETURN_IF_ERROR(once());
  HVD_RETURN_IF_ERROR(barrier());
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) HVD_RETURN_IF_ERROR(once());
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t = t / o.iters * 1e6;
  const Status s = max(&t);
  *us = t;
  return s;
}

// The input and output of the runtime variant: host memory, or device memory of the
// runtime's GPU (allocated through the Device seam, staged through host memory for the
// test data and the check). collective_mode.cc.
class Operands {
 public:
  Operands(RankRuntime& rr, size_t bytes);
  ~Operands();
  Operands(const Operands&) = delete;
  Operands& operator=(const Operands&) = delete;

  DeviceKind kind() const { return gpu_ ? DeviceKind::kGPU : DeviceKind::kCPU; }
  void* in() const { return in_; }
  void* out() const { return out_; }
  /// Writes this rank's test data into the input (done when it returns).
  Status fill(const Case& c);
  /// Zeroes the output.
  Status clear_output();
  /// Counts wrong elements of a result at `result` (in, out or runtime-allocated memory
  /// of this variant's device) of `bytes` bytes.
  Status count_wrong_at(const Case& c, const void* result, size_t bytes, ReduceOp rop, int64_t* wrong);

 private:
  bool gpu_;
  Device& dev_;
  size_t bytes_;
  void* in_ = nullptr;
  void* out_ = nullptr;
  std::unique_ptr<Buffer> host_in_, host_out_, staging_;
};

/// The slowest rank's value / the sum over ranks, through the runtime (collective_mode.cc).
Status max_over_ranks(Runtime& rt, double* t);
Status sum_over_ranks(Runtime& rt, const char* name, int64_t* v);

/// The MPI baseline (collective_mpi.cc), on its own duplicate of MPI_COMM_WORLD.
class MpiBaseline {
 public:
  /// `give_up_s` > 0 (the runtime's stall shutdown time): a blocking MPI call of the baseline
  /// that has not returned after that long (a peer died; MPI has no timeout) ends this process
  /// with one line and exit code 1, after `before_exit` (say, a timeline flush). 0: wait, as
  /// the runtime does without a stall shutdown time.
  explicit MpiBaseline(double give_up_s = 0, std::function<void()> before_exit = {});
  ~MpiBaseline();
  MpiBaseline(const MpiBaseline&) = delete;
  MpiBaseline& operator=(const MpiBaseline&) = delete;
  /// The MPI collective (when MPI can express it) and the ring-neighbour exchange (the
  /// runtime's loop sleeps meanwhile).
  Status measure(const Options& o, const Case& c, Measurement* coll, Measurement* xchg);
  /// "MPI_Allreduce", ... for `op`.
  static const char* name(const std::string& op);

 private:
  struct Comm;
  class Watchdog;
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<Watchdog> watchdog_;
};

/// The peer of --device gpu (collective_nccl.cc): ncclAllReduce called directly on the
/// NCCL world's communicator and the buffers hvd just used.
Status measure_nccl(const Options& o, const Case& c, RankRuntime& rr, Operands& mem, Measurement* m);

/// The table (collective_table.cc): the header, the rows of every size (the peer: MPI or
/// NCCL; the exchange only on host memory) and the summary; returns the wrong elements.
void print_header(const Options& o, const Config& cfg, int np, bool gpu);
int64_t print_table(const Options& o, bool gpu, const std::vector<Case>& cases, const std::vector<Measurement>& hv,
                    const std::vector<Measurement>& peer, const std::vector<Measurement>& xc,
                    const RuntimeStats& stats);

}  // namespace hvd::bench
