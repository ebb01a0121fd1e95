// The runtime at np = 1 on one GPU with NCCL as the world transport and native
// algorithms: fused allreduce with average and scale factors, allgather, broadcast,
// alltoall and reducescatter of device tensors, checked against host references.
// Skipped without a GPU.
#include "gpu_fixture.h"
#include "hvd/runtime.h"
#include "test_util.h"

namespace hvd::test {
namespace {

class RuntimeOnGpu : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    platform_ = make_std_platform();
    cpu_ = make_cpu_device();
    Config cfg;
    cfg.cycle_time_ms = 0.2;
    cfg.allreduce_algorithm = "native";
    cfg.allgather_algorithm = "native";
    cfg.broadcast_algorithm = "native";
    cfg.alltoall_algorithm = "native";
    cfg.reducescatter_algorithm = "native";
    // The fixture owns the NCCL world and the GPU device; the rank's seams borrow them.
    const Status s =
        start_runtime(RuntimeOptions{{platform_.get(), nccl_.get(), cpu_.get(), gpu_.get()}, cfg}, &rt_);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  void TearDown() override {
    if (rt_) {
      EXPECT_TRUE(rt_->shutdown().ok());
    }
    rt_.reset();
    GpuTest::TearDown();
  }
  Tensor gpu_tensor(void* d, DataType dt, int64_t n) {
    return Tensor{d, dt, {n}, DeviceKind::kGPU};
  }

  std::unique_ptr<Platform> platform_;
  std::unique_ptr<Device> cpu_;
  std::unique_ptr<Runtime> rt_;
};

TEST_F(RuntimeOnGpu, FusedAllreduceWithScalesEveryDtype) {
  for (DataType dt : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                      DataType::kFloat64, DataType::kInt32}) {
    std::vector<std::string> names;
    std::vector<Tensor> ins, outs;
    std::vector<std::vector<uint8_t>> want;
    for (int i = 0; i < 6; ++i) {
      const int64_t n = 100 + 37 * i;
      std::vector<uint8_t> h(static_cast<size_t>(n) * dtype_size(dt));
      for (int64_t k = 0; k < n; ++k) store(h, k, dt, test_value(0, k + i, ReduceOp::kSum, dt));
      ins.push_back(gpu_tensor(upload(h), dt, n));
      outs.push_back(gpu_tensor(upload(std::vector<uint8_t>(h.size(), 0)), dt, n));
      names.push_back("g." + std::string(dtype_name(dt)) + "." + std::to_string(i));
      want.push_back(h);
    }
    ASSERT_TRUE(rt_->grouped_allreduce(names, ins, outs, ReduceOp::kAverage).ok());
    for (size_t i = 0; i < outs.size(); ++i)
      EXPECT_EQ(download(outs[i].data, want[i].size()), want[i]) << dtype_name(dt);
    // prescale 2, postscale 0.5: identity overall, but both run as device kernels.
    Status s = rt_->allreduce("s." + std::string(dtype_name(dt)), ins[0], outs[0], ReduceOp::kSum,
                              2.0, 0.5);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(download(outs[0].data, want[0].size()), want[0]);
  }
}

TEST_F(RuntimeOnGpu, AllgatherBroadcastAlltoallReducescatter) {
  const int64_t rows = 33, cols = 5, n = rows * cols;
  std::vector<uint8_t> h(static_cast<size_t>(n) * 4);
  for (int64_t k = 0; k < n; ++k) store(h, k, DataType::kFloat32, static_cast<double>(k % 17));
  Tensor t{upload(h), DataType::kFloat32, {rows, cols}, DeviceKind::kGPU};

  Handle g = rt_->allgather_async("ag", t);
  ASSERT_TRUE(g->wait().ok());
  EXPECT_EQ(g->output_shape(), (std::vector<int64_t>{rows, cols}));
  EXPECT_EQ(download(g->output(), h.size()), h);

  ASSERT_TRUE(rt_->broadcast("bc", t, 0).ok());
  EXPECT_EQ(download(t.data, h.size()), h);

  Handle a = rt_->alltoall_async("a2a", t, {});
  ASSERT_TRUE(a->wait().ok());
  EXPECT_EQ(a->received_splits(), (std::vector<int64_t>{rows}));
  EXPECT_EQ(download(a->output(), h.size()), h);

  Handle r = rt_->reducescatter_async("rs", t, ReduceOp::kSum);
  ASSERT_TRUE(r->wait().ok());
  EXPECT_EQ(download(r->output(), h.size()), h);
}

TEST_F(RuntimeOnGpu, BarrierCompletes) {
  ASSERT_TRUE(rt_->barrier().ok());
}

}  // namespace
}  // namespace hvd::test
