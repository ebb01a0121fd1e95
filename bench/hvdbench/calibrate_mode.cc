// hvdbench --calibrate: point-to-point latency and bandwidth per link class (same node,
// across nodes) through the runtime's own Transport, host copy and float32 reduction
// throughput through the runtime's CPU Device, and the runtime's per-call overhead (a tiny
// allreduce through the full API, event-driven cycle, minus the raw exchanges under it).
// Every rank measures at the same time as the others, as in training: on an
// oversubscribed host the figures include the sharing of the cores.
#include "calibrate_mode.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "hvd/device.h"
#include "hvd/transport.h"
#include "bench_world.h"
#include "gpu_world.h"
#include "rank_runtime.h"
#ifdef HVD_HAVE_MPI
#include "hvd/mpi.h"  // make_mpi_world_transport: the links are measured on MPI's transport
#endif

namespace hvd::bench {

using nlohmann::json;

bool fit_alpha_beta(const std::vector<LinkSample>& samples, double* alpha, double* beta) {
  // alpha: the smallest message's time. beta: bytes over time beyond alpha, summed over the
  // messages of at least kBandwidthFrom bytes (the regime gradients live in: large fused
  // buffers, past the caches).
  std::vector<LinkSample> v;
  for (const LinkSample& s : samples)
    if (s.seconds > 0) v.push_back(s);
  if (v.size() < 2) return false;
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; });
  const double a = v.front().seconds;
  const int64_t from = std::min(kBandwidthFrom, v.back().bytes);
  double bytes = 0, time = 0;
  for (const LinkSample& s : v)
    if (s.bytes >= from) bytes += static_cast<double>(s.bytes), time += s.seconds - a;
  if (!(time > 0)) return false;
  *alpha = a;
  *beta = bytes / time;
  return true;
}

bool fit_relative(const std::vector<LinkSample>& samples, double* alpha, double* beta) {
  // Weighted least squares of t = a + g*n with weights 1/t^2 (relative error).
  double sw = 0, sn = 0, st = 0, snn = 0, snt = 0;
  int sizes = 0;
  for (const LinkSample& s : samples) {
    if (!(s.seconds > 0)) continue;
    const double w = 1.0 / (s.seconds * s.seconds), n = static_cast<double>(s.bytes);
    sw += w, sn += w * n, st += w * s.seconds, snn += w * n * n, snt += w * n * s.seconds;
    ++sizes;
  }
  const double det = sw * snn - sn * sn;
  if (sizes < 2 || !(det > 0)) return false;
  const double g = (sw * snt - sn * st) / det;
  const double a = (st - g * sn) / sw;
  if (!(g > 0)) return false;
  *alpha = std::max(0.0, a);
  *beta = 1.0 / g;
  return true;
}

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Every power of two from 512 B to 256 KiB: MPI switches protocol in there (eager below
// ~4 KiB on shared memory, rendezvous above), and a log-size line drawn across the switch
// from points 8x apart put the 2 KiB halves of a 4 KiB RHD allreduce on the rendezvous side.
const std::vector<int64_t> kSizes = {8,        64,       512,       1 << 10,   2 << 10,  4 << 10,
                                     8 << 10,  16 << 10, 32 << 10,  64 << 10,  128 << 10, 256 << 10,
                                     1 << 20,  2 << 20,  4 << 20,   8 << 20,   16 << 20, 64 << 20};
constexpr size_t kDeviceBytes = size_t{64} << 20;
constexpr size_t kHotDeviceBytes = size_t{1} << 20;  // per operand: in cache with both ranks' copies
constexpr size_t kColdBytes = size_t{128} << 20;  // per buffer: 4x a typical last-level cache

// This rank's share of the last-level cache (sysfs; 32 MiB if unknown).
double cache_share(int ranks_on_node) {
  double bytes = 32.0 * (1 << 20);
  for (int i = 3; i >= 2; --i) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (f >> s && !s.empty()) {
      const char unit = s.back();
      const double v = std::atof(s.c_str());
      bytes = v * (unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : 1.0);
      break;
    }
  }
  return bytes / std::max(1, ranks_on_node);
}

// The median of the means of 5 consecutive batches: a mean, as hvdbench's sweeps and
// training steps see it (on an oversubscribed host the sharing of the cores is part of the
// cost), but robust against a rare long stall from other work on a shared machine.
double median_of_means(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const size_t batches = std::min<size_t>(5, v.size()), per = v.size() / batches;
  std::vector<double> means;
  for (size_t b = 0; b < batches; ++b) {
    const size_t lo = b * per, hi = b + 1 == batches ? v.size() : lo + per;
    double m = 0;
    for (size_t i = lo; i < hi; ++i) m += v[i] / static_cast<double>(hi - lo);
    means.push_back(m);
  }
  std::nth_element(means.begin(), means.begin() + static_cast<long>(means.size() / 2), means.end());
  return means[means.size() / 2];
}

// Collective helpers that work with one rank and no MPI.
using World = BenchWorld;

// This rank's partner for a link class (-1: none). Same node: consecutive members of the
// node. Across nodes: the member with the same local index on the paired node (2k, 2k+1).
int partner_of(const Transport& t, bool same_node) {
  std::map<int, std::vector<int>> members;
  for (int r = 0; r < t.size(); ++r) members[t.node_of(r)].push_back(r);
  const int me = t.rank(), node = t.node_of(me);
  const std::vector<int>& mine = members[node];
  const int local = static_cast<int>(std::find(mine.begin(), mine.end(), me) - mine.begin());
  if (same_node) {
    const int other = local ^ 1;
    return other < static_cast<int>(mine.size()) ? mine[static_cast<size_t>(other)] : -1;
  }
  std::vector<int> nodes;
  for (const auto& kv : members) nodes.push_back(kv.first);
  const int idx = static_cast<int>(std::find(nodes.begin(), nodes.end(), node) - nodes.begin());
  const int other = idx ^ 1;
  if (other >= static_cast<int>(nodes.size())) return -1;
  const std::vector<int>& theirs = members[nodes[static_cast<size_t>(other)]];
  return local < static_cast<int>(theirs.size()) ? theirs[static_cast<size_t>(local)] : -1;
}

// Ping-pong (one-way = round trip / 2) or exchange (both send at once) of `bytes`.
// cold: every iteration at the next offset of the (large) buffers, so the data are not in
// cache, as when a collective walks through large gradient buffers.
// `pool` > 0: iteration i uses the next message-sized slot of the first `pool` bytes of
// both buffers (cold: the whole 128 MiB), so a slot comes back after pool bytes.
double time_pair(Transport& t, int peer, std::vector<char>& sbuf, std::vector<char>& rbuf,
                 int64_t bytes, bool exchange, int warmup, int iters, bool cold = false,
                 size_t pool = 0) {
  const bool leader = t.rank() < peer;
  const size_t n = static_cast<size_t>(bytes);
  if (cold) pool = sbuf.size();
  pool = std::min(pool, sbuf.size());
  const size_t stride = std::max<size_t>(n, 64 << 10),
               slots = std::max<size_t>(1, pool / stride);
  std::vector<double> times;
  for (int i = 0; i < warmup + iters; ++i) {
    const double t0 = now_s();
    const size_t off = pool > 0 && n <= pool / 2 ? (static_cast<size_t>(i) % slots) * stride : 0;
    if (exchange) {
      auto r = t.irecv(peer, rbuf.data() + off, n, kTagData);
      auto s = t.isend(peer, sbuf.data() + off, n, kTagData);
      (void)s->wait();
      (void)r->wait();
    } else if (leader) {
      (void)send(t, peer, sbuf.data(), n, kTagData);
      (void)recv(t, peer, rbuf.data(), n, kTagData);
    } else {
      (void)recv(t, peer, rbuf.data(), n, kTagData);
      (void)send(t, peer, sbuf.data(), n, kTagData);
    }
    if (i >= warmup) times.push_back(now_s() - t0);
  }
  const double per = median_of_means(times);
  return exchange ? per : per / 2;
}

// How much data a rank can cycle through and still find it in cache, measured rather than
// read from sysfs: on a shared host the last-level cache is shared with other tenants.
// Every pair exchanges 1 MiB messages cycling over pools of 1 ... 64 MiB per buffer; the
// hot fraction of a pool is where its time lies between the 1 MiB pool (in cache) and the
// 128 MiB buffers (not). The effective cache is where that fraction falls to one half, in
// the simulator's terms: a block is reused after 2 x pool bytes (send + receive slots).
json measure_cache(Transport& t, const World& w, const Options& o, int peer, double sysfs_bytes) {
  constexpr int64_t kMsg = int64_t{1} << 20;
  std::vector<char> sbuf(kColdBytes, 1), rbuf(sbuf.size(), 0);
  const int n = std::max(20, o.iters);
  auto timed = [&](bool cold, size_t pool) {
    w.barrier();
    double v = peer >= 0 ? time_pair(t, peer, sbuf, rbuf, kMsg, true, o.warmup_iters, n, cold, pool) : -1;
    return w.mean_of_valid(v);
  };
  const double cold = timed(true, 0);
  json probe = json::array();
  std::vector<std::pair<double, double>> frac;  // (reuse distance, hot fraction)
  double hot = 0;
  for (size_t pool = size_t{1} << 20; pool <= (size_t{64} << 20); pool *= 2) {
    const double tp = timed(false, pool);
    if (pool == (size_t{1} << 20)) hot = tp;
    const double h = cold > hot ? std::clamp((cold - tp) / (cold - hot), 0.0, 1.0) : 1.0;
    probe.push_back({{"pool_bytes", pool}, {"exchange_s", tp}, {"hot_fraction", h}});
    frac.emplace_back(2.0 * static_cast<double>(pool), h);
  }
  // The reuse distance at which the hot fraction crosses 1/2 (log interpolation).
  double cache = -1;
  if (cold > hot * 1.2) {  // a clear difference, else nothing to measure
    if (frac.front().second <= 0.5) cache = frac.front().first;
    for (size_t i = 1; i < frac.size() && cache < 0; ++i)
      if (frac[i].second <= 0.5) {
        const auto [d0, h0] = frac[i - 1];
        const auto [d1, h1] = frac[i];
        const double x = h0 > h1 ? (h0 - 0.5) / (h0 - h1) : 1.0;
        cache = std::exp(std::log(d0) + x * (std::log(d1) - std::log(d0)));
      }
  }
  json j = {{"message_bytes", kMsg}, {"exchange_hot_s", hot}, {"exchange_cold_s", cold},
            {"pools", probe}, {"sysfs_bytes_per_rank", sysfs_bytes}};
  // Never more than the sysfs share; cache stays -1 when the probe saw no cliff.
  j["effective_bytes_per_rank"] = cache > 0 ? std::min(cache, sysfs_bytes) : -1.0;
  return j;
}

int iters_for(int64_t bytes, int iters) {
  return bytes >= (4 << 20) ? std::max(10, iters / 2)
                            : std::max(iters, bytes <= 4096 ? 200 : iters);
}

// One link class: every paired rank measures at once; the figures are the mean over pairs.
json measure_links(Transport& t, const World& w, bool same_node, const Options& o,
                   double* alpha_out) {
  const int peer = partner_of(t, same_node);
  if (w.max_of(peer >= 0 ? 1.0 : 0.0) <= 0) return nullptr;  // nobody has a partner
  std::vector<char> sbuf(kColdBytes, 1), rbuf(sbuf.size(), 0);
  json table = json::array();
  std::vector<LinkSample> pp, ex, cold;
  for (int64_t b : kSizes) {
    const int n = iters_for(b, o.iters);
    w.barrier();
    double a = peer >= 0 ? time_pair(t, peer, sbuf, rbuf, b, false, o.warmup_iters, n) : -1;
    w.barrier();
    double e = peer >= 0 ? time_pair(t, peer, sbuf, rbuf, b, true, o.warmup_iters, n) : -1;
    w.barrier();
    double c = peer >= 0 ? time_pair(t, peer, sbuf, rbuf, b, true, o.warmup_iters, n, true) : -1;
    a = w.mean_of_valid(a);
    e = w.mean_of_valid(e);
    c = w.mean_of_valid(c);
    pp.push_back({b, a});
    ex.push_back({b, e});
    cold.push_back({b, c});
    table.push_back({{"bytes", b},
                     {"pingpong_s", a},
                     {"exchange_s", e},
                     {"exchange_cold_s", c},
                     {"pingpong_Bps", b / a},
                     {"exchange_Bps", b / e},
                     {"exchange_cold_Bps", b / c}});
  }
  double ap = 0, bp = 0, ae = 0, be = 0;
  const bool okp = fit_alpha_beta(pp, &ap, &bp), oke = fit_alpha_beta(ex, &ae, &be);
  double ar = 0, br = 0;
  const bool okr = fit_relative(ex, &ar, &br);
  int ranks_paired = 0;
  {
    ranks_paired = static_cast<int>(w.sum_of(peer >= 0 ? 1.0 : 0.0));
  }
  if (alpha_out) *alpha_out = oke ? ae : -1;
  // Effective bandwidth per size beyond the latency; the peak is the link's bandwidth, the
  // factors say how much slower each size moves (caches, MPI protocol switches).
  double peak = 0;
  std::vector<std::pair<double, double>> eff;
  for (const LinkSample& s : ex)
    if (s.bytes >= kFactorsFrom && s.seconds > ae) {
      eff.emplace_back(static_cast<double>(s.bytes),
                       static_cast<double>(s.bytes) / (s.seconds - ae));
      peak = std::max(peak, eff.back().second);
    }
  json factors = json::array(), factors_cold = json::array();
  for (const LinkSample& s : ex)
    if (s.bytes >= kSmallFactorsFrom && s.bytes < kFactorsFrom && s.seconds > ae && peak > 0)
      factors.push_back({static_cast<double>(s.bytes),
                         std::max(1.0, peak * (s.seconds - ae) / static_cast<double>(s.bytes))});
  for (const auto& [n, b] : eff) factors.push_back({n, peak / b});
  for (const LinkSample& s : cold)
    if (s.bytes >= kSmallFactorsFrom && s.seconds > ae && peak > 0)
      factors_cold.push_back(
          {static_cast<double>(s.bytes),
           std::max(1.0, peak * (s.seconds - ae) / static_cast<double>(s.bytes))});
  json j = {{"pairs", ranks_paired / 2},
            {"concurrent", true},
            {"latency_s", oke ? ae : 0.0},
            {"bandwidth_Bps", peak > 0 ? peak : (oke ? be : 0.0)},
            {"bandwidth_factors", factors},
            {"bandwidth_factors_cold", factors_cold},
            {"fit_large", {{"latency_s", oke ? ae : 0.0}, {"bandwidth_Bps", oke ? be : 0.0}}},
            {"pingpong_latency_s", okp ? ap : 0.0},
            {"pingpong_bandwidth_Bps", okp ? bp : 0.0},
            {"fit_all_sizes", {{"latency_s", okr ? ar : 0.0}, {"bandwidth_Bps", okr ? br : 0.0}}},
            {"table", table}};
  return j;
}

// Throughput of two operations (copy, reduce) of `bytes` each, every rank at once, in
// `phases` phases of `per` operations of each kind that start together: a phase lasts
// until its slowest rank is through (the barrier at its end; the longest barrier-to-barrier
// time). Where ranks outnumber cores (np 4 on 2 here) they take turns, and a rank's own op
// times would show a core to itself; the phase's wall time shows the throughput each rank
// gets while all of them work, as in the steps of a ring. Copy and reduce phases alternate,
// so both figures sample the same minutes of a host whose memory speed drifts, and each is
// the median phase: one long stall from other work does not decide it.
// `finish` waits for the operations issued (an asynchronous GPU device's synchronize()).
template <typename A, typename B, typename F>
std::pair<double, double> phase_rates(const World& w, A op_a, B op_b, int phases, int per,
                                      size_t bytes, F finish) {
  op_a(), op_b(), finish();  // first touch
  std::vector<double> ta, tb;
  auto phase = [&](auto& op, std::vector<double>& out) {
    w.barrier();
    const double t0 = now_s();
    for (int i = 0; i < per; ++i) op();
    finish();
    w.barrier();  // a rank that got its core late started late: wait for it
    out.push_back(w.max_of(now_s() - t0) / per);
  };
  for (int ph = 0; ph < phases; ++ph) phase(op_a, ta), phase(op_b, tb);
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double n = static_cast<double>(bytes);
  return {n / median(ta), n / median(tb)};
}

// Copy and reduce throughput of a buffer far larger than the caches (memory-bound: what a
// big fused allreduce sees) and of one that stays in them (`hot`: a small allreduce's data,
// just written by the framework or the transport, is re-read from cache, 2-4x faster here).
json measure_device(const World& w, const Options& o) {
  auto cpu = make_cpu_device();
  std::vector<float> a(kDeviceBytes / sizeof(float), 1.0f), b(a.size(), 2.0f);
  auto rates = [&](size_t bytes, int phases, int per, double* copy, double* reduce) {
    std::tie(*copy, *reduce) = phase_rates(
        w, [&] { cpu->copy(a.data(), b.data(), bytes); },
        [&] {
          cpu->reduce(a.data(), b.data(), static_cast<int64_t>(bytes / sizeof(float)), DataType::kFloat32,
                      ReduceOp::kSum);
        },
        phases, per, bytes, [] {});
  };
  double copy = 0, reduce = 0, copy_hot = 0, reduce_hot = 0;
  // 9 phases of 64 MiB x 3 (a phase is tens of ms: several scheduler turns), and of 1 MiB x 100.
  rates(kDeviceBytes, 9, std::max(3, o.iters / 6), &copy, &reduce);
  rates(kHotDeviceBytes, 9, std::max(100, o.iters * 5), &copy_hot, &reduce_hot);
  return {{"kind", "cpu"},
          {"buffer_bytes", kDeviceBytes},
          {"copy_bandwidth_Bps", copy},
          {"reduce_bandwidth_Bps", reduce},
          {"hot_buffer_bytes", kHotDeviceBytes},
          {"copy_bandwidth_hot_Bps", copy_hot},
          {"reduce_bandwidth_hot_Bps", reduce_hot},
          {"reduce_dtype", "float32"},
          {"concurrent_ranks", w.size}};
}

// --device gpu: the same figures on the rank's GPU through the NCCL backend's CudaDevice
// (copies as the runtime issues them: the copy engine above 1 MiB; the reduce kernel), each
// phase's work queued on the device stream and waited for once. 256 MiB operands are far
// past any L2 (50-60 MB on Hopper); the hot figure uses 4 MiB, which stays in it. Rates
// count the tensor once, like the CPU figures (a copy moves 2x that through memory, a
// reduction 3x).
Status measure_gpu_device(const World& w, const Options& o, json* out) {
  constexpr size_t kBytes = size_t{256} << 20, kHot = size_t{4} << 20;
  std::unique_ptr<Device> gpu;
  std::string name;
  // The GPU of the other modes: local rank (mpirun's, else the world rank) modulo the GPUs.
  const char* lr = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  HVD_RETURN_IF_ERROR(make_gpu_device(lr ? std::atoi(lr) : w.rank, &gpu, &name));
  void* a = gpu->allocate(kBytes);
  void* b = gpu->allocate(kBytes);
  gpu->fill_identity(a, kBytes / sizeof(float), DataType::kFloat32, ReduceOp::kSum);  // zeros
  gpu->fill_identity(b, kBytes / sizeof(float), DataType::kFloat32, ReduceOp::kSum);
  auto rates = [&](size_t bytes, int phases, int per, double* copy, double* reduce) {
    std::tie(*copy, *reduce) = phase_rates(
        w, [&] { gpu->copy(a, b, bytes); },
        [&] {
          gpu->reduce(a, b, static_cast<int64_t>(bytes / sizeof(float)), DataType::kFloat32, ReduceOp::kSum);
        },
        phases, per, bytes, [&] { gpu->synchronize(); });
  };
  double copy = 0, reduce = 0, copy_hot = 0, reduce_hot = 0;
  rates(kBytes, 9, std::max(10, o.iters), &copy, &reduce);
  rates(kHot, 9, std::max(200, o.iters * 10), &copy_hot, &reduce_hot);
  Status err = gpu->last_error();
  gpu->release(a);
  gpu->release(b);
  HVD_RETURN_IF_ERROR(err);
  *out = {{"kind", "gpu"},
          {"name", name},
          {"buffer_bytes", kBytes},
          {"copy_bandwidth_Bps", copy},
          {"reduce_bandwidth_Bps", reduce},
          {"hot_buffer_bytes", kHot},
          {"copy_bandwidth_hot_Bps", copy_hot},
          {"reduce_bandwidth_hot_Bps", reduce_hot},
          {"reduce_dtype", "float32"},
          {"concurrent_ranks", w.size}};
  return Status::OK();
}

// The runtime's cost for a one-element allreduce. On an oversubscribed host the figure is
// bimodal (here 12-15 us or 45-50 us at np 2, depending on where the OS first put the
// runtime's threads, and stable while they run): measured with three fresh runtimes, the
// lowest is the mode that hvdbench's runs see nearly always. Measured twice: as the runtime
// runs (caller_drives on by default: the blocked caller runs the cycle, no thread hand-off)
// and with caller_drives off, where each call pays two hand-offs (caller -> loop ->
// caller); half the difference is one hand-off, the wake-up latency the simulator charges.
Status measure_tiny(const World& w, const Options& o, const Config& cfg, double* tiny,
                    double* per_cycle, std::vector<double>* attempts) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::unique_ptr<RankRuntime> rr;
    Status s = RankRuntime::start(w.mpi ? WorldKind::kMpi : WorldKind::kLocalSingle, cfg, 0, &rr);
    if (!s.ok()) return s;
    float x = 1.0f, y = 0.0f;
    const int iters = std::max(50, o.iters * 10);
    std::vector<double> times;
    for (int i = 0; i < o.warmup_iters + 5 + iters && s.ok(); ++i) {
      const double t0 = now_s();
      s = rr->runtime().allreduce("hvdbench.calibrate.tiny", Tensor{&x, DataType::kFloat32, {1}},
                                  Tensor{&y, DataType::kFloat32, {1}});
      if (i >= o.warmup_iters + 5) times.push_back(now_s() - t0);
    }
    const double t = w.max_of(median_of_means(times));
    const RuntimeStats st = rr->runtime().stats();
    Status d = rr->shutdown();
    if (!s.ok()) return s;
    if (!d.ok()) return d;
    attempts->push_back(t);
    if (attempt == 0 || t < *tiny) {
      *tiny = t;
      *per_cycle = st.cycles ? st.negotiation_s / st.cycles : 0.0;
    }
  }
  return Status::OK();
}

Status measure_runtime(const World& w, const Options& o, json* out) {
  Config cfg;
  if (!knobs_from_env(&cfg)) return Status::InvalidArgument("bad runtime knobs");
  cfg.cycle_time_ms = 0;  // event-driven: no cycle wait in the figure
  cfg.timeline.clear();
  double tiny = 0, per_cycle = 0;
  std::vector<double> attempts;
  HVD_RETURN_IF_ERROR(measure_tiny(w, o, cfg, &tiny, &per_cycle, &attempts));
  *out = {{"tiny_allreduce_s", tiny},
          {"tiny_allreduce_attempts_s", attempts},
          {"negotiation_per_cycle_s", per_cycle},
          {"caller_drives", cfg.caller_drives},
          {"cycle_time_ms", 0}};
  if (cfg.caller_drives) {
    Config loop_only = cfg;
    loop_only.caller_drives = false;
    double tiny_loop = 0, per_cycle_loop = 0;
    std::vector<double> attempts_loop;
    HVD_RETURN_IF_ERROR(measure_tiny(w, o, loop_only, &tiny_loop, &per_cycle_loop, &attempts_loop));
    (*out)["tiny_allreduce_via_loop_s"] = tiny_loop;
    (*out)["hand_off_s"] = std::max(0.0, (tiny_loop - tiny) / 2);
  }
  return Status::OK();
}

// What the transport carries for a tiny allreduce: the cached negotiation (bit vectors up
// and down a binomial tree: 2 ceil(log2 np) messages in a row) and the one-element
// allreduce (recursive doubling: ceil(log2 np) exchanges), each about one smallest-message
// time. The rest of the call is the runtime's own overhead.
void split_overhead(int np, double exchange_latency, json* rt) {
  const int steps = np > 1 ? static_cast<int>(std::ceil(std::log2(np))) : 0;
  const double raw = exchange_latency > 0 ? 3 * steps * exchange_latency : 0.0;
  (*rt)["raw_exchanges_s"] = raw;
  const double overhead = std::max(0.0, (*rt)["tiny_allreduce_s"].get<double>() - raw);
  (*rt)["per_call_overhead_s"] = overhead;
  // With the caller driving, that overhead is the runtime's own work around each of the
  // 3 ceil(log2 np) messages (transport calls, waits, bookkeeping), not hand-offs.
  if (rt->contains("hand_off_s")) (*rt)["per_message_overhead_s"] = steps ? overhead / (3 * steps) : 0.0;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int fail(const World& w, const std::string& what) { return w.fail("calibrate: " + what); }

}  // namespace

int run_calibrate_mode(const Options& o, bool mpi) {
  World w;
  if (Status s = w.start(mpi && BenchWorld::built_with_mpi()); !s.ok()) return fail(w, "MPI start-up: " + s.message());
  json doc = {{"format", "hvdsim-calibration"},
              {"version", 1},
              {"host", host_name()},
              {"date", utc_now()},
              {"np", w.size}};
  // The runtime first: right after the heavy phases below a shared (or CPU-quota'd) host
  // answers small messages late, which would inflate the per-call figure.
  if (w.rank == 0 && !o.quiet) std::cerr << "hvdbench: calibrate: runtime per-call overhead\n";
  json rt;
  Status s = measure_runtime(w, o, &rt);
  if (!s.ok()) return fail(w, "runtime: " + s.message());
  double exchange_latency = -1;
  json links = json::object();
  links["intra_node"] = nullptr;
  links["inter_node"] = nullptr;
#ifdef HVD_HAVE_MPI
  if (mpi && w.size > 1) {
    Config cfg;  // ranks_per_node: a multi-node layout on one host (measure_runtime checked the knobs)
    (void)Config::from_process_env(&cfg);
    std::unique_ptr<Transport> t = make_mpi_world_transport(cfg.ranks_per_node);
    std::map<int, int> per_node;
    for (int r = 0; r < t->size(); ++r) ++per_node[t->node_of(r)];
    doc["nodes"] = per_node.size();
    doc["ranks_per_node"] = per_node.begin()->second;
    if (w.rank == 0 && !o.quiet) std::cerr << "hvdbench: calibrate: links within a node\n";
    links["intra_node"] = measure_links(*t, w, true, o, &exchange_latency);
    if (!links["intra_node"].is_null()) {
      if (w.rank == 0 && !o.quiet) std::cerr << "hvdbench: calibrate: effective cache\n";
      doc["cache_probe"] = measure_cache(*t, w, o, partner_of(*t, true),
                                         cache_share(per_node.begin()->second));
    }
    if (w.rank == 0 && !o.quiet && per_node.size() > 1)
      std::cerr << "hvdbench: calibrate: links across nodes\n";
    double cross = -1;
    if (per_node.size() > 1) links["inter_node"] = measure_links(*t, w, false, o, &cross);
    if (exchange_latency < 0) exchange_latency = cross;
  }
#endif
  if (!doc.contains("nodes")) doc["nodes"] = 1, doc["ranks_per_node"] = w.size;
  doc["links"] = links;
  doc["cache_bytes_per_rank"] = cache_share(doc["ranks_per_node"].get<int>());
  if (doc.contains("cache_probe") && doc["cache_probe"]["effective_bytes_per_rank"].get<double>() > 0)
    doc["cache_bytes_per_rank"] = doc["cache_probe"]["effective_bytes_per_rank"];
  if (w.rank == 0 && !o.quiet) std::cerr << "hvdbench: calibrate: copy and reduce throughput\n";
  if (o.device == "gpu") {
    json g;
    if (Status gs = measure_gpu_device(w, o, &g); !gs.ok()) return fail(w, "--device gpu: " + gs.message());
    doc["device"] = g;
  } else {
    doc["device"] = measure_device(w, o);
  }
  split_overhead(w.size, exchange_latency, &rt);
  doc["runtime"] = rt;
  int code = kExitOk;
  if (w.rank == 0) {
    std::ofstream f(o.calibrate);
    f << doc.dump(2) << "\n";
    if (!f) {
      std::cerr << "hvdbench: --calibrate: cannot write '" << o.calibrate << "'\n";
      code = kExitRuntimeFailure;
    } else {
      auto show = [](const json& l, const char* name) {
        if (l.is_null()) return;
        std::printf(
            "%-10s latency %8.2f us, bandwidth %8.3f GB/s (exchange; ping-pong %.2f us, "
            "%.3f GB/s), %d pair(s) at once\n",
            name, l["latency_s"].get<double>() * 1e6, l["bandwidth_Bps"].get<double>() / 1e9,
            l["pingpong_latency_s"].get<double>() * 1e6,
            l["pingpong_bandwidth_Bps"].get<double>() / 1e9, l["pairs"].get<int>());
      };
      std::printf("# hvdbench --calibrate: %d rank(s) on %d node(s) -> %s\n", w.size,
                  doc["nodes"].get<int>(), o.calibrate.c_str());
      show(doc["links"]["intra_node"], "intra-node");
      show(doc["links"]["inter_node"], "inter-node");
      std::printf("device     copy %.2f GB/s, float32 sum reduce %.2f GB/s per rank%s\n",
                  doc["device"]["copy_bandwidth_Bps"].get<double>() / 1e9,
                  doc["device"]["reduce_bandwidth_Bps"].get<double>() / 1e9,
                  doc["device"].contains("name") ? (" (" + doc["device"]["name"].get<std::string>() + ")").c_str() : "");
      std::printf("runtime    tiny allreduce %.1f us, per-call overhead %.1f us",
                  rt["tiny_allreduce_s"].get<double>() * 1e6,
                  rt["per_call_overhead_s"].get<double>() * 1e6);
      if (rt.contains("hand_off_s"))
        std::printf(" (%.2f us per message); through the loop thread %.1f us (hand-off %.1f us)",
                    rt.value("per_message_overhead_s", 0.0) * 1e6,
                    rt["tiny_allreduce_via_loop_s"].get<double>() * 1e6,
                    rt["hand_off_s"].get<double>() * 1e6);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  w.finalize();
  return code;
}

}  // namespace hvd::bench
