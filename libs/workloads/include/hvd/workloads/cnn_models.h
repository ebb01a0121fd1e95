// The four tf_cnn_benchmarks CNNs of the Horovod paper, generated from their architecture.
#pragma once

#include "hvd/workloads/model_trace.h"

namespace hvd::workloads {

/// How backward time is split over layers (the forward/backward split is always the FLOPs rule).
enum class CnnCostModel {
  kFlops,   ///< per-layer backward cost = 2 x forward MACs (1 x for the first layer)
  kHybrid,  ///< kFlops plus a memory-bound term per output element of layers with batch norm
};

/// Options for the built-in CNN traces.
struct CnnOptions {
  CnnCostModel cost_model = CnnCostModel::kFlops;  ///< backward split over layers
  int num_classes = 1001;                          ///< tf_cnn_benchmarks: 1000 + background
};

/// ResNet-50 v1 as tf_cnn_benchmarks builds it (224x224, bottleneck [3,4,6,3]).
ModelTrace resnet50_trace(const CnnOptions& options = {});
/// ResNet-101 v1 as tf_cnn_benchmarks builds it (224x224, bottleneck [3,4,23,3]).
ModelTrace resnet101_trace(const CnnOptions& options = {});
/// VGG-16 as tf_cnn_benchmarks builds it (224x224, 13 conv + 3 FC, biases, no batch norm).
ModelTrace vgg16_trace(const CnnOptions& options = {});
/// Inception v3 as tf_cnn_benchmarks builds it (299x299, no auxiliary head, BN beta only).
ModelTrace inception3_trace(const CnnOptions& options = {});

}  // namespace hvd::workloads
