// VGG-16 as tf_cnn_benchmarks builds it (models/vgg_model.py, _construct_vgg).
#include <array>

#include "cnn_builder.h"
#include "hvd/workloads/cnn_models.h"

namespace hvd::workloads {

// Five groups of 3x3 SAME convs (with biases, no batch norm), each followed by a 2x2/2 max
// pool; flatten 7x7x512; FC 4096, dropout, FC 4096, dropout, FC num_classes.
ModelTrace vgg16_trace(const CnnOptions& options) {
  using detail::Padding;
  detail::CnnBuilder cnn(224, 3, detail::Norm::kNone);
  constexpr std::array<int, 5> kConvsPerGroup = {2, 2, 3, 3, 3};
  constexpr std::array<int, 5> kChannels = {64, 128, 256, 512, 512};
  for (int g = 0; g < 5; ++g) {
    for (int i = 0; i < kConvsPerGroup[g]; ++i) cnn.conv(kChannels[g], 3, 3, 1, 1, Padding::kSame);
    cnn.pool(2, 2, 2, 2, Padding::kValid);
  }
  cnn.affine(4096);
  cnn.affine(4096);
  cnn.affine(options.num_classes);
  ModelTrace t = std::move(cnn).finish(
      "vgg16", options, 154.0,
      "TensorFlow performance benchmarks page (tensorflow/docs_src/performance/benchmarks.md, "
      "May 2017): DGX-1 P100 SXM2, tf_cnn_benchmarks, synthetic data, batch 64: 154 images/s");
  t.description = "VGG-16 (tf_cnn_benchmarks), 224x224, 1001 classes";
  return t;
}

}  // namespace hvd::workloads
