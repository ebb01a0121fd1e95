// CnnBuilder: a shape-tracking mirror of tf_cnn_benchmarks' ConvNetBuilder (convnet_builder.py).
// It follows the feature map through conv/pool/affine layers, names variables the way the
// TF graph does (v0/cg/<scope>/conv<N>/conv2d/kernel, .../batchnorm<N>/beta, affine<N>/weights)
// and records forward MACs per layer. Internal to the workloads library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hvd/workloads/cnn_models.h"
#include "hvd/workloads/model_trace.h"

namespace hvd::workloads::detail {

/// Padding modes of ConvNetBuilder: SAME, VALID and SAME_RESNET (explicit k-1 padding when
/// strided, which gives the same output size as SAME).
enum class Padding { kSame, kValid, kSameResnet };

/// Batch-norm variables a conv gets.
enum class Norm {
  kNone,       ///< conv has a bias instead (VGG)
  kBeta,       ///< BN with beta only (scale=False; Inception v3)
  kGammaBeta,  ///< BN with gamma and beta (scale=True; ResNet)
};

/// Spatial size and channels of the current feature map.
struct FeatureMap {
  int h = 0;  ///< height
  int w = 0;  ///< width
  int c = 0;  ///< channels
};

/// Builds the layers and variables of a tf_cnn_benchmarks CNN, in creation order.
class CnnBuilder {
 public:
  /// Starts at an input image of `hw` x `hw` x `channels`; convs get `norm`.
  CnnBuilder(int hw, int channels, Norm norm);

  /// Conv kh x kw with stride (sh, sw); returns the output map.
  FeatureMap conv(int cout, int kh, int kw, int sh = 1, int sw = 1, Padding pad = Padding::kSame);
  /// Max or average pool (same shape arithmetic).
  FeatureMap pool(int kh, int kw, int sh, int sw, Padding pad = Padding::kValid);
  /// Fully connected layer on the flattened map.
  FeatureMap affine(int cout);
  /// Global average pool to 1 x 1 x c.
  void spatial_mean() { top_ = FeatureMap{1, 1, top_.c}; }

  /// The current feature map.
  FeatureMap top() const { return top_; }
  /// Continues from `map` (for module branches).
  void set_top(FeatureMap map) { top_ = map; }
  /// Opens a module scope "<prefix><count>" (e.g. "resnet_v13"); counters are per prefix.
  void begin_scope(const std::string& prefix);
  /// Closes the module scope.
  void end_scope() { scope_.clear(); }

  /// Builds the trace: tensors reversed to backprop order, times from `images_per_sec`.
  ModelTrace finish(const std::string& name, const CnnOptions& options, double images_per_sec,
                    const std::string& source) &&;

 private:
  struct Layer {
    LayerSpec spec;
    double macs = 0;         // forward MACs per image
    double bn_elements = 0;  // output elements per image when followed by batch norm
  };
  void add_var(const std::string& name, std::vector<std::int64_t> shape, const std::string& layer);
  std::string layer_path(const std::string& leaf) const;

  FeatureMap top_;
  Norm norm_;
  std::string scope_;
  int conv_count_ = 0;
  int bn_count_ = 0;
  int affine_count_ = 0;
  std::vector<std::pair<std::string, int>> scope_counts_;
  std::vector<Layer> layers_;
  std::vector<TensorSpec> vars_;  // creation order
};

}  // namespace hvd::workloads::detail
