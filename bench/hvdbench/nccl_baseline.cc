// ncclAllReduce timed straight on the NCCL world's communicator (nccl_baseline.h).
#include "nccl_baseline.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>

#include "backends/nccl/cuda_device.h"
#include "backends/nccl/nccl_transport.h"
#include "backends/nccl/nccl_types.h"

namespace hvd::bench {

Status time_direct_nccl_allreduce(Transport& world, size_t bytes, int warmup, int iters,
                                  double* seconds) {
  auto* t = dynamic_cast<nccl::NcclTransport*>(&world);
  if (!t || !seconds || iters < 1 || warmup < 0)
    return Status::InvalidArgument(
        "time_direct_nccl_allreduce: needs the transport of make_nccl_world and iters >= 1");
  Status s;
  nccl::NcclComm* c = t->comm(&s);
  if (!c) return s;
  nccl::CudaContext& ctx = c->context();
  ctx.activate();
  const size_t count = std::max<size_t>(1, bytes / sizeof(float));
  void* buf = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  s = nccl::cuda_status(cudaMalloc(&buf, count * sizeof(float)), "cudaMalloc");
  if (s.ok()) s = nccl::cuda_status(cudaMemset(buf, 0, count * sizeof(float)), "cudaMemset");
  if (s.ok()) s = nccl::cuda_status(cudaEventCreate(&start), "cudaEventCreate");
  if (s.ok()) s = nccl::cuda_status(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; s.ok() && i < warmup + iters; ++i) {
    if (i == warmup) s = nccl::cuda_status(cudaEventRecord(start, c->stream()), "cudaEventRecord");
    if (s.ok())
      s = nccl::nccl_status(
          ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, c->get(), c->stream()),
          "ncclAllReduce");
  }
  if (s.ok()) s = nccl::cuda_status(cudaEventRecord(stop, c->stream()), "cudaEventRecord");
  if (s.ok()) s = nccl::cuda_status(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  if (s.ok()) s = nccl::cuda_status(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  if (s.ok()) *seconds = static_cast<double>(ms) * 1e-3 / iters;
  if (start) (void)cudaEventDestroy(start);
  if (stop) (void)cudaEventDestroy(stop);
  if (buf) (void)cudaFree(buf);
  return s;
}

Status time_direct_nccl_allreduce(Transport& world, const DirectAllreduce& a, double* seconds) {
  auto* t = dynamic_cast<nccl::NcclTransport*>(&world);
  if (!t || !seconds || !a.send || !a.recv || a.count < 1 || a.iters < 1 || a.warmup < 0)
    return Status::InvalidArgument(
        "time_direct_nccl_allreduce: needs the transport of make_nccl_world, device buffers, "
        "count >= 1 and iters >= 1");
  ncclDataType_t type;
  HVD_RETURN_IF_ERROR(nccl::to_nccl_type(a.dtype, &type));
  nccl::NcclReduction red;
  HVD_RETURN_IF_ERROR(nccl::to_nccl_reduction(a.op, a.dtype, world.size(), nccl::nccl_version(), &red));
  Status s;
  nccl::NcclComm* c = t->comm(&s);
  if (!c) return s;
  c->context().activate();
  // Work the caller queued on the device stream (e.g. filling the input) comes first.
  s = c->context().synchronize();
  auto once = [&] {
    return nccl::nccl_status(ncclAllReduce(a.send, a.recv, static_cast<size_t>(a.count), type,
                                           red.op, c->get(), c->stream()),
                             "ncclAllReduce");
  };
  for (int i = 0; s.ok() && i < a.warmup; ++i) s = once();
  if (s.ok()) s = nccl::cuda_status(cudaStreamSynchronize(c->stream()), "cudaStreamSynchronize");
  // Every rank starts the timed loop together (a one-word ncclAllReduce + synchronisation).
  if (s.ok()) s = t->native()->barrier();
  if (!s.ok()) return s;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; s.ok() && i < a.iters; ++i) s = once();
  if (s.ok()) s = nccl::cuda_status(cudaStreamSynchronize(c->stream()), "cudaStreamSynchronize");
  if (!s.ok()) return s;
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / a.iters;
  return Status::OK();
}

}  // namespace hvd::bench
