// GPU tests of the Device kernels, the native collectives and device point-to-point at
// np = 1 on one GPU, each against a host reference. Skipped without a GPU.
#include <cstring>
#include <memory>
#include <string>

#include "backends/local/reduce_kernels.h"
#include "gpu_fixture.h"
#include "test_util.h"

namespace hvd::test {
namespace {

constexpr int64_t kCount = 1003;  // odd: exercises the grid-stride tails

std::vector<uint8_t> make_data(int rank, DataType dt, ReduceOp op, int64_t n = kCount) {
  std::vector<uint8_t> b(static_cast<size_t>(n) * dtype_size(dt));
  for (int64_t i = 0; i < n; ++i) store(b, i, dt, test_value(rank, i, op, dt));
  return b;
}

using DeviceKernels = GpuTest;

// A device id past the last GPU is the caller's mistake, said with a Status (needs a GPU:
// without one make_nccl_world fails earlier, for that reason).
TEST(GpuPresent, BadDeviceIdIsAnInvalidArgument) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  LocalWorld world(1);
  auto host = world.transport(0);
  std::unique_ptr<Transport> t;
  std::unique_ptr<Device> d;
  const Status s = make_nccl_world(*host, 1 << 20, &t, &d);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
}

TEST_F(DeviceKernels, ReduceMatchesHostForEveryDtypeAndOp) {
  for (DataType dt : all_dtypes())
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct}) {
      std::vector<uint8_t> a = make_data(0, dt, op), b = make_data(1, dt, op);
      void* da = upload(a);
      void* db = upload(b);
      gpu_->reduce(da, db, kCount, dt, op);
      reduce_host(a.data(), b.data(), kCount, dt, op);
      EXPECT_EQ(download(da, a.size()), a) << dtype_name(dt) << " " << op_name(op);
    }
}

TEST_F(DeviceKernels, ScaleMatchesHostForEveryDtype) {
  for (DataType dt : all_dtypes())
    for (double f : {0.5, 1.0 / 3.0, 2.0}) {
      std::vector<uint8_t> a = make_data(2, dt, ReduceOp::kSum);
      if (dt == DataType::kUInt8 || dt == DataType::kInt8) f = 0.5;  // stay in range
      void* da = upload(a);
      gpu_->scale(da, kCount, dt, f);
      scale_host(a.data(), kCount, dt, f);
      EXPECT_EQ(download(da, a.size()), a) << dtype_name(dt) << " x" << f;
    }
}

// The kernels move whole 16-byte vectors where both operands allow it and single elements
// around them: every start offset within a vector (equal and different for the two
// operands), lengths around a vector's worth of elements, and the bytes outside the range
// untouched. Each result equals the host kernel's on the same bytes.
TEST_F(DeviceKernels, KernelsAtEveryAlignmentAndLength) {
  for (DataType dt : all_dtypes()) {
    const int64_t es = static_cast<int64_t>(dtype_size(dt)), lanes = 16 / es;
    const int64_t span = 2 * lanes + 4100;  // room for any offset and length below, plus guard
    for (int64_t n : {int64_t{0}, int64_t{1}, lanes - 1, lanes, lanes + 1, 3 * lanes + 5, int64_t{4096} + 7})
      for (int64_t da = 0; da < lanes; da += (lanes > 4 ? 3 : 1))
        for (int64_t sa : {da, (da + 1) % lanes}) {
          const ReduceOp op = n % 2 ? ReduceOp::kMax : ReduceOp::kSum;
          std::vector<uint8_t> a = make_data(0, dt, op, span), b = make_data(1, dt, op, span);
          char* d = static_cast<char*>(upload(a));
          char* s = static_cast<char*>(upload(b));
          gpu_->reduce(d + da * es, s + sa * es, n, dt, op);
          reduce_host(a.data() + da * es, b.data() + sa * es, n, dt, op);
          gpu_->scale(s + sa * es, n, dt, 0.5);
          scale_host(b.data() + sa * es, n, dt, 0.5);
          EXPECT_EQ(download(d, a.size()), a) << dtype_name(dt) << " reduce n=" << n << " at " << da << "/" << sa;
          EXPECT_EQ(download(s, b.size()), b) << dtype_name(dt) << " scale n=" << n << " at " << sa;
          gpu_->fill_identity(d + sa * es, n, dt, ReduceOp::kMin);
          fill_identity_host(a.data() + sa * es, n, dt, ReduceOp::kMin);
          EXPECT_EQ(download(d, a.size()), a) << dtype_name(dt) << " fill n=" << n << " at " << sa;
          for (void* p : {static_cast<void*>(d), static_cast<void*>(s)}) gpu_->release(p);
          owned_.resize(owned_.size() - 2);
        }
  }
}

TEST_F(DeviceKernels, FillIdentityMatchesHost) {
  for (DataType dt : all_dtypes())
    for (ReduceOp op : all_ops()) {
      std::vector<uint8_t> a(static_cast<size_t>(kCount) * dtype_size(dt), 0x5A);
      void* da = upload(a);
      gpu_->fill_identity(da, kCount, dt, op);
      fill_identity_host(a.data(), kCount, dt, op);
      EXPECT_EQ(download(da, a.size()), a) << dtype_name(dt) << " " << op_name(op);
    }
}

TEST_F(DeviceKernels, ManyCopiesLandWhereTheyShould) {
  std::vector<uint8_t> src(3 << 20);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 13 + 7);
  void* ds = upload(src);
  std::vector<uint8_t> zero(src.size(), 0);
  void* dd = upload(zero);
  std::vector<uint8_t> want = zero;
  size_t off = 0;
  for (int i = 0; i < 200; ++i) {  // small, odd-sized and unaligned pieces, then one big one
    const size_t n = static_cast<size_t>(1 + (i * 37) % 500);
    gpu_->copy(static_cast<char*>(dd) + off + 3, static_cast<char*>(ds) + off, n);
    std::memcpy(want.data() + off + 3, src.data() + off, n);
    off += n + 11;
  }
  const size_t big = 2 << 20;
  gpu_->copy(static_cast<char*>(dd) + (1 << 20), static_cast<char*>(ds), big);
  std::memcpy(want.data() + (1 << 20), src.data(), big);
  EXPECT_EQ(download(dd, want.size()), want);
}

using NativeCollectivesOnGpu = GpuTest;

TEST_F(NativeCollectivesOnGpu, AllreduceAtOneRankKeepsTheData) {
  NativeCollectives* n = nccl_->native();
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->prefix(), "NCCL");
  for (DataType dt : all_dtypes())
    for (ReduceOp op :
         {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct, ReduceOp::kAverage}) {
      const std::vector<uint8_t> a = make_data(0, dt, op);
      void* d = upload(a);
      const Status s = n->allreduce(d, kCount, dt, op);
      ASSERT_TRUE(s.ok()) << s.to_string();
      std::vector<uint8_t> got = download(d, a.size());
      for (int64_t i = 0; i < kCount; ++i)
        ASSERT_NEAR(load(got.data(), i, dt), reference(1, i, op, dt), tolerance(dt, op, 8))
            << dtype_name(dt) << " " << op_name(op) << " [" << i << "]";
    }
}

TEST_F(NativeCollectivesOnGpu, AllgatherBroadcastAlltoallReducescatter) {
  NativeCollectives* n = nccl_->native();
  const std::vector<uint8_t> a = make_data(0, DataType::kFloat32, ReduceOp::kSum);
  const size_t bytes = a.size();
  void* in = upload(a);
  void* out = upload(std::vector<uint8_t>(bytes, 0));
  ASSERT_TRUE(n->allgatherv(in, out, {bytes}).ok());
  EXPECT_EQ(download(out, bytes), a);
  void* b = upload(a);
  ASSERT_TRUE(n->broadcast(b, bytes, 0).ok());
  EXPECT_EQ(download(b, bytes), a);
  void* out2 = upload(std::vector<uint8_t>(bytes, 0));
  ASSERT_TRUE(n->alltoallv(in, {bytes}, out2, {bytes}).ok());
  EXPECT_EQ(download(out2, bytes), a);
  void* out3 = upload(std::vector<uint8_t>(bytes, 0));
  ASSERT_TRUE(n->reducescatter(in, out3, {kCount}, DataType::kFloat32, ReduceOp::kSum).ok());
  EXPECT_EQ(download(out3, bytes), a);
  ASSERT_TRUE(n->barrier().ok());
}

TEST_F(NativeCollectivesOnGpu, HostBuffersAreNotSentThroughNccl) {
  // The in-process host transport has no native collectives: a clear error, no crash.
  std::vector<float> h(8, 1.0f);
  const Status s = nccl_->native()->allreduce(h.data(), 8, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
}

using DevicePointToPoint = GpuTest;

TEST_F(DevicePointToPoint, SendToSelfInOneGroup) {
  const std::vector<uint8_t> a = make_data(0, DataType::kInt32, ReduceOp::kSum, 4096);
  void* src = upload(a);
  void* dst = upload(std::vector<uint8_t>(a.size(), 0));
  auto r = nccl_->irecv(0, dst, a.size(), kTagData);
  auto s = nccl_->isend(0, src, a.size(), kTagData);
  ASSERT_TRUE(r->wait().ok());
  ASSERT_TRUE(s->wait().ok());
  EXPECT_EQ(download(dst, a.size()), a);
}

TEST_F(DevicePointToPoint, HostMemoryTravelsOverTheHostTransport) {
  int32_t x = 42, y = 0;
  auto r = nccl_->irecv(0, &y, sizeof y, kTagControl);
  auto s = nccl_->isend(0, &x, sizeof x, kTagControl);
  ASSERT_TRUE(s->wait().ok());
  ASSERT_TRUE(r->wait().ok());
  EXPECT_EQ(y, 42);
}

TEST_F(DevicePointToPoint, SplitMakesItsOwnCommunicatorOnFirstUse) {
  std::unique_ptr<Transport> sub = nccl_->split(0, 0);
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->size(), 1);
  EXPECT_EQ(nccl_->split(-1, 0), nullptr);
  const std::vector<uint8_t> a = make_data(0, DataType::kFloat32, ReduceOp::kSum);
  void* d = upload(a);
  ASSERT_TRUE(sub->native()->allreduce(d, kCount, DataType::kFloat32, ReduceOp::kSum).ok());
  EXPECT_EQ(download(d, a.size()), a);
}

}  // namespace
}  // namespace hvd::test
