// Collective mode's table, nccl-tests style: a header saying what each variant is, one row
// per size (hvd, then its peer: the MPI collective on host memory, ncclAllReduce with
// --device gpu; then the ring exchange, or hvd's share of NCCL's speed) and a summary.
#include <cstdio>

#include "collective_parts.h"
#include "gpu_world.h"
#include "hvd/report/report.h"

namespace hvd::bench {
namespace {

const char* busbw_formula(const std::string& collective) {
  return collective == "allreduce" ? "2(n-1)/n" : collective == "broadcast" ? "1" : "(n-1)/n";
}

// What the host table's header says about the variants.
void print_preamble_host(const Options& o, const Config& cfg, int np) {
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
              MpiBaseline::name(o.collective), o.op == "average" ? " (MPI_SUM: MPI has no average)" : "");
  std::printf("# time: slowest rank's mean per call; algbw = size/time; busbw = algbw x %s "
              "(nccl-tests); GB/s = 1e9 B/s\n#\n",
              busbw_formula(o.collective));
}

// What the --device gpu table's header says about the variants.
void print_preamble_gpu(const Options& o, const Config& cfg, int np) {
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
      busbw_formula(o.collective));
}

// The last column(s): the host table's ring exchange, the GPU table's hvd/NCCL ratio.
struct LastColumn {
  const char* title;  // over the column
  char head[32];      // its header line
  char unit[32];      // its unit line
};

LastColumn last_column(bool gpu) {
  LastColumn l{gpu ? "hvd/NCCL" : "--- exchange ----", {}, {}};
  if (gpu) {
    std::snprintf(l.head, sizeof l.head, "%8s", "");
    std::snprintf(l.unit, sizeof l.unit, "%8s", "(%)");
  } else {
    std::snprintf(l.head, sizeof l.head, "%9s %7s", "time", "bw");
    std::snprintf(l.unit, sizeof l.unit, "%9s %7s", "(us)", "(GB/s)");
  }
  return l;
}

std::string cell_wrong(const Measurement& m) {
  return !m.ran ? "n/a" : m.wrong < 0 ? "-" : std::to_string(m.wrong);
}

// One size: hvd, its peer (time, algbw, busbw, #wrong each) and the last column.
void print_row(const Case& c, bool gpu, const Measurement& h, const Measurement& peer, const Measurement& x,
               double* busbw_sum_hvd, double* busbw_sum_peer) {
  const double f = report::busbw_factor(c.op, c.np);
  auto bw = [&](const Measurement& z) { return z.ran && z.us > 0 ? c.bytes() / z.us / 1e3 : 0.0; };
  auto cell = [&](const Measurement& z, char* out, size_t n) {
    if (z.ran) std::snprintf(out, n, "%9.2f %7.3f %7.3f", z.us, bw(z), bw(z) * f);
    else std::snprintf(out, n, "%9s %7s %7s", "n/a", "", "");
  };
  char hv[64] = "", pe[64] = "", last[64] = "";
  cell(h, hv, sizeof hv);
  cell(peer, pe, sizeof pe);
  if (gpu && h.ran && peer.ran && h.us > 0) std::snprintf(last, sizeof last, "%8.1f", 100.0 * peer.us / h.us);
  else if (gpu) std::snprintf(last, sizeof last, "%8s", "n/a");
  else if (x.ran) std::snprintf(last, sizeof last, "%9.2f %7.3f", x.us, bw(x));
  else std::snprintf(last, sizeof last, "%9s %7s", "n/a", "");
  std::printf("  %11lld %12lld %8s %7s %s %6s %s %6s %s\n", static_cast<long long>(c.bytes()),
              static_cast<long long>(c.count), std::string(dtype_name(c.dt)).c_str(),
              reduces(c.op) ? std::string(op_name(c.rop)).c_str() : "none", hv,
              cell_wrong(h).c_str(), pe, cell_wrong(peer).c_str(), last);
  *busbw_sum_hvd += bw(h) * f;
  *busbw_sum_peer += bw(peer) * f;
}

}  // namespace

void print_header(const Options& o, const Config& cfg, int np, bool gpu) {
  gpu ? print_preamble_gpu(o, cfg, np) : print_preamble_host(o, cfg, np);
  const LastColumn l = last_column(gpu);
  std::printf("# %41s %-32s %-32s %s\n", "", "------------- hvd --------------",
              gpu ? "------------- NCCL -------------" : "------------- MPI --------------", l.title);
  std::printf("# %11s %12s %8s %7s %9s %7s %7s %6s %9s %7s %7s %6s %s\n", "size", "count", "type", "redop", "time",
              "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", l.head);
  std::printf("# %11s %12s %8s %7s %9s %7s %7s %6s %9s %7s %7s %6s %s\n", "(B)", "(elements)", "", "", "(us)",
              "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", l.unit);
  std::fflush(stdout);
}

int64_t print_table(const Options& o, bool gpu, const std::vector<Case>& cases, const std::vector<Measurement>& hv,
                    const std::vector<Measurement>& peer, const std::vector<Measurement>& xc,
                    const RuntimeStats& stats) {
  int64_t wrong = 0;
  double sum_h = 0, sum_m = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    print_row(cases[i], gpu, hv[i], peer[i], xc[i], &sum_h, &sum_m);
    wrong += std::max<int64_t>(0, hv[i].wrong) + std::max<int64_t>(0, peer[i].wrong);
  }
  const double n = static_cast<double>(cases.size());
  std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(wrong),
              o.check ? (wrong ? "FAILED" : "OK") : "(not checked; use --check)");
  std::printf("# Avg bus bandwidth    : hvd %.4f GB/s, %s %.4f GB/s\n", sum_h / n, gpu ? "NCCL" : "MPI", sum_m / n);
  std::printf("# hvd runtime, rank 0  : %lld cycles (%lld run by the waiting caller), "
              "negotiation %.1f us per cycle, %lld cache hits (%lld reduced on the bit exchange), "
              "%lld misses\n#\n",
              static_cast<long long>(stats.cycles), static_cast<long long>(stats.caller_cycles),
              stats.cycles ? stats.negotiation_s / stats.cycles * 1e6 : 0.0,
              static_cast<long long>(stats.cache_hits), static_cast<long long>(stats.eager_tensors),
              static_cast<long long>(stats.cache_misses));
  std::fflush(stdout);
  return wrong;
}

}  // namespace hvd::bench
