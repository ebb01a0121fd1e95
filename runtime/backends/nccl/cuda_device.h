// The GPU Device: cudaMalloc'd memory (cached, so growing fusion buffers and per-op outputs
// do not pay cudaFree's device-wide synchronisation), batched copies, and the CUDA kernels
// for reduce / scale / identity fill, all on the context's device stream.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "backends/nccl/cuda_context.h"
#include "hvd/device.h"

namespace hvd::nccl {

/// hvd::Device over one GPU.
class CudaDevice final : public Device {
 public:
  explicit CudaDevice(std::shared_ptr<CudaContext> ctx) : ctx_(std::move(ctx)) {}
  ~CudaDevice() override;
  DeviceKind kind() const override { return DeviceKind::kGPU; }
  void* allocate(size_t bytes) override;
  void release(void* p) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) override;
  void scale(void* buf, int64_t count, DataType dt, double factor) override;
  void fill_identity(void* buf, int64_t count, DataType dt, ReduceOp op) override;
  void synchronize() override;
  /// The shared CUDA state.
  CudaContext& context() const { return *ctx_; }
  /// First asynchronous failure since the last call (OK if none); clears it.
  Status take_error();
  Status last_error() override { return take_error(); }

 private:
  void after_launch(Status s);  // records failures; waits in synchronous mode

  std::shared_ptr<CudaContext> ctx_;
  std::mutex mu_;
  std::multimap<size_t, void*> free_;  ///< cached blocks by capacity
  std::map<void*, size_t> live_;       ///< handed-out blocks and their capacity
  Status error_;
};

}  // namespace hvd::nccl
