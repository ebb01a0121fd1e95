// GPU catalogue: peaks from vendor datasheets; one measured CNN speed ratio (P100 -> V100);
// the fraction of memory bandwidth Hopper's device copies and reductions reach, measured.
#include "hvd/workloads/gpu_catalog.h"

#include <algorithm>
#include <cctype>

#include "hvd/workloads/strict_json.h"

namespace hvd::workloads {
namespace {

// Datasheets quote bidirectional link bandwidth; the catalogue stores per direction (half).
GpuSpec gpu(std::string name, std::vector<std::string> aliases, std::string description,
            double fp32, double fp16, double mem_gb, double mem_gbps, double pcie_bidir,
            double nvlink_bidir, std::string source) {
  GpuSpec g;
  g.name = std::move(name);
  g.aliases = std::move(aliases);
  g.description = std::move(description);
  g.fp32_tflops = fp32;
  g.fp16_tflops = fp16;
  g.memory_gb = mem_gb;
  g.memory_gbps = mem_gbps;
  g.pcie_gbps = pcie_bidir / 2;
  g.nvlink_gbps = nvlink_bidir / 2;
  g.source = std::move(source);
  return g;
}

constexpr const char* kP100 =
    "NVIDIA Tesla P100 datasheet (2016, 'NVIDIA Tesla P100 GPU Accelerator')";
constexpr const char* kV100 =
    "NVIDIA Tesla V100 datasheet (Jan 2020, 'NVIDIA V100 Tensor Core GPU')";
constexpr const char* kA100 = "NVIDIA A100 datasheet (2021, 'NVIDIA A100 Tensor Core GPU'), dense";
constexpr const char* kH100 = "NVIDIA H100 datasheet (2023, 'NVIDIA H100 Tensor Core GPU'), dense";
constexpr const char* kH200 = "NVIDIA H200 datasheet (2024, 'NVIDIA H200 Tensor Core GPU'), dense";
// Blackwell: per-GPU figures of the 8-GPU board and the 72-GPU rack, divided by their GPUs
// (NVIDIA publishes the systems): HGX B200 600 TFLOPS FP32, 36 PFLOPS sparse FP16/BF16 (18 dense),
// 1.4 TB HBM3e (180 GB a GPU), 8 TB/s a GPU, NVLink 5 1.8 TB/s a GPU (18 links of 100 GB/s);
// PCIe Gen5 x16 to the ConnectX-7 NICs (DGX B200 user guide). GB200 NVL72 5,760 TFLOPS FP32,
// 360 PFLOPS sparse FP16/BF16 (180 dense), 13.4 TB HBM3e (186 GB a GPU), 576 TB/s (8 TB/s a GPU),
// 130 TB/s NVLink (1.8 TB/s a GPU); its ConnectX-7 NICs hang off PCIe Gen5 x16.
constexpr const char* kB200 =
    "NVIDIA HGX B200 / DGX B200 datasheets (2024-2025, 'NVIDIA HGX Platform', 'NVIDIA DGX B200'), per GPU, dense";
constexpr const char* kGB200 = "NVIDIA GB200 NVL72 datasheet (2024, 'NVIDIA GB200 NVL72'), per GPU, dense";
// hvdbench --calibrate --device gpu and hvd_gpu_microbench on one H200 SXM (driver 580.159,
// CUDA 13.0, 2026-11-25): the backend's copy moved 2092 GB/s of tensor (4.18 TB/s through
// memory, as cudaMemcpyAsync), its float32 reduce kernel 1380 GB/s (4.14 TB/s): 0.87 and
// 0.86 of the 4.8 TB/s datasheet figure.
// The same on one H100 SXM5 80GB HBM3 (2026-11-26): copy 1487 GB/s (2.97 TB/s), reduce
// 974 GB/s (2.92 TB/s): 0.89 and 0.87 of 3.35 TB/s (docs/data/calibration_h100.json).
constexpr double kHopperMemoryEfficiency = 0.87;
constexpr const char* kHopperMeasured =
    "measured on an H200 SXM (hvdbench --calibrate --device gpu, 2026-11-25): copies 0.87, "
    "float32 reduce 0.86 of the datasheet bandwidth";
constexpr const char* kH100Measured =
    "measured on an H100 SXM5 (hvdbench --calibrate --device gpu, 2026-11-26): copies 0.89, "
    "float32 reduce 0.87 of the datasheet bandwidth";

std::vector<GpuSpec> build_catalog() {
  std::vector<GpuSpec> c;
  c.push_back(gpu("P100-SXM2", {"P100", "Tesla P100"}, "Tesla P100 SXM2 (NVLink) 16 GB", 10.6, 21.2,
                  16, 732, 32, 160, kP100));
  c.push_back(gpu("P100-PCIe", {"P100-PCIE-16GB"}, "Tesla P100 PCIe 16 GB", 9.3, 18.7, 16, 732, 32,
                  0, kP100));
  c.push_back(gpu("V100-SXM2", {"V100", "Tesla V100"}, "Tesla V100 SXM2 32 GB", 15.7, 125, 32, 900,
                  32, 300, kV100));
  c.push_back(gpu("V100-PCIe", {"V100-PCIE-32GB"}, "Tesla V100 PCIe 32 GB", 14, 112, 32, 900, 32, 0,
                  kV100));
  c.push_back(gpu("A100-SXM4-80GB", {"A100", "A100-SXM4"}, "A100 SXM4 80 GB", 19.5, 312, 80, 2039,
                  64, 600, kA100));
  c.push_back(gpu("A100-PCIe-80GB", {"A100-PCIe"}, "A100 PCIe 80 GB (NVLink bridge: 2 GPUs)", 19.5,
                  312, 80, 1935, 64, 600, kA100));
  c.push_back(gpu("H100-SXM5", {"H100", "H100-SXM"}, "H100 SXM5 80 GB", 67, 989.4, 80, 3350, 128,
                  900, kH100));
  c.push_back(gpu("H100-PCIe", {}, "H100 PCIe 80 GB (NVLink bridge: 2 GPUs)", 51, 756, 80, 2000,
                  128, 600, kH100));
  c.push_back(gpu("H200-SXM", {"H200"}, "H200 SXM 141 GB", 67, 989.4, 141, 4800, 128, 900, kH200));
  c.push_back(gpu("B200-SXM", {"B200"}, "B200 SXM 180 GB (HGX B200)", 75, 2250, 180, 8000, 128, 1800, kB200));
  c.push_back(gpu("GB200", {"GB200-NVL72"}, "GB200 Blackwell GPU 186 GB (GB200 NVL72)", 80, 2500, 186, 8000, 128,
                  1800, kGB200));
  // Hopper's memory efficiency: 0.87, the reduce fraction measured on both the H200 and the
  // H100 SXM5 (the reduce is the kernel a ring allreduce spends its device time in); the
  // H100 PCIe shares the memory system and takes the same fraction, not measured.
  for (GpuSpec& g : c)
    if (g.name.rfind("H1", 0) == 0 || g.name.rfind("H2", 0) == 0) {
      g.memory_efficiency = kHopperMemoryEfficiency;
      g.memory_efficiency_source =
          g.name == "H200-SXM"    ? kHopperMeasured
          : g.name == "H100-SXM5" ? kH100Measured
                                  : std::string(kH100Measured) + "; same memory system, not measured on a PCIe card";
    }
  // Measured tf_cnn_benchmarks fp32 batch-64 ResNet-101 training throughput per GPU:
  // Pascal 119.4 images/s (Horovod README, 2017) vs V100 202.78 (horovod issue #416).
  c[0].measured_cnn_speed = 1.0;
  c[0].measured_source = "reference point (the CNN traces' published P100 throughputs)";
  c[2].measured_cnn_speed = 202.78 / 119.4;
  c[2].measured_source =
      "ResNet-101 tf_cnn_benchmarks fp32 bs64: 202.78 images/s on V100 "
      "(github.com/horovod/horovod/issues/416) / 119.4 on Pascal (Horovod README, 2017)";
  return c;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = build_catalog();
  return catalog;
}

Result<GpuSpec> find_gpu(std::string_view name) {
  const std::string want = lower(name);
  std::string known;
  for (const GpuSpec& g : gpu_catalog()) {
    if (lower(g.name) == want) return g;
    for (const auto& alias : g.aliases) {
      if (lower(alias) == want) return g;
    }
    known += (known.empty() ? "" : ", ") + g.name;
  }
  return Error{"unknown GPU '" + cut_text(name) + "'; known GPUs: " + known +
               " (aliases: P100, V100, A100, H100, H200, B200)"};
}

Result<double> compute_scale(std::string_view from, std::string_view to) {
  Result<GpuSpec> a = find_gpu(from);
  if (!a) return Error{a.error()};
  Result<GpuSpec> b = find_gpu(to);
  if (!b) return Error{b.error()};
  if (a->measured_cnn_speed > 0 && b->measured_cnn_speed > 0) {
    return a->measured_cnn_speed / b->measured_cnn_speed;
  }
  return a->fp32_tflops / b->fp32_tflops;
}

}  // namespace hvd::workloads
