// ResNet-50 / ResNet-101 v1 as tf_cnn_benchmarks builds them (models/resnet_model.py).
#include <array>
#include <string>

#include "cnn_builder.h"
#include "hvd/workloads/cnn_models.h"

namespace hvd::workloads {
namespace {

using detail::CnnBuilder;
using detail::Norm;
using detail::Padding;

// bottleneck_block_v1: [projection 1x1 when the depth changes], 1x1 (stride here, v1),
// 3x3, 1x1. The projection conv is created first, so its gradients come last in the block.
void bottleneck_block_v1(CnnBuilder& cnn, int depth, int depth_bottleneck, int stride) {
  const auto input = cnn.top();
  cnn.begin_scope("resnet_v1");
  if (input.c != depth) {
    cnn.conv(depth, 1, 1, stride, stride, Padding::kSame);
    cnn.set_top(input);
  }
  // With depth == input channels and stride > 1 the shortcut is a 1x1 average pool (no weights).
  cnn.conv(depth_bottleneck, 1, 1, stride, stride, Padding::kSameResnet);
  cnn.conv(depth_bottleneck, 3, 3, 1, 1, Padding::kSameResnet);
  cnn.conv(depth, 1, 1, 1, 1, Padding::kSameResnet);
  cnn.end_scope();
}

// ResnetModel.add_inference: 7x7/2 conv + BN, 3x3/2 max pool, four stages of bottleneck
// blocks (stride 2 on the first block of stages 2-4), global mean, FC to num_classes.
ModelTrace build_resnet(const std::string& name, const std::array<int, 4>& layer_counts,
                        const CnnOptions& options, double images_per_sec,
                        const std::string& source) {
  CnnBuilder cnn(224, 3, Norm::kGammaBeta);
  cnn.conv(64, 7, 7, 2, 2, Padding::kSameResnet);
  cnn.pool(3, 3, 2, 2, Padding::kSame);
  constexpr std::array<int, 4> kDepth = {256, 512, 1024, 2048};
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < layer_counts[stage]; ++i) {
      const int stride = (stage > 0 && i == 0) ? 2 : 1;
      bottleneck_block_v1(cnn, kDepth[stage], kDepth[stage] / 4, stride);
    }
  }
  cnn.spatial_mean();
  cnn.affine(options.num_classes);
  return std::move(cnn).finish(name, options, images_per_sec, source);
}

}  // namespace

ModelTrace resnet50_trace(const CnnOptions& options) {
  ModelTrace t = build_resnet(
      "resnet50", {3, 4, 6, 3}, options, 219.0,
      "TensorFlow performance benchmarks page (tensorflow/docs_src/performance/benchmarks.md, "
      "May 2017): DGX-1 P100 SXM2, tf_cnn_benchmarks, synthetic data, batch 64: 219 images/s");
  t.description = "ResNet-50 v1 (tf_cnn_benchmarks), 224x224, 1001 classes";
  return t;
}

ModelTrace resnet101_trace(const CnnOptions& options) {
  ModelTrace t = build_resnet(
      "resnet101", {3, 4, 23, 3}, options, 119.4,
      "Horovod README (commits d54e3a88..849ef0a6, Sep 2017): Pascal GPUs, 4 servers x 4 GPUs, "
      "25 Gbit/s RoCE, tf_cnn_benchmarks batch 64: 119.4 images/s per GPU");
  t.description = "ResNet-101 v1 (tf_cnn_benchmarks), 224x224, 1001 classes";
  return t;
}

}  // namespace hvd::workloads
