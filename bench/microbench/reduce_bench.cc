// Reduce kernels (reduce_host) per dtype against memcpy of the same number of bytes.
// Bytes/s counts the tensor size once for both, so the ratio reads "how close to a copy".
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/local/reduce_kernels.h"
#include "hvd/types.h"

namespace {

struct Aligned {
  explicit Aligned(size_t bytes) : p(static_cast<char*>(std::aligned_alloc(64, bytes))) {
    std::memset(p, 0, bytes);  // zeros: no denormals, no NaNs, pages touched
  }
  ~Aligned() { std::free(p); }
  char* p;
};

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Aligned a(bytes), b(bytes);
  for (auto _ : state) {
    std::memcpy(a.p, b.p, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void BM_Reduce(benchmark::State& state, hvd::DataType dt, hvd::ReduceOp op) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const int64_t count = static_cast<int64_t>(bytes / hvd::dtype_size(dt));
  Aligned a(bytes), b(bytes);
  for (auto _ : state) {
    hvd::reduce_host(a.p, b.p, count, dt, op);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

// 256 KiB (cache resident), 4 MiB (a pipeline segment), 64 MiB (memory bound).
void sizes(benchmark::internal::Benchmark* b) { b->Arg(256 << 10)->Arg(4 << 20)->Arg(64 << 20); }

BENCHMARK(BM_Memcpy)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, float32_sum, hvd::DataType::kFloat32, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, float64_sum, hvd::DataType::kFloat64, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, float16_sum, hvd::DataType::kFloat16, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, bfloat16_sum, hvd::DataType::kBFloat16, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, int32_sum, hvd::DataType::kInt32, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, int64_sum, hvd::DataType::kInt64, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, int8_sum, hvd::DataType::kInt8, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, uint8_sum, hvd::DataType::kUInt8, hvd::ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, float32_max, hvd::DataType::kFloat32, hvd::ReduceOp::kMax)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Reduce, float32_product, hvd::DataType::kFloat32, hvd::ReduceOp::kProduct)->Apply(sizes);

}  // namespace
