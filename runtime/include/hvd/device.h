// Device seam: everything that touches tensor memory. Real CPU: vectorised loops; CUDA:
// kernels; simulated: no bytes, only the cost of the bytes. Pointers may be null when a
// buffer is phantom (size without storage); a real device never sees phantom buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd {

/// Memory operations on one device (a CPU, a GPU, or a simulated GPU).
class Device {
 public:
  virtual ~Device() = default;
  /// Where tensors of this device live.
  virtual DeviceKind kind() const = 0;
  /// Allocates `bytes` of device memory (may return null on a phantom device).
  virtual void* allocate(size_t bytes) = 0;
  /// Frees memory from allocate().
  virtual void release(void* p) = 0;
  /// Copies `bytes` bytes (fusion buffer in/out).
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  /// dst[i] = dst[i] (op) src[i] for `count` elements (op is never kAverage).
  virtual void reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) = 0;
  /// dst[i] = a[i] (op) b[i] (dst may equal a). Lets a ring reduce straight from the
  /// input into the output. The default copies a into dst, then reduces.
  virtual void reduce_into(void* dst, const void* a, const void* b, int64_t count, DataType dt,
                           ReduceOp op) {
    if (dst != a) copy(dst, a, static_cast<size_t>(count) * dtype_size(dt));
    reduce(dst, b, count, dt, op);
  }
  /// buf[i] *= factor.
  virtual void scale(void* buf, int64_t count, DataType dt, double factor) = 0;
  /// Fills with the identity of `op` (0 for sum, +inf for min, ...): a joined rank's data.
  virtual void fill_identity(void* buf, int64_t count, DataType dt, ReduceOp op) = 0;
  /// Adasum's statistics of two ranges of `count` elements (float16/32/64): out[0] =
  /// dot(a, b), out[1] = |a|², out[2] = |b|², accumulated in double. Devices without it
  /// (GPUs, the simulator) return an error; the CPU device implements it.
  virtual Status dot_norms(const void* a, const void* b, int64_t count, DataType dt, double out[3]) {
    (void)a, (void)b, (void)count, (void)dt, (void)out;
    return Status::InvalidArgument("this device has no Adasum kernels (Adasum runs on CPU tensors)");
  }
  /// a[i] = ca * a[i] + cb * b[i] (float16/32/64; Adasum's pairwise combination).
  virtual Status scaled_add(void* a, double ca, const void* b, double cb, int64_t count, DataType dt) {
    (void)a, (void)ca, (void)b, (void)cb, (void)count, (void)dt;
    return Status::InvalidArgument("this device has no Adasum kernels (Adasum runs on CPU tensors)");
  }
  /// Waits for queued device work (no-op on the CPU).
  virtual void synchronize() {}
  /// Returns and clears the first failure of asynchronous device work (OK on the CPU).
  virtual Status last_error() { return Status::OK(); }
  /// True when collectives may read and write tensors where they lie, so a fused
  /// allreduce can skip the fusion-buffer copies (host memory: copies cost as much as the
  /// transfer itself). GPUs keep Horovod's fusion buffer.
  virtual bool scatter_gather() const { return false; }
  /// True when tensors may be phantom (null data with a size), as in simulations.
  virtual bool allows_phantom() const { return false; }
};

/// Owning device allocation (RAII).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` on `dev`.
  DeviceBuffer(Device* dev, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Start of the storage (null for phantom or empty buffers).
  void* data() const { return data_; }
  /// Size in bytes.
  size_t size() const { return size_; }
  /// Grows (never shrinks) to at least `bytes`, discarding contents.
  void reserve(size_t bytes);

 private:
  Device* dev_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
};

/// The host CPU device (real data, vectorisable loops).
std::unique_ptr<Device> make_cpu_device();

}  // namespace hvd
