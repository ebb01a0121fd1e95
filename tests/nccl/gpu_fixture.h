// Shared set-up of the GPU tests: an NCCL world of one rank on GPU 0 over the in-process
// host transport, host<->device helpers; skips with the reason when no GPU is usable.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "hvd/local.h"
#include "hvd/nccl.h"

namespace hvd::test {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    host_ = world_.transport(0);
    NcclOptions o;
    o.synchronous = synchronous();
    const Status s = make_nccl_world(*host_, 0, &nccl_, &gpu_, o);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  virtual bool synchronous() const { return true; }

  /// Device copy of `bytes` (freed at tear-down).
  void* upload(const std::vector<uint8_t>& bytes) {
    void* d = gpu_->allocate(bytes.size() ? bytes.size() : 1);
    owned_.push_back(d);
    EXPECT_EQ(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
    return d;
  }
  /// Host copy of `bytes` bytes at device address `d` (after the device stream drained).
  std::vector<uint8_t> download(const void* d, size_t bytes) {
    gpu_->synchronize();
    std::vector<uint8_t> h(bytes);
    EXPECT_EQ(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  void TearDown() override {
    for (void* p : owned_) gpu_->release(p);
    owned_.clear();
  }

  LocalWorld world_{1};
  std::unique_ptr<Transport> host_, nccl_;
  std::unique_ptr<Device> gpu_;
  std::vector<void*> owned_;
};

}  // namespace hvd::test
