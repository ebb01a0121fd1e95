// A simulated device. Phantom by default: allocate() hands out addresses of a private
// address range that is never dereferenced (so in-place and fused paths stay
// distinguishable), and copies/reductions only cost simulated time: bytes / bandwidth
// of the modelled memory system, slept on the calling actor. With data, the memory is
// real and the CPU kernels do the work as well (same simulated cost).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "collectives/reduce_kernels.h"
#include "seams.h"

namespace hvd::sim {
namespace {

class SimDevice final : public Device {
 public:
  SimDevice(DeviceKind kind, const DeviceCostSpec& cost, bool with_data)
      : kind_(kind), cost_(cost), with_data_(with_data) {}
  DeviceKind kind() const override { return kind_; }
  void* allocate(size_t bytes) override {
    if (with_data_) {
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
      if (!p) throw std::bad_alloc();
      return p;
    }
    // Phantom: a fresh range of fake addresses (never touched).
    const uintptr_t p = next_fake_;
    next_fake_ += (bytes + 4095) / 4096 * 4096 + 4096;
    return reinterpret_cast<void*>(p);
  }
  void release(void* p) override {
    if (with_data_) std::free(p);
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    if (!bytes || dst == src) return;  // in place: nothing moves
    charge(static_cast<double>(bytes), copy_rate());
    if (with_data_ && dst && src) std::memcpy(dst, src, bytes);
  }
  void reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) override {
    charge(static_cast<double>(count) * static_cast<double>(dtype_size(dt)), reduce_rate());
    if (with_data_ && dst && src) reduce_host(dst, src, count, dt, op);
  }
  void scale(void* buf, int64_t count, DataType dt, double factor) override {
    charge(static_cast<double>(count) * static_cast<double>(dtype_size(dt)), copy_rate());
    if (with_data_ && buf) scale_host(buf, count, dt, factor);
  }
  void fill_identity(void* buf, int64_t count, DataType dt, ReduceOp op) override {
    charge(static_cast<double>(count) * static_cast<double>(dtype_size(dt)), copy_rate());
    if (with_data_ && buf) fill_identity_host(buf, count, dt, op);
  }
  bool allows_phantom() const override { return !with_data_; }

 private:
  // Host-staged GPU data: copies cross PCIe, reductions run on the host CPU.
  double copy_rate() const {
    return cost_.host_staged && kind_ == DeviceKind::kGPU ? cost_.pcie_bandwidth : cost_.copy_bandwidth;
  }
  double reduce_rate() const {
    return cost_.host_staged && kind_ == DeviceKind::kGPU ? cost_.host_reduce_bandwidth
                                                          : cost_.reduce_bandwidth;
  }
  static void charge(double bytes, double rate) {
    if (rate > 0 && bytes > 0) sg4::this_actor::sleep_for(bytes / rate);
  }

  DeviceKind kind_;
  DeviceCostSpec cost_;
  bool with_data_;
  uintptr_t next_fake_ = uintptr_t{1} << 44;
};

}  // namespace

std::unique_ptr<Device> make_sim_device(DeviceKind kind, const DeviceCostSpec& cost,
                                        bool with_data) {
  return std::make_unique<SimDevice>(kind, cost, with_data);
}

}  // namespace hvd::sim
