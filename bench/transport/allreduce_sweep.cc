// hvd_allreduce_sweep: the facade's allreduce (float32, sum) timed from 8 B to 64 MiB on
// whatever world hvd::init() finds, so the same program compares transports:
//   HVD_CYCLE_TIME=0 hvdrun -np 4 build/bench/transport/hvd_allreduce_sweep        (MPI)
//   HVD_CYCLE_TIME=0 hvdrun --tcp -np 4 build/bench/transport/hvd_allreduce_sweep  (TCP)
// Rank 0 prints a Markdown table: size, mean time per allreduce, bus bandwidth
// (2 (n-1)/n bytes / time, as nccl-tests reports it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "hvd/hvd.h"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Mean seconds per allreduce of `bytes` (after warm-up), the slowest rank's.
double time_allreduce(size_t bytes, int iters) {
  std::vector<float> buf(std::max<size_t>(bytes / 4, 1), 1.0f);
  hvd::Tensor t{buf.data(), hvd::DataType::kFloat32, {static_cast<int64_t>(buf.size())}};
  for (int i = 0; i < 3; ++i) (void)hvd::allreduce("sweep.warm", t, t, hvd::ReduceOp::kSum);
  (void)hvd::barrier();
  const double t0 = now_s();
  for (int i = 0; i < iters; ++i) {
    hvd::Status s = hvd::allreduce("sweep", t, t, hvd::ReduceOp::kSum);
    if (!s.ok()) {
      std::fprintf(stderr, "allreduce failed: %s\n", s.to_string().c_str());
      return -1;
    }
  }
  double dt = (now_s() - t0) / iters;
  hvd::Tensor d{&dt, hvd::DataType::kFloat64, {1}};
  (void)hvd::allreduce("sweep.max", d, d, hvd::ReduceOp::kMax);
  return dt;
}

}  // namespace

int main() {
  hvd::Status s = hvd::init();
  if (!s.ok()) {
    std::fprintf(stderr, "hvd::init failed: %s\n", s.to_string().c_str());
    return 1;
  }
  const int n = hvd::size();
  if (hvd::rank() == 0) std::printf("| bytes | time (us) | busbw (GB/s) |\n|---:|---:|---:|\n");
  for (size_t bytes : {size_t{8}, size_t{64}, size_t{512}, size_t{4} << 10, size_t{32} << 10, size_t{256} << 10,
                       size_t{2} << 20, size_t{16} << 20, size_t{64} << 20}) {
    const int iters = static_cast<int>(std::clamp<size_t>((size_t{256} << 20) / bytes, 5, 200));
    const double dt = time_allreduce(bytes, iters);
    if (dt < 0) return 1;
    const double busbw = n > 1 ? 2.0 * (n - 1) / n * static_cast<double>(bytes) / dt / 1e9 : 0;
    if (hvd::rank() == 0) std::printf("| %zu | %.1f | %.3f |\n", bytes, dt * 1e6, busbw);
  }
  (void)hvd::shutdown();
  return 0;
}
