// The CUDA state one rank's NCCL backend shares between its Device and its communicators:
// the GPU, the device stream that runs copies and kernels, queued fusion-buffer copies,
// and the event plumbing that orders a communicator's stream after the device stream
// (and back) without ever blocking the host or the framework's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/nccl/nccl_plan.h"
#include "hvd/status.h"

namespace hvd::nccl {

/// Behaviour switches fixed when the world is made (see hvd/nccl.h NcclOptions).
struct ContextOptions {
  bool synchronous = true;  ///< every Device call and native collective completes before returning
};

/// One rank's GPU: device id, device stream, pending copies, reusable events.
class CudaContext {
 public:
  /// Selects `device_id` and creates the device stream; a clear Status when that fails.
  static Status create(int device_id, const ContextOptions& opts,
                       std::shared_ptr<CudaContext>* out);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  /// The GPU's ordinal.
  int device() const { return device_; }
  /// The stream device copies and kernels run on (non-blocking w.r.t. the legacy stream).
  cudaStream_t stream() const { return stream_; }
  /// The options.
  const ContextOptions& options() const { return opts_; }
  /// Makes this GPU current on the calling thread (the runtime's loop is its own thread).
  void activate() const;

  /// Queues a device-to-device copy; issued, batched, at the next flush().
  void enqueue_copy(void* dst, const void* src, size_t bytes);
  /// Issues queued copies on the device stream (memcpy for large, batched kernel for small).
  Status flush();
  /// Flushes, then waits for the device stream.
  Status synchronize();

  /// Makes `s` wait for work queued so far on the device stream (after a flush).
  Status stream_after_device(cudaStream_t s);
  /// Makes the device stream wait for work queued so far on `s`.
  Status device_after_stream(cudaStream_t s);

  /// An event from the pool (cudaEventDisableTiming), or null with *st set.
  cudaEvent_t acquire_event(Status* st);
  /// Returns an event to the pool.
  void release_event(cudaEvent_t e);

  /// Records a failure of an asynchronous device call (reported by the next synchronize).
  void note_error(const Status& s);

 private:
  CudaContext(int device, const ContextOptions& opts) : device_(device), opts_(opts) {}

  int device_;
  ContextOptions opts_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t order_event_ = nullptr;
  std::vector<CopySegment> pending_;
  std::mutex pool_mu_;
  std::vector<cudaEvent_t> pool_;
  Status deferred_;  ///< first asynchronous failure not yet reported
};

/// Polls `ev` until it completed or platform time (steady clock) `deadline_s` passed.
/// `check` (may be null) is called between polls and may fail the wait (async NCCL errors).
Status wait_event(cudaEvent_t ev, double deadline_s, const std::function<Status()>& check);

/// steady_clock seconds: the clock StdPlatform::now() reads, so deadlines compare directly.
double steady_seconds();

}  // namespace hvd::nccl
