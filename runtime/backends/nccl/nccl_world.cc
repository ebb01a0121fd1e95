// The public entry points of the NCCL backend (hvd/nccl.h).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>

#include "backends/nccl/cuda_device.h"
#include "backends/nccl/nccl_bootstrap.h"
#include "backends/nccl/nccl_transport.h"
#include "backends/nccl/nccl_types.h"
#include "hvd/nccl.h"

namespace hvd {

bool cuda_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (why)
      *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" +
             cudaGetErrorString(e) + "); is the NVIDIA driver installed and a GPU visible?";
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA-capable device is visible (check CUDA_VISIBLE_DEVICES)";
    return false;
  }
  return true;
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

Status copy_host_device(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::OK();
  if (!dst || !src) return Status::InvalidArgument("copy_host_device: null pointer");
  // cudaMemcpy from pageable memory may return before the DMA lands, and the backend's
  // streams do not synchronise with the legacy stream: copy on it and wait for it.
  Status s = nccl::cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, nullptr),
                               "cudaMemcpyAsync");
  if (s.ok()) s = nccl::cuda_status(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  return s;
}

std::string nccl_version_string() {
  const int v = nccl::nccl_version();
  int rt = 0, drv = 0;
  (void)cudaRuntimeGetVersion(&rt);
  (void)cudaDriverGetVersion(&drv);
  std::string s = "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) +
                  "." + std::to_string(v % 100) + ", CUDA runtime " + std::to_string(rt / 1000) +
                  "." + std::to_string(rt % 1000 / 10);
  s += drv ? ", driver " + std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10)
           : ", no driver";
  return s;
}

namespace {

// Whether this rank can run the backend on `device_id`; creates the CUDA context if so.
Status local_readiness(int device_id, const NcclOptions& opts,
                       std::shared_ptr<nccl::CudaContext>* ctx) {
  std::string why;
  if (!cuda_available(&why)) return Status::Precondition("the NCCL backend needs a GPU: " + why);
  int n = 0;
  (void)cudaGetDeviceCount(&n);
  if (device_id < 0 || device_id >= n)
    return Status::InvalidArgument("GPU " + std::to_string(device_id) +
                                   " does not exist (this node has " + std::to_string(n) + ")");
  nccl::ContextOptions co;
  co.synchronous = opts.synchronous;
  return nccl::CudaContext::create(device_id, co, ctx);
}

}  // namespace

Status make_nccl_world(Transport& host_world, int device_id, std::unique_ptr<Transport>* out,
                       std::unique_ptr<Device>* gpu, const NcclOptions& options) {
  if (!out || !gpu) return Status::InvalidArgument("make_nccl_world: null output pointer");
  std::shared_ptr<nccl::CudaContext> ctx;
  const Status local = local_readiness(device_id, options, &ctx);
  // Every rank learns whether every rank has a GPU before any NCCL call: no rank is left
  // waiting in ncclCommInitRank for a peer that gave up.
  const Status all = nccl::agree(host_world, 0, local);
  if (!local.ok()) return local;
  if (!all.ok()) return all;
  std::shared_ptr<nccl::NcclComm> comm;
  HVD_RETURN_IF_ERROR(nccl::NcclComm::create(ctx, host_world, 1, &comm));
  *gpu = std::make_unique<nccl::CudaDevice>(ctx);
  *out =
      std::make_unique<nccl::NcclTransport>(&host_world, nullptr, ctx, std::move(comm), 1, options);
  return Status::OK();
}

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
  Status s = nccl::to_nccl_type(a.dtype, &type);
  if (!s.ok()) return s;
  nccl::NcclReduction red;
  s = nccl::to_nccl_reduction(a.op, a.dtype, world.size(), nccl::nccl_version(), &red);
  if (!s.ok()) return s;
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

}  // namespace hvd
