#include "backends/nccl/cuda_context.h"

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "backends/nccl/cuda_kernels.h"
#include "backends/nccl/nccl_types.h"

namespace hvd::nccl {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status CudaContext::create(int device_id, const ContextOptions& opts,
                           std::shared_ptr<CudaContext>* out) {
  std::shared_ptr<CudaContext> c(new CudaContext(device_id, opts));
  Status s = cuda_status(cudaSetDevice(device_id), "cudaSetDevice");
  if (s.ok())
    s = cuda_status(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking),
                    "cudaStreamCreate");
  if (s.ok())
    s = cuda_status(cudaEventCreateWithFlags(&c->order_event_, cudaEventDisableTiming),
                    "cudaEventCreate");
  if (!s.ok()) return s;
  *out = std::move(c);
  return Status::OK();
}

CudaContext::~CudaContext() {
  activate();
  if (stream_) (void)cudaStreamSynchronize(stream_);
  for (cudaEvent_t e : pool_) (void)cudaEventDestroy(e);
  if (order_event_) (void)cudaEventDestroy(order_event_);
  if (stream_) (void)cudaStreamDestroy(stream_);
}

void CudaContext::activate() const {
  (void)cudaSetDevice(device_);
}

void CudaContext::enqueue_copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src || !dst || !src) return;
  pending_.push_back(CopySegment{dst, src, bytes});
}

Status CudaContext::flush() {
  if (pending_.empty()) return Status::OK();
  CopyLimits lim;
  lim.max_batch = kMaxBatchedCopies;
  const CopyPlan plan = plan_copies(pending_, lim);
  pending_.clear();
  activate();
  for (const CopySegment& s : plan.memcpys) {
    HVD_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(s.dst, s.src, s.bytes, cudaMemcpyDefault, stream_),
                                   "cudaMemcpyAsync"));
  }
  for (const auto& b : plan.batches) {
    Status st =
        cuda_status(launch_batched_copy(b.data(), b.size(), stream_), "batched copy kernel");
    if (!st.ok()) return st;
  }
  return Status::OK();
}

Status CudaContext::synchronize() {
  activate();
  Status s = flush();
  if (s.ok()) s = cuda_status(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (s.ok() && !deferred_.ok()) s = std::exchange(deferred_, Status::OK());
  return s;
}

Status CudaContext::stream_after_device(cudaStream_t s) {
  HVD_RETURN_IF_ERROR(flush());
  Status st = cuda_status(cudaEventRecord(order_event_, stream_), "cudaEventRecord");
  if (st.ok()) st = cuda_status(cudaStreamWaitEvent(s, order_event_, 0), "cudaStreamWaitEvent");
  return st;
}

Status CudaContext::device_after_stream(cudaStream_t s) {
  Status st = cuda_status(cudaEventRecord(order_event_, s), "cudaEventRecord");
  if (st.ok())
    st = cuda_status(cudaStreamWaitEvent(stream_, order_event_, 0), "cudaStreamWaitEvent");
  return st;
}

cudaEvent_t CudaContext::acquire_event(Status* st) {
  {
    std::lock_guard<std::mutex> lk(pool_mu_);
    if (!pool_.empty()) {
      cudaEvent_t e = pool_.back();
      pool_.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  *st = cuda_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  return st->ok() ? e : nullptr;
}

void CudaContext::release_event(cudaEvent_t e) {
  if (!e) return;
  std::lock_guard<std::mutex> lk(pool_mu_);
  pool_.push_back(e);
}

void CudaContext::note_error(const Status& s) {
  if (!s.ok() && deferred_.ok()) deferred_ = s;
}

Status wait_event(cudaEvent_t ev, double deadline, const std::function<Status()>& check) {
  for (int polls = 0;; ++polls) {
    const cudaError_t e = cudaEventQuery(ev);
    if (e == cudaSuccess) return Status::OK();
    if (e != cudaErrorNotReady) return cuda_status(e, "cudaEventQuery");
    if (check) {
      HVD_RETURN_IF_ERROR(check());
    }
    if (steady_seconds() >= deadline)
      return Status::Timeout(
          "GPU transfer did not complete before the deadline (a peer may be stalled)");
    const double pause = poll_backoff(polls);
    if (pause > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
}

}  // namespace hvd::nccl
