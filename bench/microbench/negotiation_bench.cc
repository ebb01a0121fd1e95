// Negotiation cost: one step = N tiny allreduces (4 bytes each) on 2 in-process ranks, with
// the response cache on (capacity 1024: after the first step every tensor is a cache hit,
// negotiated by a bit-vector allreduce) or off (capacity 0: every tensor's request travels
// to the coordinator each step). Cycle time 0.1 ms, so the cycle wait stays small.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hvd/local.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"

namespace {

constexpr int kRanks = 2;

struct Rank {
  hvd::OwnedSeams seams;  // host seams over the LocalWorld transport (as run_local's ranks)
  std::unique_ptr<hvd::Runtime> rt;
  std::vector<float> values;
  std::vector<std::string> names;
};

bool step(Rank& r) {
  std::vector<hvd::Handle> hs;
  for (size_t i = 0; i < r.names.size(); ++i) {
    hvd::Tensor t{&r.values[i], hvd::DataType::kFloat32, {1}};
    hs.push_back(r.rt->allreduce_async(r.names[i], t, t, hvd::ReduceOp::kSum));
  }
  bool ok = true;
  for (auto& h : hs) ok = h->wait().ok() && ok;
  return ok;
}

void BM_NegotiationStep(benchmark::State& state) {
  const int tensors = static_cast<int>(state.range(0));
  const bool cache = state.range(1) != 0;
  hvd::Config cfg;
  cfg.cache_capacity = cache ? 1024 : 0;
  cfg.cycle_time_ms = 0.1;
  hvd::LocalWorld world(kRanks);
  std::vector<Rank> ranks(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    ranks[r].seams = hvd::host_seams(world.transport(r));
    ranks[r].values.assign(static_cast<size_t>(tensors), 1.0f);
    for (int i = 0; i < tensors; ++i) ranks[r].names.push_back("grad." + std::to_string(i));
    ranks[r].rt = std::make_unique<hvd::Runtime>(hvd::RuntimeOptions{ranks[r].seams.view(), cfg});
  }
  // start() and every step are collective: the peer rank mirrors this thread step by step.
  const int64_t iters = state.max_iterations;
  std::thread peer([&] {
    if (!ranks[1].rt->start().ok()) return;
    for (int64_t i = 0; i < iters + 1; ++i) step(ranks[1]);
    (void)ranks[1].rt->shutdown();
  });
  if (!ranks[0].rt->start().ok()) state.SkipWithError("runtime start failed");
  step(ranks[0]);  // first step fills the cache
  const hvd::RuntimeStats before = ranks[0].rt->stats();
  for (auto _ : state) step(ranks[0]);
  const hvd::RuntimeStats after = ranks[0].rt->stats();
  (void)ranks[0].rt->shutdown();
  peer.join();
  const double hits = static_cast<double>(after.cache_hits - before.cache_hits);
  const double misses = static_cast<double>(after.cache_misses - before.cache_misses);
  state.counters["hit_rate"] = hits + misses > 0 ? hits / (hits + misses) : 0;
  state.counters["time_per_tensor"] = benchmark::Counter(
      static_cast<double>(tensors) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * tensors);
}

BENCHMARK(BM_NegotiationStep)
    ->ArgNames({"tensors", "cache"})
    ->ArgsProduct({{10, 100, 1000}, {1, 0}})
    ->Iterations(30)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
