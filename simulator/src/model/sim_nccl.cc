// NCCL's collectives in the simulator (runtime.gpu_operations "nccl"): a call waits until
// every member of the group has made it (NCCL's kernels start together: each waits for its
// peers' buffers), then takes the time the NCCL model gives for the group's machine. The
// model prices the call as a whole, so these calls do not share SimGrid's links with other
// flows (docs/nccl_model.md, "In the simulator").
#include <algorithm>
#include <set>

#include "model/seams.h"

namespace hvd::sim {

void SimFabric::rendezvous(int group, int64_t seq, size_t members) {
  // Creating S4U objects may let other actors run: build first, then publish.
  auto fresh = std::make_unique<Rendezvous>();
  auto& slot = rendezvous_[{group, seq}];
  if (!slot) slot = std::move(fresh);
  Rendezvous* rv = slot.get();
  bool last;
  {
    std::unique_lock<sg4::Mutex> lk(*rv->mu);
    if (++rv->arrived == members) rv->cv->notify_all();
    while (rv->arrived < members) rv->cv->wait(lk);
    last = ++rv->left == members;
  }
  if (last) rendezvous_.erase({group, seq});
}

namespace {

class SimNcclNative final : public NativeCollectives {
 public:
  SimNcclNative(std::shared_ptr<SimFabric> f, int group, SimFabric::Members members, DeviceClock* clock)
      : f_(std::move(f)), group_(group), size_(members->size()), clock_(clock) {
    m_ = f_->nccl->machine;
    std::set<int> nodes;
    for (int r : *members) nodes.insert(f_->node_of(r));
    m_.nodes = static_cast<int>(nodes.size());
    m_.ranks_per_node = static_cast<int>((size_ + nodes.size() - 1) / nodes.size());
  }
  std::string prefix() const override { return "NCCL"; }
  bool supports(DataType) const override { return true; }
  bool preferred(DeviceKind device) const override { return device == DeviceKind::kGPU; }
  Status allreduce(void*, int64_t count, DataType dt, ReduceOp) override {
    return call(NcclColl::kAllreduce, static_cast<size_t>(count) * dtype_size(dt));
  }
  Status allgatherv(const void*, void*, const std::vector<size_t>& bytes) override {
    size_t total = 0;
    for (size_t b : bytes) total += b;
    return call(NcclColl::kAllgather, total);
  }
  Status broadcast(void*, size_t bytes, int) override { return call(NcclColl::kBroadcast, bytes); }
  Status alltoallv(const void*, const std::vector<size_t>& send_bytes, void*, const std::vector<size_t>&) override {
    size_t total = 0;
    for (size_t b : send_bytes) total += b;
    return call(NcclColl::kAlltoall, total);
  }
  Status reducescatter(const void*, void*, const std::vector<int64_t>& counts, DataType dt, ReduceOp) override {
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    return call(NcclColl::kReducescatter, static_cast<size_t>(total) * dtype_size(dt));
  }
  Status barrier() override { return call(NcclColl::kAllreduce, 4); }

 private:
  Status call(NcclColl coll, size_t bytes) {
    const NcclSettings& s = f_->nccl->settings;
    const NcclCall c = nccl_call(m_, coll, bytes, s);
    if (!c.ok)
      return Status::InvalidArgument(std::string("NCCL_ALGO ") + s.algo_name() + " with NCCL_PROTO " + s.proto_name() +
                                     " cannot run " + nccl_coll_name(coll));
    clock_->sleep_after(0);  // the inputs are ready once the rank's device work is done
    f_->rendezvous(group_, seq_++, size_);
    clock_->sleep_after(c.seconds);
    return Status::OK();
  }
  std::shared_ptr<SimFabric> f_;
  int group_;
  size_t size_;
  DeviceClock* clock_;
  NcclMachine m_;
  int64_t seq_ = 0;
};

}  // namespace

std::unique_ptr<NativeCollectives> make_sim_nccl(std::shared_ptr<SimFabric> fabric, int group,
                                                 SimFabric::Members members, DeviceClock* clock) {
  return std::make_unique<SimNcclNative>(std::move(fabric), group, std::move(members), clock);
}

}  // namespace hvd::sim
