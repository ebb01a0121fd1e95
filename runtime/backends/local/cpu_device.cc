// The host CPU Device: real memory, vectorised kernels.
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/local/adasum_kernels.h"
#include "backends/local/reduce_kernels.h"
#include "hvd/device.h"

namespace hvd {
namespace {

class CpuDevice final : public Device {
 public:
  DeviceKind kind() const override { return DeviceKind::kCPU; }
  bool scatter_gather() const override { return true; }
  void* allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void release(void* p) override { std::free(p); }
  void copy(void* dst, const void* src, size_t bytes) override {
    if (bytes && dst != src && dst && src) std::memcpy(dst, src, bytes);
  }
  void reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) override {
    if (dst && src) reduce_host(dst, src, count, dt, op);
  }
  void reduce_into(void* dst, const void* a, const void* b, int64_t count, DataType dt,
                   ReduceOp op) override {
    if (dst && a && b) reduce_host_into(dst, a, b, count, dt, op);
  }
  void scale(void* buf, int64_t count, DataType dt, double factor) override {
    if (buf) scale_host(buf, count, dt, factor);
  }
  void fill_identity(void* buf, int64_t count, DataType dt, ReduceOp op) override {
    if (buf) fill_identity_host(buf, count, dt, op);
  }
  Status dot_norms(const void* a, const void* b, int64_t count, DataType dt, double out[3]) override {
    return dot_norms_host(a, b, count, dt, out);
  }
  Status scaled_add(void* a, double ca, const void* b, double cb, int64_t count, DataType dt) override {
    return scaled_add_host(a, ca, b, cb, count, dt);
  }
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace hvd
