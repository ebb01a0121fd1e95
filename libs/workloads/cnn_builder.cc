// CnnBuilder: shape arithmetic, variable naming and timing of tf_cnn_benchmarks CNNs.
#include "cnn_builder.h"

#include <algorithm>
#include <utility>

namespace hvd::workloads::detail {
namespace {

constexpr const char* kTowerScope = "v0/cg/";
constexpr int kReferenceBatch = 64;

// Output size along one axis, as TensorFlow computes it.
int out_size(int in, int k, int stride, Padding pad) {
  if (pad == Padding::kValid) return (in - k) / stride + 1;
  return (in + stride - 1) / stride;  // SAME and SAME_RESNET: ceil(in / stride)
}

// Hybrid backward cost: alpha * bwd MACs + beta * BN output elements. alpha = 1.6777e-13 s/MAC
// and beta = 5.6815e-11 s/element on V100 reproduce the reference's bwd_ms_hybrid_model column
// (every BN layer within 1%); only their ratio matters for the split.
constexpr double kHybridMacsPerBnElement = 5.6815e-11 / 1.6777e-13;

}  // namespace

CnnBuilder::CnnBuilder(int hw, int channels, Norm norm) : top_{hw, hw, channels}, norm_(norm) {}

std::string CnnBuilder::layer_path(const std::string& leaf) const {
  return kTowerScope + (scope_.empty() ? "" : scope_ + "/") + leaf;
}

void CnnBuilder::begin_scope(const std::string& prefix) {
  auto it = std::find_if(scope_counts_.begin(), scope_counts_.end(),
                         [&](const auto& p) { return p.first == prefix; });
  if (it == scope_counts_.end()) it = scope_counts_.insert(scope_counts_.end(), {prefix, 0});
  scope_ = prefix + std::to_string(it->second++);
}

void CnnBuilder::add_var(const std::string& name, std::vector<std::int64_t> shape,
                         const std::string& layer) {
  TensorSpec t;
  t.name = name;
  t.elements = 1;
  for (auto d : shape) t.elements *= d;
  t.shape = std::move(shape);
  t.layer = layer;
  vars_.push_back(std::move(t));
}

FeatureMap CnnBuilder::conv(int cout, int kh, int kw, int sh, int sw, Padding pad) {
  const FeatureMap in = top_;
  top_ = FeatureMap{out_size(in.h, kh, sh, pad), out_size(in.w, kw, sw, pad), cout};
  const std::string layer = layer_path("conv" + std::to_string(conv_count_++));
  add_var(layer + "/conv2d/kernel", {kh, kw, in.c, cout}, layer);
  double bn_elements = 0;
  if (norm_ == Norm::kNone) {
    add_var(layer + "/biases", {cout}, layer);
  } else {
    const std::string bn = layer + "/batchnorm" + std::to_string(bn_count_++);
    if (norm_ == Norm::kGammaBeta) add_var(bn + "/gamma", {cout}, layer);
    add_var(bn + "/beta", {cout}, layer);
    bn_elements = static_cast<double>(top_.h) * top_.w * cout;
  }
  const double macs = static_cast<double>(top_.h) * top_.w * cout * in.c * kh * kw;
  layers_.push_back({LayerSpec{layer, "conv", 2 * macs, 0, 0}, macs, bn_elements});
  return top_;
}

FeatureMap CnnBuilder::pool(int kh, int kw, int sh, int sw, Padding pad) {
  top_ = FeatureMap{out_size(top_.h, kh, sh, pad), out_size(top_.w, kw, sw, pad), top_.c};
  return top_;
}

FeatureMap CnnBuilder::affine(int cout) {
  const int cin = top_.h * top_.w * top_.c;
  const std::string layer = kTowerScope + std::string("affine") + std::to_string(affine_count_++);
  add_var(layer + "/weights", {cin, cout}, layer);
  add_var(layer + "/biases", {cout}, layer);
  const double macs = static_cast<double>(cin) * cout;
  layers_.push_back({LayerSpec{layer, "fc", 2 * macs, 0, 0}, macs, 0});
  top_ = FeatureMap{1, 1, cout};
  return top_;
}

ModelTrace CnnBuilder::finish(const std::string& name, const CnnOptions& options,
                              double images_per_sec, const std::string& source) && {
  ModelTrace trace;
  trace.name = name;
  trace.sample_unit = "images";
  trace.reference_gpu = "P100";
  trace.reference_batch = kReferenceBatch;
  trace.reference_samples_per_sec = images_per_sec;
  trace.reference_source = source;
  std::vector<double> fwd, bwd_flops, bwd_cost;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Layer& l = layers_[i];
    trace.layers.push_back(l.spec);
    const double bwd_macs = (i == 0 ? 1.0 : 2.0) * l.macs;  // first layer: no input gradient
    fwd.push_back(l.macs);
    bwd_flops.push_back(bwd_macs);
    const bool hybrid = options.cost_model == CnnCostModel::kHybrid;
    bwd_cost.push_back(bwd_macs + (hybrid ? kHybridMacsPerBnElement * l.bn_elements : 0.0));
  }
  trace.tensors.assign(vars_.rbegin(), vars_.rend());  // backprop = reverse creation order
  trace.params = trace.total_elements();
  double fwd_sum = 0, bwd_sum = 0;
  for (std::size_t i = 0; i < fwd.size(); ++i) fwd_sum += fwd[i], bwd_sum += bwd_flops[i];
  trace.compute_model =
      std::string("step = reference_batch / reference_samples_per_sec; fwd:bwd = fwd MACs : ") +
      "(2 x fwd MACs, 1 x for the first layer); layers: fwd by MACs, bwd by " +
      (options.cost_model == CnnCostModel::kHybrid
           ? "bwd MACs + 338.6 MAC-equivalents per batch-norm output element (hybrid)"
           : "bwd MACs (flops)");
  apply_step_time(trace, kReferenceBatch / images_per_sec, bwd_sum / fwd_sum, fwd, bwd_cost);
  return trace;
}

}  // namespace hvd::workloads::detail
