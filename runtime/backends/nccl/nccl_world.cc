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

}  // namespace hvd
