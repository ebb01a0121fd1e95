// The NCCL backend's device work on a real GPU, each figure against cudaMemcpyAsync of the
// same buffers measured in the same run (hvd_gpu_microbench; needs a GPU, built with the
// NCCL backend):
//
//   BM_GpuMemcpy      device-to-device copy on the backend's device stream: the peer
//   BM_GpuReduce      CudaDevice::reduce per dtype and op: reads two operands, writes one
//   BM_GpuScale       CudaDevice::scale (average's 1/n, pre/postscale): reads and writes one
//   BM_GpuFusionCopy  a model's gradients copied into one fusion buffer through
//                     CudaDevice::copy (queued, then issued as plan_copies says: memcpy for
//                     large pieces, the batched-copy kernel for small ones)
//
// Counters: `mem_GBps` = bytes the operation must move through device memory per second
// (copy 2x, reduce 3x, scale 2x the buffer); `of_memcpy` = mem_GBps / the memcpy's mem_GBps
// for the same bytes, timed just before (1.0 = as fast as the copy engine path; the target
// for the kernels is >= 0.8 on buffers larger than the L2 cache). Times are CUDA events on
// the device stream (manual time), so launch gaps between iterations count too.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backends/nccl/cuda_context.h"
#include "backends/nccl/cuda_device.h"
#include "hvd/types.h"
#include "hvd/workloads/model_registry.h"

namespace {

using hvd::DataType;
using hvd::ReduceOp;

// One context and device for the whole run (cudaMalloc'd once, cached by the device).
struct Gpu {
  std::shared_ptr<hvd::nccl::CudaContext> ctx;
  std::unique_ptr<hvd::nccl::CudaDevice> dev;
  std::string why;
};

Gpu& gpu() {
  static Gpu g = [] {
    Gpu x;
    hvd::nccl::ContextOptions o;
    o.synchronous = false;  // queue the iterations; the events below bracket them
    hvd::Status s = hvd::nccl::CudaContext::create(0, o, &x.ctx);
    if (!s.ok()) {
      x.why = s.message();
      return x;
    }
    x.dev = std::make_unique<hvd::nccl::CudaDevice>(x.ctx);
    return x;
  }();
  return g;
}

// Device buffer pair of `bytes`, zeroed (no NaNs or denormals).
struct Buffers {
  explicit Buffers(size_t bytes) : n(bytes) {
    a = gpu().dev->allocate(bytes);
    b = gpu().dev->allocate(bytes);
    (void)cudaMemset(a, 0, bytes);
    (void)cudaMemset(b, 0, bytes);
    (void)cudaDeviceSynchronize();
  }
  ~Buffers() {
    gpu().dev->release(a);
    gpu().dev->release(b);
  }
  void* a;
  void* b;
  size_t n;
};

// Seconds per call of `body`, `reps` calls between two events on the device stream.
template <typename F>
double time_on_stream(int reps, F&& body) {
  cudaStream_t s = gpu().ctx->stream();
  cudaEvent_t e0, e1;
  (void)cudaEventCreate(&e0);
  (void)cudaEventCreate(&e1);
  (void)cudaEventRecord(e0, s);
  for (int i = 0; i < reps; ++i) body();
  (void)gpu().ctx->flush();
  (void)cudaEventRecord(e1, s);
  (void)cudaEventSynchronize(e1);
  float ms = 0;
  (void)cudaEventElapsedTime(&ms, e0, e1);
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  return ms / 1e3 / reps;
}

double memcpy_seconds(void* dst, const void* src, size_t bytes, int reps) {
  cudaStream_t s = gpu().ctx->stream();
  (void)time_on_stream(2, [&] { (void)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s); });
  return time_on_stream(reps, [&] { (void)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s); });
}

bool usable(benchmark::State& state) {
  if (gpu().dev) return true;
  state.SkipWithError(("no usable GPU: " + gpu().why).c_str());
  return false;
}

// Runs `op` for the state's iterations (10 calls per timed batch), reports mem_GBps
// (`moved` bytes per call) and of_memcpy against a copy of `copy_bytes` timed first.
template <typename F>
void measure(benchmark::State& state, void* dst, const void* src, size_t copy_bytes, double moved, F&& op) {
  const double t_copy = memcpy_seconds(dst, src, copy_bytes, 20);
  (void)time_on_stream(3, op);  // warm-up
  constexpr int kBatch = 10;
  double total = 0;
  int64_t calls = 0;
  for (auto _ : state) {
    const double t = time_on_stream(kBatch, op);
    state.SetIterationTime(t * kBatch);
    total += t * kBatch;
    calls += kBatch;
  }
  const double per_call = total / static_cast<double>(calls);
  const double gbps = moved / per_call / 1e9;
  const double copy_gbps = 2.0 * static_cast<double>(copy_bytes) / t_copy / 1e9;
  state.counters["mem_GBps"] = gbps;
  state.counters["memcpy_GBps"] = copy_gbps;
  state.counters["of_memcpy"] = gbps / copy_gbps;
  state.SetBytesProcessed(calls * static_cast<int64_t>(copy_bytes));
  hvd::Status err = gpu().dev->take_error();
  if (!err.ok()) state.SkipWithError(err.message().c_str());
}

void BM_GpuMemcpy(benchmark::State& state) {
  if (!usable(state)) return;
  Buffers buf(static_cast<size_t>(state.range(0)));
  cudaStream_t s = gpu().ctx->stream();
  measure(state, buf.a, buf.b, buf.n, 2.0 * buf.n,
          [&] { (void)cudaMemcpyAsync(buf.a, buf.b, buf.n, cudaMemcpyDeviceToDevice, s); });
}

void BM_GpuReduce(benchmark::State& state, DataType dt, ReduceOp op) {
  if (!usable(state)) return;
  Buffers buf(static_cast<size_t>(state.range(0)));
  const int64_t count = static_cast<int64_t>(buf.n / hvd::dtype_size(dt));
  measure(state, buf.a, buf.b, buf.n, 3.0 * buf.n, [&] { gpu().dev->reduce(buf.a, buf.b, count, dt, op); });
}

void BM_GpuScale(benchmark::State& state, DataType dt) {
  if (!usable(state)) return;
  Buffers buf(static_cast<size_t>(state.range(0)));
  const int64_t count = static_cast<int64_t>(buf.n / hvd::dtype_size(dt));
  measure(state, buf.a, buf.b, buf.n, 2.0 * buf.n, [&] { gpu().dev->scale(buf.a, count, dt, 0.125); });
}

// Every gradient of `model` (float32, backprop order) copied into one fusion buffer, as
// MEMCPY_IN_FUSION_BUFFER does for one fused response; the peer is one memcpy of the total.
void BM_GpuFusionCopy(benchmark::State& state, const char* model) {
  if (!usable(state)) return;
  auto m = hvd::workloads::find_model(model);
  if (!m.ok()) {
    state.SkipWithError(m.error().c_str());
    return;
  }
  std::vector<size_t> sizes;
  size_t total = 0;
  for (const auto& t : m.value().tensors) {
    sizes.push_back(static_cast<size_t>(t.elements) * 4);
    total += sizes.back();
  }
  Buffers buf(total);  // a: the fusion buffer, b: the gradients back to back (apart, unaligned)
  std::vector<const char*> src;
  size_t off = 0;
  for (size_t s : sizes) {
    src.push_back(static_cast<const char*>(buf.b) + off);
    off += s;
  }
  measure(state, buf.a, buf.b, total, 2.0 * static_cast<double>(total), [&] {
    size_t at = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      gpu().dev->copy(static_cast<char*>(buf.a) + at, src[i], sizes[i]);
      at += sizes[i];
    }
  });
  state.counters["tensors"] = static_cast<double>(sizes.size());
}

// 4 MiB (L2-resident on Hopper: 50-60 MB of L2), 64 MiB and 512 MiB (memory-bound).
void sizes(benchmark::internal::Benchmark* b) {
  b->Arg(4 << 20)->Arg(64 << 20)->Arg(512 << 20)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_GpuMemcpy)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, float32_sum, DataType::kFloat32, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, float64_sum, DataType::kFloat64, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, float16_sum, DataType::kFloat16, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, bfloat16_sum, DataType::kBFloat16, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, int32_sum, DataType::kInt32, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, int64_sum, DataType::kInt64, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, int8_sum, DataType::kInt8, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, uint8_sum, DataType::kUInt8, ReduceOp::kSum)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, float32_max, DataType::kFloat32, ReduceOp::kMax)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuReduce, float32_product, DataType::kFloat32, ReduceOp::kProduct)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuScale, float32, DataType::kFloat32)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuScale, float16, DataType::kFloat16)->Apply(sizes);
BENCHMARK_CAPTURE(BM_GpuFusionCopy, resnet50, "resnet50")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuFusionCopy, resnet101, "resnet101")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuFusionCopy, vgg16, "vgg16")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuFusionCopy, bert_large, "bert-large")->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
