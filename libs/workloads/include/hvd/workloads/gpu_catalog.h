// GPU catalogue: datasheet peaks for the GPUs traces are timed on or scaled to.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hvd/workloads/result.h"

namespace hvd::workloads {

/// Datasheet figures of one GPU model. Bandwidths are GB/s (1e9 bytes/s) per direction.
struct GpuSpec {
  std::string name;                  ///< catalogue name, e.g. "V100-SXM2"
  std::vector<std::string> aliases;  ///< other accepted names, e.g. {"V100"}
  std::string description;           ///< marketing name and memory size
  double fp32_tflops = 0;            ///< peak FP32 (non-tensor) TFLOPS
  double fp16_tflops = 0;            ///< peak dense FP16 TFLOPS (tensor cores where present)
  double memory_gb = 0;              ///< device memory, GB
  double memory_gbps = 0;            ///< device memory bandwidth, GB/s
  double pcie_gbps = 0;              ///< host link per direction, GB/s (datasheet bidir / 2)
  double nvlink_gbps = 0;            ///< all NVLinks per direction, GB/s (0: none)
  double measured_cnn_speed =
      0;  ///< measured fp32 CNN training speed relative to P100-SXM2 (0: none)
  std::string measured_source;  ///< where measured_cnn_speed comes from
  /// Fraction of memory_gbps that device copies and reductions reach (DRAM refresh, page
  /// and bank conflicts keep every GPU below its pin bandwidth); 1 where not measured.
  double memory_efficiency = 1.0;
  std::string memory_efficiency_source;  ///< where memory_efficiency comes from
  std::string source;           ///< vendor datasheet the peaks come from
};

/// All catalogued GPUs.
const std::vector<GpuSpec>& gpu_catalog();
/// The GPU called `name` (catalogue name or alias, case-insensitive); error lists known names.
Result<GpuSpec> find_gpu(std::string_view name);
/// Multiplier for compute times measured on `from` to get times on `to`: the ratio of measured
/// CNN training speeds when both GPUs have one, else the ratio of peak FP32 TFLOPS.
Result<double> compute_scale(std::string_view from, std::string_view to);

}  // namespace hvd::workloads
