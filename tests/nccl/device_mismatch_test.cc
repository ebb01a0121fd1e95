// Tensors carry a device. A fake GPU Device (host memory that reports DeviceKind::kGPU)
// over the in-process backend checks, without a GPU, that: one name placed on the GPU by
// one rank and on the CPU by another fails on every rank with "Mismatched devices"; GPU
// tensors use the GPU device's fusion buffer and give correct sums.
#include <gtest/gtest.h>

#include <atomic>

#include "hvd/local.h"
#include "hvd/runtime.h"
#include "test_util.h"

namespace hvd {
namespace {

// Host memory pretending to be a GPU; counts the calls that reach it.
class FakeGpuDevice final : public Device {
 public:
  DeviceKind kind() const override { return DeviceKind::kGPU; }
  void* allocate(size_t b) override {
    ++allocs;
    return cpu_->allocate(b);
  }
  void release(void* p) override { cpu_->release(p); }
  void copy(void* d, const void* s, size_t b) override {
    ++copies;
    cpu_->copy(d, s, b);
  }
  void reduce(void* d, const void* s, int64_t n, DataType dt, ReduceOp op) override {
    cpu_->reduce(d, s, n, dt, op);
  }
  void scale(void* b, int64_t n, DataType dt, double f) override {
    ++scales;
    cpu_->scale(b, n, dt, f);
  }
  void fill_identity(void* b, int64_t n, DataType dt, ReduceOp op) override {
    cpu_->fill_identity(b, n, dt, op);
  }
  std::atomic<int> allocs{0}, copies{0}, scales{0};

 private:
  std::unique_ptr<Device> cpu_ = make_cpu_device();
};

// Knobs of these tests: the defaults with a short cycle.
Config short_cycle() {
  Config c;
  c.cycle_time_ms = 0.2;
  return c;
}

// run_local with a fake GPU device added to each rank's host seams: runs
// body(rank, runtime, gpu) on each rank's thread; start and shutdown must succeed.
void run_with_fake_gpu(int size, const std::function<void(int, Runtime&, FakeGpuDevice&)>& body) {
  test::on_local_ranks(size, [&](OwnedSeams& seams) {
    FakeGpuDevice gpu;
    Seams with_gpu = seams.view();
    with_gpu.gpu = &gpu;
    const int r = seams.transport->rank();
    const Status s = run_rank(RuntimeOptions{with_gpu, short_cycle()}, [&](Runtime& rt) { body(r, rt, gpu); });
    EXPECT_TRUE(s.ok()) << s.to_string();
  });
}

TEST(DeviceMismatch, HostOnOneRankDeviceOnAnotherFailsEveryRank) {
  for (int size : {2, 3}) {
    run_with_fake_gpu(size, [](int rank, Runtime& rt, FakeGpuDevice&) {
      std::vector<float> in(16, 1.0f), out(16, 0.0f);
      const DeviceKind where = rank == 1 ? DeviceKind::kCPU : DeviceKind::kGPU;
      Tensor ti{in.data(), DataType::kFloat32, {16}, where};
      Tensor to{out.data(), DataType::kFloat32, {16}, where};
      const Status s = rt.allreduce("grad.mixed", ti, to, ReduceOp::kSum);
      EXPECT_EQ(s.code(), StatusCode::kMismatch) << "rank " << rank << ": " << s.to_string();
      EXPECT_NE(s.message().find("Mismatched devices"), std::string::npos) << s.message();
      EXPECT_NE(s.message().find("grad.mixed"), std::string::npos) << s.message();
      // The runtime stays usable: the next (agreeing) allreduce works.
      Tensor ci{in.data(), DataType::kFloat32, {16}, DeviceKind::kCPU};
      Tensor co{out.data(), DataType::kFloat32, {16}, DeviceKind::kCPU};
      ASSERT_TRUE(rt.allreduce("grad.after", ci, co, ReduceOp::kSum).ok());
      EXPECT_EQ(out[3], static_cast<float>(rt.size()));
    });
  }
}

TEST(DeviceMismatch, BroadcastAndAllgatherAreCheckedToo) {
  run_with_fake_gpu(2, [](int rank, Runtime& rt, FakeGpuDevice&) {
    std::vector<int32_t> buf(4, rank);
    const DeviceKind where = rank == 0 ? DeviceKind::kGPU : DeviceKind::kCPU;
    Tensor t{buf.data(), DataType::kInt32, {4}, where};
    Status s = rt.broadcast("bcast.mixed", t, 0);
    EXPECT_NE(s.message().find("Mismatched devices"), std::string::npos) << s.to_string();
    Handle h = rt.allgather_async("gather.mixed", t);
    s = h->wait();
    EXPECT_NE(s.message().find("Mismatched devices"), std::string::npos) << s.to_string();
  });
}

TEST(DeviceMismatch, FusedGpuTensorsUseTheGpuDevice) {
  run_with_fake_gpu(3, [](int rank, Runtime& rt, FakeGpuDevice& gpu) {
    constexpr int kTensors = 5;
    std::vector<std::vector<float>> ins(kTensors), outs(kTensors);
    std::vector<std::string> names;
    std::vector<Tensor> ti, to;
    for (int i = 0; i < kTensors; ++i) {
      ins[i].assign(static_cast<size_t>(10 + i), static_cast<float>(rank + i));
      outs[i].assign(ins[i].size(), -1.0f);
      names.push_back("fused." + std::to_string(i));
      ti.push_back(Tensor{ins[i].data(),
                          DataType::kFloat32,
                          {static_cast<int64_t>(ins[i].size())},
                          DeviceKind::kGPU});
      to.push_back(Tensor{outs[i].data(),
                          DataType::kFloat32,
                          {static_cast<int64_t>(ins[i].size())},
                          DeviceKind::kGPU});
    }
    const int copies_before = gpu.copies.load();
    ASSERT_TRUE(rt.grouped_allreduce(names, ti, to, ReduceOp::kAverage).ok());
    for (int i = 0; i < kTensors; ++i)
      for (float v : outs[i])
        ASSERT_FLOAT_EQ(v, 1.0f + static_cast<float>(i));  // mean of rank+i over 0..2
    EXPECT_GE(gpu.copies.load() - copies_before,
              2 * kTensors);          // in and out of the GPU fusion buffer
    EXPECT_GE(gpu.scales.load(), 1);  // the average's 1/size
  });
}

TEST(DeviceMismatch, GpuTensorWithoutAGpuDeviceIsRejectedLocally) {
  const OwnedSeams seams = host_seams(make_single_rank_transport());  // no GPU device
  bool ran = false;
  const Status st = run_rank(RuntimeOptions{seams.view(), short_cycle()}, [&](Runtime& rt) {
    ran = true;
    std::vector<float> in(4, 1.0f), out(4);
    const Status s = rt.allreduce("x", Tensor{in.data(), DataType::kFloat32, {4}, DeviceKind::kGPU},
                                  Tensor{out.data(), DataType::kFloat32, {4}, DeviceKind::kGPU});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find("no GPU device"), std::string::npos) << s.message();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace hvd
