// A simulated device. Phantom by default: allocate() hands out addresses inside a
// reserved, inaccessible (PROT_NONE) range of address space, so buffers stay distinct
// (in-place and fused paths are told apart), cost no memory, trap if ever touched, and
// the transport can tell them from real memory. Copies and reductions only cost
// simulated time: bytes / bandwidth of the modelled memory system, charged to the
// calling actor's DeviceClock. With data, the memory is real and the CPU kernels do the work as well.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/local/reduce_kernels.h"
#include "model/seams.h"

namespace hvd::sim {
namespace {

constexpr size_t kPhantomSpace = size_t{1} << 40;  // 1 TiB of address space, never backed

uintptr_t phantom_base() {
  static const uintptr_t base = [] {
    void* p = ::mmap(nullptr, kPhantomSpace, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? uintptr_t{0} : reinterpret_cast<uintptr_t>(p);
  }();
  return base;
}

class SimDevice final : public Device {
 public:
  SimDevice(DeviceKind kind, const DeviceCostSpec& cost, bool with_data, DeviceClock* clock,
            CacheTouch touch)
      : kind_(kind), cost_(cost), with_data_(with_data), clock_(clock), touch_(std::move(touch)) {}
  DeviceKind kind() const override { return kind_; }
  void* allocate(size_t bytes) override {
    if (with_data_) {
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
      if (!p) throw std::bad_alloc();
      return p;
    }
    // Phantom: a fresh slice of the reserved range (wrapping around; never touched).
    const size_t span = (bytes + 4095) / 4096 * 4096 + 4096;
    if (next_fake_ + span > kPhantomSpace) next_fake_ = 0;
    const uintptr_t p = phantom_base() + next_fake_;
    next_fake_ += span % kPhantomSpace;
    return reinterpret_cast<void*>(p);
  }
  void release(void* p) override {
    if (with_data_) std::free(p);
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    if (!bytes || dst == src) return;  // in place: nothing moves
    charge(static_cast<double>(bytes), copy_rate(), cost_.copy_bandwidth_hot,
           {{const_cast<void*>(src), bytes}, {dst, bytes}});
    if (with_data_ && dst && src) std::memcpy(dst, src, bytes);
  }
  void reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) override {
    const size_t n = static_cast<size_t>(count) * dtype_size(dt);
    charge(static_cast<double>(n), reduce_rate(), cost_.reduce_bandwidth_hot,
           {{const_cast<void*>(src), n}, {dst, n}});
    if (with_data_ && dst && src) reduce_host(dst, src, count, dt, op);
  }
  void reduce_into(void* dst, const void* a, const void* b, int64_t count, DataType dt,
                   ReduceOp op) override {
    // Reads two operands and writes one, like reduce().
    const size_t n = static_cast<size_t>(count) * dtype_size(dt);
    charge(static_cast<double>(n), reduce_rate(), cost_.reduce_bandwidth_hot,
           {{const_cast<void*>(a), n}, {const_cast<void*>(b), n}, {dst, n}});
    if (!with_data_ || !dst || !a || !b) return;
    if (dst != a) std::memcpy(dst, a, n);
    reduce_host(dst, b, count, dt, op);
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
  bool scatter_gather() const override { return cost_.scatter_gather; }

 private:
  // Host-staged GPU data: copies cross PCIe, reductions run on the host CPU.
  double copy_rate() const {
    return cost_.host_staged && kind_ == DeviceKind::kGPU ? cost_.pcie_bandwidth : cost_.copy_bandwidth;
  }
  double reduce_rate() const {
    return cost_.host_staged && kind_ == DeviceKind::kGPU ? cost_.host_reduce_bandwidth
                                                          : cost_.reduce_bandwidth;
  }
  void charge(double bytes, double rate) {
    if (rate > 0 && bytes > 0) clock_->charge(bytes / rate);
  }
  // An operation on `pieces` (recorded in the rank's cache model): with an in-cache rate,
  // its time blends the two rates by the fraction of the bytes found in cache. Host-staged
  // GPU data crosses PCIe: no cache.
  void charge(double bytes, double rate, double hot_rate, std::initializer_list<IoPiece> pieces) {
    const double hot = touch_ ? touch_(IoSpan(pieces.begin(), pieces.size())) : 1.0;
    if (hot_rate <= 0 || (cost_.host_staged && kind_ == DeviceKind::kGPU)) return charge(bytes, rate);
    if (rate > 0 && bytes > 0) clock_->charge(bytes * (hot / hot_rate + (1 - hot) / rate));
  }

  DeviceKind kind_;
  DeviceCostSpec cost_;
  bool with_data_;
  DeviceClock* clock_;
  CacheTouch touch_;
  size_t next_fake_ = 0;
};

}  // namespace

bool is_phantom(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return !p || (phantom_base() && a >= phantom_base() && a < phantom_base() + kPhantomSpace);
}

std::unique_ptr<Device> make_sim_device(DeviceKind kind, const DeviceCostSpec& cost,
                                        bool with_data, DeviceClock* clock, CacheTouch touch) {
  return std::make_unique<SimDevice>(kind, cost, with_data, clock, std::move(touch));
}

}  // namespace hvd::sim
