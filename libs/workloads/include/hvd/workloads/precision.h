// Training precision: what a step computes in and what its gradients weigh on the wire, and
// how fast each catalogued GPU trains each built-in model in it (measured single-GPU
// throughputs, each with its source; docs/simulator.md, "Precision").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hvd/workloads/model_trace.h"
#include "hvd/workloads/result.h"

namespace hvd::workloads {

/// How a step computes.
enum class Precision {
  kFp32,  ///< float32, no TF32 (tf_cnn_benchmarks' fp32 on Pascal and Volta)
  kTf32,  ///< float32 storage, TF32 tensor-core math (Ampere and later)
  kFp16,  ///< mixed precision, float16 (autocast + loss scaling); float16 gradients
  kBf16,  ///< mixed precision, bfloat16; bfloat16 gradients
};

/// "fp32", "tf32", "fp16" or "bf16"; anything else is an error naming the four.
Result<Precision> parse_precision(std::string_view name);
/// The name parse_precision takes.
const char* precision_name(Precision p);
/// Element type a float32 gradient is allreduced in: float16 / bfloat16 under fp16 / bf16
/// (as apex's fp16 allreduce and Horovod's Compression.fp16 send it), else unchanged.
std::string gradient_dtype(Precision p, const std::string& dtype);

/// One measured single-GPU training throughput.
struct MeasuredRate {
  std::string gpu;        ///< catalogue name
  std::string model;      ///< built-in model name
  int seq_len = 0;        ///< sequence length (transformers; 0: none)
  Precision precision = Precision::kFp32;  ///< how it computed
  int batch = 0;          ///< per-GPU batch it was measured at
  double samples_per_s = 0;  ///< images or sequences per second
};

/// The measured table (one H100 SXM5, scripts/gpu_throughput.py; docs/data/gpu_throughput_h100.json).
const std::vector<MeasuredRate>& measured_rates();

/// Speed of a GPU in one precision relative to the H100 SXM5, for CNNs and for transformers.
struct RelativeSpeed {
  std::string gpu;           ///< catalogue name
  Precision precision = Precision::kFp16;  ///< the precision it holds for
  double cnn = 0;            ///< ratio for the CNNs (from ResNet-50)
  double transformer = 0;    ///< ratio for the transformers (from BERT-Large)
  std::string source;        ///< where the ratio comes from
};

/// The relative-speed table.
const std::vector<RelativeSpeed>& relative_speeds();

/// A trace's compute on a GPU in a precision.
struct ComputeSpeed {
  double scale = 1;          ///< multiplier of the trace's times (make_step_plan's compute_scale)
  double samples_per_s = 0;  ///< the throughput it stands for at the trace's reference batch
  std::string source;        ///< how it was found
};

/// The compute of `trace` on `gpu` in `p`: a measured rate of the model (a transformer at another
/// sequence length through its FLOPs; GPUs other than the measured one through relative_speeds),
/// else for fp32 the catalogue's scale from the trace's reference GPU (compute_scale). An error
/// when nothing measured covers a mixed or TF32 precision on that GPU, or the GPU lacks it.
Result<ComputeSpeed> compute_speed(const ModelTrace& trace, std::string_view gpu, Precision p);

}  // namespace hvd::workloads
