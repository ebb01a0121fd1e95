// Model trace: the gradient tensors of one model, in the order backprop makes them ready,
// with per-layer forward/backward compute times for a reference GPU and batch size.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hvd::workloads {

/// One gradient tensor (one allreduce per step in Horovod's tf_cnn_benchmarks mode).
struct TensorSpec {
  std::string name;                 ///< framework variable name, e.g. "v0/cg/conv0/conv2d/kernel"
  std::int64_t elements = 0;        ///< number of elements (product of shape)
  std::vector<std::int64_t> shape;  ///< framework shape, e.g. {7, 7, 3, 64}
  std::string dtype = "float32";    ///< element type: one of known_dtypes()
  std::string layer;                ///< name of the LayerSpec whose backward produces it
  double ready_s = 0.0;  ///< seconds after backward starts when it is ready (reference GPU)
  bool operator==(const TensorSpec&) const = default;  ///< field-wise equality
};

/// One compute layer, listed in forward order.
struct LayerSpec {
  std::string name;        ///< layer scope, e.g. "v0/cg/resnet_v10/conv1"
  std::string type;        ///< "conv", "fc", "embedding", "transformer_block", ...
  double fwd_flops = 0.0;  ///< forward FLOPs per sample (2 x MACs)
  double fwd_s = 0.0;      ///< forward seconds at the reference GPU and batch
  double bwd_s = 0.0;      ///< backward seconds at the reference GPU and batch
  bool operator==(const LayerSpec&) const = default;  ///< field-wise equality
};

/// A whole model: what is communicated (tensors) and when compute makes it ready.
struct ModelTrace {
  std::string name;                        ///< registry name, e.g. "resnet101"
  std::string description;                 ///< one line for listings
  std::string sample_unit = "images";      ///< "images", "sequences" or "samples"
  std::string reference_gpu = "P100";      ///< GPU the times are for (see gpu_catalog.h)
  int reference_batch = 64;                ///< per-GPU batch the times are for
  int seq_len = 0;                         ///< tokens per sequence (transformers; 0: none)
  std::int64_t params = 0;                 ///< total elements over all tensors
  double fwd_s = 0.0;                      ///< forward time per step (sum of layer fwd_s)
  double bwd_s = 0.0;                      ///< backward time per step (sum of layer bwd_s)
  double step_s = 0.0;                     ///< fwd_s + bwd_s: compute time of one step
  double reference_samples_per_sec = 0.0;  ///< throughput the step time comes from
  std::string reference_source;            ///< where reference_samples_per_sec comes from
  std::string compute_model;               ///< how fwd/bwd were split over layers
  std::vector<LayerSpec> layers;           ///< forward order
  std::vector<TensorSpec> tensors;         ///< gradient-ready (backprop) order
  bool operator==(const ModelTrace&) const = default;  ///< field-wise equality

  /// Number of gradient tensors.
  std::size_t tensor_count() const { return tensors.size(); }
  /// Sum of tensor bytes (elements x dtype size).
  std::int64_t total_bytes() const;
  /// Sum of tensor elements.
  std::int64_t total_elements() const;
  /// Forward FLOPs per sample summed over layers.
  double fwd_flops() const;
  /// Index of the layer called `name`, or -1.
  int layer_index(std::string_view name) const;
};

/// Element types a trace may use.
const std::vector<std::string>& known_dtypes();
/// Bytes per element of `dtype`, or 0 when unknown.
int dtype_size(std::string_view dtype);

/// Sets layer fwd_s/bwd_s and trace fwd_s/bwd_s/step_s: step_s is split into forward and
/// backward as sum(fwd_weights) : bwd_over_fwd*sum(fwd_weights), then each over the layers in
/// proportion to fwd_weights / bwd_weights; finally fills tensor ready times.
void apply_step_time(ModelTrace& trace, double step_s, double bwd_over_fwd,
                     std::span<const double> fwd_weights, std::span<const double> bwd_weights);
/// The FLOPs rule: backward = 2 x forward FLOPs per layer except the first layer (1 x, no
/// input gradient); splits `step_s` with it via apply_step_time.
void split_step_by_flops(ModelTrace& trace, double step_s);
/// Sets each tensor's ready_s to the moment its layer finishes backward (layers run backward
/// in reverse forward order); tensors whose layer is unknown become ready at the end.
void fill_ready_times(ModelTrace& trace);

}  // namespace hvd::workloads
