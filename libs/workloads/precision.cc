// Training precision and the measured single-GPU throughputs behind it.
//
// One GPU is measured for every built-in model and precision (an H100 SXM5, with
// scripts/gpu_throughput.py: PyTorch, synthetic data, forward + backward + SGD). Other GPUs
// take that figure times their speed relative to the H100 in the same precision, as one public
// benchmark measured it on one GPU of each kind with the same code (Lambda's PyTorch training
// benchmark: ResNet-50 for the CNNs, BERT-Large for the transformers). fp32 on a GPU without
// either falls back to the catalogue's fp32 scaling (gpu_catalog.h), as before precisions.
#include "hvd/workloads/precision.h"

#include <cmath>
#include <cstdlib>

#include "hvd/workloads/gpu_catalog.h"
#include "hvd/workloads/model_registry.h"
#include "hvd/workloads/strict_json.h"

namespace hvd::workloads {
namespace {

constexpr const char* kMeasuredGpu = "H100-SXM5";
constexpr const char* kMeasuredSource =
    "measured on one H100 SXM5 80GB (PyTorch 2.11, CUDA 13.0, synthetic data; "
    "scripts/gpu_throughput.py, 2026-11-26; docs/data/gpu_throughput_h100.json)";

std::vector<MeasuredRate> build_measured() {
  using P = Precision;
  const char* h = kMeasuredGpu;
  // Samples per second. VGG-16 fp32, tf32 and fp16 ran twice: the mean of the two runs.
  return {
      {h, "resnet50", 0, P::kFp32, 64, 884.5},       {h, "resnet50", 0, P::kTf32, 64, 1707.2},
      {h, "resnet50", 0, P::kFp16, 256, 4727.5},     {h, "resnet50", 0, P::kBf16, 256, 3985.4},
      {h, "resnet101", 0, P::kFp32, 64, 528.3},      {h, "resnet101", 0, P::kTf32, 64, 1102.1},
      {h, "resnet101", 0, P::kFp16, 256, 3011.3},    {h, "resnet101", 0, P::kBf16, 256, 2638.5},
      {h, "vgg16", 0, P::kFp32, 64, 609.4},          {h, "vgg16", 0, P::kTf32, 64, 1223.6},
      {h, "vgg16", 0, P::kFp16, 256, 3269.6},        {h, "vgg16", 0, P::kBf16, 256, 3316.8},
      {h, "inception3", 0, P::kFp32, 64, 578.1},     {h, "inception3", 0, P::kTf32, 64, 1008.5},
      {h, "inception3", 0, P::kFp16, 256, 2497.9},   {h, "inception3", 0, P::kBf16, 256, 2266.3},
      {h, "bert-large", 128, P::kFp32, 64, 171.9},   {h, "bert-large", 128, P::kTf32, 64, 551.0},
      {h, "bert-large", 128, P::kFp16, 64, 850.7},   {h, "bert-large", 128, P::kBf16, 64, 866.3},
      {h, "bert-large", 512, P::kFp16, 16, 185.2},   {h, "bert-large", 512, P::kBf16, 16, 211.8},
  };
}

// Lambda's PyTorch training benchmark (github.com/lambdal/deeplearning-benchmark, commit
// 0551cb7, pytorch/pytorch-train-throughput-fp16.csv and -fp32.csv), one-GPU rows, each
// against the "H100 80GB SXM5" row of the same file: ResNet-50 (images/s) and BERT-Large
// SQuAD fine-tuning (sequences/s). Its "fp32" ran NGC PyTorch 22.10, whose convolutions use
// TF32 on Ampere and Hopper: that column gives the tf32 ratios.
constexpr const char* kLambda =
    "Lambda PyTorch training benchmark, one GPU (github.com/lambdal/deeplearning-benchmark "
    "pytorch/pytorch-train-throughput-*.csv, commit 0551cb7): ResNet-50 and BERT-Large SQuAD "
    "against H100 80GB SXM5 in the same file";

std::vector<RelativeSpeed> build_relative() {
  using P = Precision;
  const std::string fp16_tf32 = std::string(kLambda);
  const std::string bf16 =
      std::string(kLambda) +
      "; bf16 takes the fp16 ratio (equal dense fp16 and bf16 tensor-core peaks on A100 and H100)";
  const std::string h200 =
      "NVIDIA H200 datasheet: the H100 SXM5's dense peaks (67 FP32, 989 FP16/BF16 TFLOPS); its "
      "faster memory is not credited (no measurement)";
  // Blackwell: nothing measured with the same code. Its dense FP16/BF16 tensor peak over the
  // H100 SXM5's (989.4 TFLOPS), for CNNs and transformers alike: an assumption, not a fit.
  const std::string blackwell =
      "not measured: the dense FP16/BF16 tensor peak over the H100 SXM5's 989.4 TFLOPS (gpu_catalog.h: "
      "HGX B200 / GB200 NVL72 datasheets)";
  const double b200 = 2250.0 / 989.4, gb200 = 2500.0 / 989.4;
  return {
      {"B200-SXM", P::kFp16, b200, b200, blackwell},
      {"B200-SXM", P::kBf16, b200, b200, blackwell},
      {"GB200", P::kFp16, gb200, gb200, blackwell},
      {"GB200", P::kBf16, gb200, gb200, blackwell},
      {"A100-SXM4-80GB", P::kFp16, 1582.0 / 2616, 152.0 / 301, fp16_tf32},
      {"A100-SXM4-80GB", P::kBf16, 1582.0 / 2616, 152.0 / 301, bf16},
      {"A100-SXM4-80GB", P::kTf32, 1066.0 / 1753, 75.0 / 141, fp16_tf32},
      {"A100-PCIe-80GB", P::kFp16, 1527.0 / 2616, 140.0 / 301, fp16_tf32},
      {"A100-PCIe-80GB", P::kBf16, 1527.0 / 2616, 140.0 / 301, bf16},
      {"A100-PCIe-80GB", P::kTf32, 1014.0 / 1753, 70.0 / 141, fp16_tf32},
      {"H100-PCIe", P::kFp16, 1866.0 / 2616, 203.0 / 301, fp16_tf32},
      {"H100-PCIe", P::kBf16, 1866.0 / 2616, 203.0 / 301, bf16},
      {"H100-PCIe", P::kTf32, 1197.0 / 1753, 97.0 / 141, fp16_tf32},
      {"V100-SXM2", P::kFp16, 833.0 / 2616, 57.0 / 301, std::string(kLambda) + " (V100 16GB)"},
      {"H200-SXM", P::kFp32, 1, 1, h200},
      {"H200-SXM", P::kTf32, 1, 1, h200},
      {"H200-SXM", P::kFp16, 1, 1, h200},
      {"H200-SXM", P::kBf16, 1, 1, h200},
  };
}

bool is_sequence_model(const ModelTrace& t) { return t.seq_len > 0 && t.sample_unit == "sequences"; }

// A built-in model as built in (a trace file that only shares a name does not count).
bool is_builtin(const ModelTrace& t) {
  for (const std::string& n : builtin_model_names()) {
    if (n != t.name) continue;
    Result<ModelTrace> b = find_model(n, t.seq_len);
    return b && b->params == t.params && b->tensor_count() == t.tensor_count();
  }
  return false;
}

// The measured row for `t` in `p`: the model's own, or for a transformer the nearest sequence
// length of the same model (else of BERT-Large); *flops_ratio converts its rate to t's length.
const MeasuredRate* measured_row(const ModelTrace& t, Precision p, double* flops_ratio) {
  *flops_ratio = 1;
  const MeasuredRate* best = nullptr;
  auto better = [&](const MeasuredRate& r) {
    return best == nullptr || std::abs(r.seq_len - t.seq_len) < std::abs(best->seq_len - t.seq_len);
  };
  for (const auto& r : measured_rates())
    if (r.precision == p && r.model == t.name && better(r)) best = &r;
  if (best == nullptr && is_sequence_model(t)) {
    for (const auto& r : measured_rates())
      if (r.precision == p && r.seq_len > 0 && better(r)) best = &r;
  }
  if (best == nullptr || !is_sequence_model(t) || (best->model == t.name && best->seq_len == t.seq_len))
    return best;
  Result<ModelTrace> at = find_model(best->model, best->seq_len);
  if (!at || !(t.fwd_flops() > 0)) return nullptr;
  *flops_ratio = at->fwd_flops() / t.fwd_flops();
  return best;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

Result<Precision> parse_precision(std::string_view name) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16})
    if (name == precision_name(p)) return p;
  return Error{"unknown precision '" + cut_text(name) + "'; known: fp32, tf32, fp16, bf16"};
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
  }
  return "fp32";
}

std::string gradient_dtype(Precision p, const std::string& dtype) {
  if (dtype != "float32") return dtype;
  if (p == Precision::kFp16) return "float16";
  if (p == Precision::kBf16) return "bfloat16";
  return dtype;
}

const std::vector<MeasuredRate>& measured_rates() {
  static const std::vector<MeasuredRate> rates = build_measured();
  return rates;
}

const std::vector<RelativeSpeed>& relative_speeds() {
  static const std::vector<RelativeSpeed> table = build_relative();
  return table;
}

Result<ComputeSpeed> compute_speed(const ModelTrace& trace, std::string_view gpu, Precision p) {
  Result<GpuSpec> g = find_gpu(gpu);
  if (!g) return Error{g.error()};
  const bool ampere_or_later = g->name[0] == 'A' || g->name[0] == 'H' || g->name[0] == 'B' || g->name[0] == 'G';
  if ((p == Precision::kTf32 || p == Precision::kBf16) && !ampere_or_later)
    return Error{std::string(precision_name(p)) + " needs an Ampere or later GPU; " + g->name + " has none"};
  double ratio = 1;
  std::string how = kMeasuredSource;
  bool covered = g->name == kMeasuredGpu;
  for (const auto& r : relative_speeds()) {
    if (covered || r.gpu != g->name || r.precision != p) continue;
    ratio = is_sequence_model(trace) ? r.transformer : r.cnn;
    how += "; x " + fixed(ratio, 3) + " for " + g->name + ": " + r.source;
    covered = true;
  }
  double flops_ratio = 1;
  const MeasuredRate* row = covered && is_builtin(trace) ? measured_row(trace, p, &flops_ratio) : nullptr;
  if (row != nullptr && trace.step_s > 0) {
    ComputeSpeed s;
    s.samples_per_s = row->samples_per_s * flops_ratio * ratio;
    s.scale = trace.reference_batch / (s.samples_per_s * trace.step_s);
    s.source = trace.name + " " + precision_name(p) + " on " + g->name + ": " + fixed(s.samples_per_s, 1) + " " +
               trace.sample_unit + "/s from " + row->model + (row->seq_len ? " seq " + std::to_string(row->seq_len) : "") +
               " " + fixed(row->samples_per_s, 1) + " at batch " + std::to_string(row->batch) +
               (flops_ratio != 1 ? " x " + fixed(flops_ratio, 3) + " (FLOPs per sequence)" : "") + " " + how;
    return s;
  }
  if (p == Precision::kFp32) {
    Result<double> scale = compute_scale(trace.reference_gpu, g->name);
    if (!scale) return Error{scale.error()};
    ComputeSpeed s;
    s.scale = *scale;
    s.samples_per_s = trace.step_s > 0 ? trace.reference_batch / (trace.step_s * *scale) : 0;
    s.source = "the trace's " + trace.reference_gpu + " times scaled to " + g->name + " (gpu_catalog.h: " +
               (g->measured_source.empty() ? std::string("peak FP32 ratio") : g->measured_source) + ")";
    return s;
  }
  std::string known;
  for (const auto& r : relative_speeds())
    if (r.precision == p) known += ", " + r.gpu;
  return Error{"no measured " + std::string(precision_name(p)) + " training throughput covers " + trace.name +
               " on " + g->name + " (" + precision_name(p) + " is known for the built-in models on " + kMeasuredGpu +
               known + "); use fp32, or scale the trace's times yourself"};
}

}  // namespace hvd::workloads
