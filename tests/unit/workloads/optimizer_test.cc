// The optimizer update priced by its memory traffic: more state, more bytes, more time beyond
// the plain SGD the measured throughputs include, on the GPU's measured memory bandwidth.
#include "hvd/workloads/optimizer.h"

#include <gtest/gtest.h>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::workloads {
namespace {

TEST(Optimizer, NamesRoundTripAndBadNamesAreNamed) {
  for (Optimizer o : {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam, Optimizer::kLamb}) {
    auto p = parse_optimizer(optimizer_name(o));
    ASSERT_TRUE(p) << optimizer_name(o);
    EXPECT_EQ(*p, o);
  }
  auto bad = parse_optimizer("adagrad");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("sgd, momentum, adam, lamb"), std::string::npos) << bad.error();
}

TEST(Optimizer, MoreStateMovesMoreBytes) {
  EXPECT_LT(optimizer_bytes_per_param(Optimizer::kSgd), optimizer_bytes_per_param(Optimizer::kMomentum));
  EXPECT_LT(optimizer_bytes_per_param(Optimizer::kMomentum), optimizer_bytes_per_param(Optimizer::kAdam));
  EXPECT_LT(optimizer_bytes_per_param(Optimizer::kAdam), optimizer_bytes_per_param(Optimizer::kLamb));
}

TEST(Optimizer, ExtraTimeIsTheTrafficBeyondSgdOnTheGpusMemory) {
  constexpr std::int64_t kBertLarge = 336226108;
  auto sgd = optimizer_extra_s(Optimizer::kSgd, kBertLarge, "A100-SXM4-80GB");
  ASSERT_TRUE(sgd);
  EXPECT_EQ(*sgd, 0);
  auto a100 = optimizer_extra_s(Optimizer::kLamb, kBertLarge, "A100-SXM4-80GB");
  ASSERT_TRUE(a100);
  const GpuSpec g = *find_gpu("A100-SXM4-80GB");
  EXPECT_NEAR(*a100, kBertLarge * 28.0 / (g.memory_gbps * 1e9 * g.memory_efficiency), 1e-12);
  EXPECT_GT(*a100, 3e-3);  // a few milliseconds: 9.4 GB more over ~2 TB/s
  EXPECT_LT(*a100, 6e-3);
  auto h100 = optimizer_extra_s(Optimizer::kLamb, kBertLarge, "H100");
  ASSERT_TRUE(h100);
  EXPECT_LT(*h100, *a100);  // more memory bandwidth
  auto adam = optimizer_extra_s(Optimizer::kAdam, kBertLarge, "A100-SXM4-80GB");
  EXPECT_LT(*adam, *a100);
  EXPECT_FALSE(optimizer_extra_s(Optimizer::kLamb, kBertLarge, "Z9000"));
}

}  // namespace
}  // namespace hvd::workloads
