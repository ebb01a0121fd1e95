// Where the microseconds of one small allreduce go: the full runtime API (enqueue, the
// caller running the cycle, the cache-bit negotiation, execution, completion and the handle
// wait) on 1 and 2 in-process ranks, with the eager path on (the data rides on the bit
// exchange) and off (a bit exchange, then the algorithm's own exchange), next to the pieces
// it is made of on the same transport: one exchange of the same bytes, and the control
// plane's bit exchange alone. Counters: the runtime's own negotiation and execution time
// per call (RuntimeStats), and the share of calls reduced on the bit exchange.
// The in-process transport hands messages between threads; hvdbench --collective
// allreduce -np 2 is the same breakdown over MPI (docs/benchmarks.md, "Small messages").
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/control_plane.h"
#include "hvd/local.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"

namespace {

// One allreduce of `bytes` per call on each rank; rank 0 is timed, the others mirror it.
void BM_SmallAllreduce(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const int64_t count = state.range(1) / 4;
  hvd::Config cfg;
  cfg.cycle_time_ms = 0;  // event driven: the blocked caller runs the cycle
  cfg.eager_allreduce_bytes = state.range(2) ? 4096 : 0;
  hvd::LocalWorld world(ranks);
  std::vector<hvd::OwnedSeams> seams(static_cast<size_t>(ranks));
  std::vector<std::unique_ptr<hvd::Runtime>> rt(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    seams[static_cast<size_t>(r)] = hvd::host_seams(world.transport(r));
    rt[static_cast<size_t>(r)] = std::make_unique<hvd::Runtime>(hvd::RuntimeOptions{seams[static_cast<size_t>(r)].view(), cfg});
  }
  const int64_t iters = static_cast<int64_t>(state.max_iterations) + 10;  // + warm-up
  auto calls = [&](hvd::Runtime& x, int64_t n, std::vector<float>& v) {
    hvd::Tensor t{v.data(), hvd::DataType::kFloat32, {count}};
    for (int64_t i = 0; i < n; ++i)
      if (!x.allreduce("small", t, t, hvd::ReduceOp::kSum).ok()) return false;
    return true;
  };
  std::vector<std::thread> peers;
  for (int r = 1; r < ranks; ++r)
    peers.emplace_back([&, r] {
      std::vector<float> v(static_cast<size_t>(count), 1.0f);
      if (!rt[static_cast<size_t>(r)]->start().ok()) return;
      calls(*rt[static_cast<size_t>(r)], iters, v);
      (void)rt[static_cast<size_t>(r)]->shutdown();
    });
  std::vector<float> v(static_cast<size_t>(count), 1.0f);
  if (!rt[0]->start().ok()) state.SkipWithError("runtime start failed");
  calls(*rt[0], 10, v);
  const hvd::RuntimeStats before = rt[0]->stats();
  for (auto _ : state)
    if (!calls(*rt[0], 1, v)) state.SkipWithError("allreduce failed");
  const hvd::RuntimeStats after = rt[0]->stats();
  (void)rt[0]->shutdown();
  for (auto& p : peers) p.join();
  const double n = static_cast<double>(state.iterations());
  state.counters["negotiation_us"] = (after.negotiation_s - before.negotiation_s) / n * 1e6;
  state.counters["execution_us"] = (after.execution_s - before.execution_s) / n * 1e6;
  state.counters["eager_share"] = static_cast<double>(after.eager_tensors - before.eager_tensors) / n;
}

// One exchange of `bytes` between 2 ranks on the same transport (sendrecv): the floor of
// one message round.
void BM_TransportExchange(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  hvd::LocalWorld world(2);
  auto t0 = world.transport(0), t1 = world.transport(1);
  const int64_t iters = static_cast<int64_t>(state.max_iterations);
  std::thread peer([&] {
    std::vector<char> a(bytes), b(bytes);
    for (int64_t i = 0; i < iters; ++i) (void)hvd::sendrecv(*t1, 0, a.data(), bytes, 0, b.data(), bytes, 5);
  });
  std::vector<char> a(bytes), b(bytes);
  for (auto _ : state) (void)hvd::sendrecv(*t0, 1, a.data(), bytes, 1, b.data(), bytes, 5);
  peer.join();
}

// The control plane's AND/OR exchange of one cycle's bits (1 flag word + `words` bit words
// each), without and with an 8-byte segment riding on it.
void BM_BitExchange(benchmark::State& state) {
  const size_t words = static_cast<size_t>(state.range(0));
  const bool segment = state.range(1) != 0;
  hvd::LocalWorld world(2);
  std::vector<hvd::OwnedSeams> seams;
  seams.push_back(hvd::host_seams(world.transport(0)));
  seams.push_back(hvd::host_seams(world.transport(1)));
  const int64_t iters = static_cast<int64_t>(state.max_iterations);
  auto round = [&](hvd::ControlPlane& cp, hvd::BitsPayload* pl) {
    std::vector<uint64_t> a(1 + words, 0), o(1 + words, 0);
    a[0] = 1;
    a[1] = 1;
    if (pl) {
      a[0] |= pl->flag;
      pl->data.assign(8, 0);
    }
    return cp.allreduce_bits(&a, &o, pl).ok();
  };
  auto payload = [&] {
    auto pl = std::make_unique<hvd::BitsPayload>();
    pl->flag = 2;
    pl->bytes_of = [](int bit) { return bit == 0 ? size_t{8} : size_t{0}; };
    pl->reduce = [](void* dst, const void* a, const void*, int) { std::memcpy(dst, a, 8); };
    return pl;
  };
  std::thread peer([&] {
    hvd::Logger log(nullptr, hvd::LogLevel::kError, 1);
    hvd::ControlPlane cp(*seams[1].transport, *seams[1].platform, log, 60, 0);
    auto pl = segment ? payload() : nullptr;
    for (int64_t i = 0; i < iters; ++i) round(cp, pl.get());
  });
  hvd::Logger log(nullptr, hvd::LogLevel::kError, 0);
  hvd::ControlPlane cp(*seams[0].transport, *seams[0].platform, log, 60, 0);
  auto pl = segment ? payload() : nullptr;
  for (auto _ : state)
    if (!round(cp, pl.get())) state.SkipWithError("bit exchange failed");
  peer.join();
}

}  // namespace

BENCHMARK(BM_SmallAllreduce)
    ->ArgNames({"ranks", "bytes", "eager"})
    ->ArgsProduct({{1, 2}, {8, 4096}, {1, 0}})
    ->Iterations(20000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TransportExchange)->Arg(8)->Arg(4096)->Iterations(20000)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BitExchange)
    ->ArgNames({"words", "segment"})
    ->ArgsProduct({{1, 16}, {0, 1}})
    ->Iterations(20000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
