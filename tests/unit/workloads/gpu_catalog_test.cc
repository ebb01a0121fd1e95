// GPU catalogue: datasheet figures, lookup by name/alias, compute scaling rule.
#include "hvd/workloads/gpu_catalog.h"

#include <gtest/gtest.h>

namespace hvd::workloads {
namespace {

TEST(GpuCatalog, HasTheFourGenerationsWithSources) {
  for (const char* name : {"P100-SXM2", "P100-PCIe", "V100-SXM2", "A100-SXM4-80GB", "H100-SXM5"}) {
    Result<GpuSpec> g = find_gpu(name);
    ASSERT_TRUE(g.ok()) << g.error();
    EXPECT_GT(g->fp32_tflops, 0);
    EXPECT_GT(g->memory_gbps, 0);
    EXPECT_GT(g->pcie_gbps, 0);
    EXPECT_FALSE(g->source.empty());
  }
  EXPECT_DOUBLE_EQ(find_gpu("P100").value().fp32_tflops, 10.6);
  EXPECT_DOUBLE_EQ(find_gpu("v100").value().nvlink_gbps, 150);  // 300 GB/s bidirectional
  EXPECT_DOUBLE_EQ(find_gpu("P100-PCIe").value().nvlink_gbps, 0);
  EXPECT_DOUBLE_EQ(find_gpu("H100").value().fp16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(find_gpu("h200").value().memory_gbps, 4800);
}

// Measured memory efficiency: Hopper's (the reduce fraction of an H200 and of an H100 SXM5)
// with the card it was measured on; the unmeasured generations keep the datasheet bandwidth.
TEST(GpuCatalog, MemoryEfficiencyIsMeasuredOrOne) {
  for (auto [name, card] : {std::pair{"H200", "H200"}, {"H100-SXM5", "H100 SXM5"}, {"H100-PCIe", "H100 SXM5"}}) {
    const GpuSpec g = find_gpu(name).value();
    EXPECT_DOUBLE_EQ(g.memory_efficiency, 0.87) << name;
    EXPECT_NE(g.memory_efficiency_source.find(card), std::string::npos) << name << ": " << g.memory_efficiency_source;
  }
  EXPECT_NE(find_gpu("H100-PCIe").value().memory_efficiency_source.find("not measured"), std::string::npos);
  for (const char* name : {"P100", "V100", "A100"}) {
    const GpuSpec g = find_gpu(name).value();
    EXPECT_DOUBLE_EQ(g.memory_efficiency, 1.0) << name;
    EXPECT_TRUE(g.memory_efficiency_source.empty()) << name;
  }
}

TEST(GpuCatalog, UnknownGpuListsKnownOnes) {
  Result<GpuSpec> g = find_gpu("K80");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().find("unknown GPU 'K80'"), std::string::npos);
  EXPECT_NE(g.error().find("A100-SXM4-80GB"), std::string::npos);
  EXPECT_THROW((void)g.value(), TraceError);
}

TEST(GpuCatalog, ComputeScaleUsesMeasuredThenPeakRatio) {
  EXPECT_DOUBLE_EQ(compute_scale("P100", "P100-SXM2").value(), 1.0);
  EXPECT_NEAR(compute_scale("P100", "V100").value(), 119.4 / 202.78, 1e-12);  // measured
  EXPECT_NEAR(compute_scale("P100", "A100").value(), 10.6 / 19.5, 1e-12);     // peak FP32
  EXPECT_NEAR(compute_scale("A100", "P100").value() * compute_scale("P100", "A100").value(), 1,
              1e-12);
  EXPECT_FALSE(compute_scale("P100", "TPU").ok());
}

}  // namespace
}  // namespace hvd::workloads
