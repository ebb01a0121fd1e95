#include "gpu_world.h"

#include "options.h"
#ifdef HVD_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "backends/nccl/cuda_context.h"
#include "backends/nccl/cuda_device.h"
#include "hvd/nccl.h"
#include "nccl_baseline.h"
#endif

namespace hvd::bench {

#ifdef HVD_HAVE_NCCL

bool built_with_nccl() {
  return true;
}

GpuVerdict check_gpu_here() {
  std::string why;
  if (!cuda_available(&why))
    // The wording of the NCCL backend (make_nccl_world), so a rank that finds out later
    // says the same.
    return {kExitRuntimeFailure, "--device gpu: the NCCL backend needs a GPU: " + why};
  return {};
}

int gpu_count() {
  return cuda_device_count();
}

Status make_gpu_world(Transport& host, std::unique_ptr<Transport>* world,
                      std::unique_ptr<Device>* gpu) {
  const int n = cuda_device_count();
  // With no GPU, make_nccl_world still runs its agreement round and says why on every rank.
  const int id = n > 0 ? host.local_rank() % n : 0;
  return make_nccl_world(host, id, world, gpu);
}

Status gpu_copy(void* dst, const void* src, size_t bytes) {
  return copy_host_device(dst, src, bytes);
}

Status time_nccl_allreduce(Transport& world, const void* send, void* recv, int64_t count,
                           DataType dt, ReduceOp op, int warmup, int iters, double* seconds) {
  DirectAllreduce a;
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.dtype = dt;
  a.op = op;
  a.warmup = warmup;
  a.iters = iters;
  return time_direct_nccl_allreduce(world, a, seconds);
}

Status make_gpu_device(int local_rank, std::unique_ptr<Device>* gpu, std::string* name) {
  std::string why;
  if (!cuda_available(&why)) return Status::Precondition("the NCCL backend needs a GPU: " + why);
  const int id = local_rank % cuda_device_count();
  nccl::ContextOptions o;
  o.synchronous = false;
  std::shared_ptr<nccl::CudaContext> ctx;
  HVD_RETURN_IF_ERROR(nccl::CudaContext::create(id, o, &ctx));
  cudaDeviceProp p{};
  *name = cudaGetDeviceProperties(&p, id) == cudaSuccess ? std::string(p.name) : "GPU " + std::to_string(id);
  *gpu = std::make_unique<nccl::CudaDevice>(std::move(ctx));
  return Status::OK();
}

std::string gpu_versions() {
  return nccl_version_string();
}

#else

namespace {
const char* kNoNccl =
    "--device gpu: this hvdbench was built without the NCCL backend (it needs the CUDA "
    "toolkit, NCCL and MPI at configure time; see docs/nccl.md)";
}

bool built_with_nccl() {
  return false;
}

GpuVerdict check_gpu_here() {
  return {kExitBadInput, kNoNccl};
}

int gpu_count() {
  return 0;
}

Status make_gpu_world(Transport&, std::unique_ptr<Transport>*, std::unique_ptr<Device>*) {
  return Status::Precondition(kNoNccl);
}

Status gpu_copy(void*, const void*, size_t) {
  return Status::Precondition(kNoNccl);
}

Status time_nccl_allreduce(Transport&, const void*, void*, int64_t, DataType, ReduceOp, int, int,
                           double*) {
  return Status::Precondition(kNoNccl);
}

Status make_gpu_device(int, std::unique_ptr<Device>*, std::string*) {
  return Status::Precondition(kNoNccl);
}

std::string gpu_versions() {
  return "no NCCL backend";
}

#endif

}  // namespace hvd::bench
