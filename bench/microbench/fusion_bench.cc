// Fusion-buffer copies: N tensors of one size copied into (and out of) one buffer through
// the CPU Device, as the executor does for a fused response.
#include <benchmark/benchmark.h>

#include <vector>

#include "hvd/device.h"

namespace {

void BM_FusionCopyInOut(benchmark::State& state) {
  const int tensors = static_cast<int>(state.range(0));
  const size_t each = static_cast<size_t>(state.range(1));
  auto dev = hvd::make_cpu_device();
  std::vector<hvd::DeviceBuffer> grads;
  for (int i = 0; i < tensors; ++i) grads.emplace_back(dev.get(), each);
  hvd::DeviceBuffer fusion(dev.get(), each * static_cast<size_t>(tensors));
  for (auto& g : grads) std::fill_n(static_cast<char*>(g.data()), each, 0);
  for (auto _ : state) {
    char* f = static_cast<char*>(fusion.data());
    for (auto& g : grads) dev->copy(f + (&g - grads.data()) * each, g.data(), each);
    for (auto& g : grads) dev->copy(g.data(), f + (&g - grads.data()) * each, each);
    benchmark::ClobberMemory();
  }
  // Bytes fused per iteration (each byte is copied in and out once).
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * tensors *
                          static_cast<int64_t>(each));
}

// (tensors, bytes each): many small (ResNet biases/BN), a few large, one huge.
BENCHMARK(BM_FusionCopyInOut)
    ->Args({1000, 1 << 10})
    ->Args({160, 64 << 10})
    ->Args({16, 4 << 20})
    ->Args({1, 64 << 20});

}  // namespace
