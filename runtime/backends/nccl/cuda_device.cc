#include "backends/nccl/cuda_device.h"

#include <iostream>
#include <new>

#include "backends/nccl/cuda_kernels.h"
#include "backends/nccl/nccl_types.h"

namespace hvd::nccl {

CudaDevice::~CudaDevice() {
  ctx_->activate();
  (void)ctx_->synchronize();
  for (auto& [cap, p] : free_) (void)cudaFree(p);
  for (auto& [p, cap] : live_) (void)cudaFree(p);  // leaked by a caller: still ours to free
}

void* CudaDevice::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t cap = round_device_allocation(bytes);
  std::lock_guard<std::mutex> lk(mu_);
  // Reuse a cached block of at least `cap` but not more than twice it (bounded waste).
  auto it = free_.lower_bound(cap);
  if (it != free_.end() && it->first <= 2 * cap) {
    void* p = it->second;
    live_[p] = it->first;
    free_.erase(it);
    return p;
  }
  ctx_->activate();
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, cap);
  if (e != cudaSuccess && !free_.empty()) {  // out of memory: drop the cache and retry
    (void)ctx_->synchronize();
    for (auto& [c, q] : free_) (void)cudaFree(q);
    free_.clear();
    e = cudaMalloc(&p, cap);
  }
  if (e != cudaSuccess) {
    std::cerr << "hvd: " << cuda_status(e, "cudaMalloc").message() << " (" << cap << " bytes)\n";
    throw std::bad_alloc();
  }
  live_[p] = cap;
  return p;
}

void CudaDevice::release(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) {
    ctx_->activate();
    (void)cudaFree(p);
    return;
  }
  // Work queued on the device stream that still reads `p` precedes any later use of the
  // block, which is queued on the same stream: reuse without synchronising is safe.
  free_.emplace(it->second, p);
  live_.erase(it);
}

void CudaDevice::after_launch(Status s) {
  if (s.ok() && ctx_->options().synchronous) s = ctx_->synchronize();
  if (!s.ok()) {
    std::lock_guard<std::mutex> lk(mu_);
    if (error_.ok()) error_ = s;
    ctx_->note_error(s);
  }
}

void CudaDevice::copy(void* dst, const void* src, size_t bytes) {
  if (!bytes || dst == src || !dst || !src) return;
  ctx_->enqueue_copy(dst, src, bytes);
  if (ctx_->options().synchronous) after_launch(Status::OK());
}

void CudaDevice::reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) {
  if (!dst || !src || count <= 0) return;
  ctx_->activate();
  Status s = ctx_->flush();
  if (s.ok())
    s = cuda_status(launch_reduce(dst, src, count, dt, op, ctx_->stream()), "reduce kernel");
  after_launch(s);
}

void CudaDevice::scale(void* buf, int64_t count, DataType dt, double factor) {
  if (!buf || count <= 0 || factor == 1.0) return;
  ctx_->activate();
  Status s = ctx_->flush();
  if (s.ok()) s = cuda_status(launch_scale(buf, count, dt, factor, ctx_->stream()), "scale kernel");
  after_launch(s);
}

void CudaDevice::fill_identity(void* buf, int64_t count, DataType dt, ReduceOp op) {
  if (!buf || count <= 0) return;
  ctx_->activate();
  Status s = ctx_->flush();
  if (s.ok())
    s = cuda_status(launch_fill_identity(buf, count, dt, op, ctx_->stream()), "fill kernel");
  after_launch(s);
}

void CudaDevice::synchronize() {
  ctx_->activate();
  Status s = ctx_->synchronize();
  if (!s.ok()) {
    std::lock_guard<std::mutex> lk(mu_);
    if (error_.ok()) error_ = s;
  }
}

Status CudaDevice::take_error() {
  std::lock_guard<std::mutex> lk(mu_);
  return std::exchange(error_, Status::OK());
}

}  // namespace hvd::nccl
