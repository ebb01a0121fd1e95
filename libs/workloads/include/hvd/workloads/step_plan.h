// Step decomposition for replay: per-layer compute durations and per-tensor ready offsets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hvd/workloads/model_trace.h"
#include "hvd/workloads/precision.h"
#include "hvd/workloads/result.h"

namespace hvd::workloads {

/// Compute time of one layer in the replayed step.
struct LayerTiming {
  std::string name;        ///< layer name
  double fwd_s = 0;        ///< forward duration
  double bwd_s = 0;        ///< backward duration
  double bwd_start_s = 0;  ///< offset into backward when its backward starts
  double bwd_end_s = 0;    ///< offset into backward when its backward ends
};

/// When one gradient tensor becomes ready in the replayed step.
struct TensorReady {
  std::size_t index = 0;      ///< index in ModelTrace::tensors
  std::string name;           ///< tensor name
  std::int64_t elements = 0;  ///< elements
  std::int64_t bytes = 0;     ///< elements x dtype size
  std::string dtype;          ///< element type
  double ready_s = 0;         ///< offset into backward when it is ready
  int layer = -1;             ///< index in StepPlan::layers of the layer it belongs to (-1: none)
};

/// A training step scaled to a GPU and batch size.
struct StepPlan {
  double time_scale = 1;             ///< compute_scale x batch / reference_batch
  int batch = 0;                     ///< per-GPU batch
  double fwd_s = 0;                  ///< forward duration
  double bwd_s = 0;                  ///< backward duration
  double step_s = 0;                 ///< fwd_s + bwd_s
  std::vector<LayerTiming> layers;   ///< forward order
  std::vector<TensorReady> tensors;  ///< gradient-ready order
};

/// Scales the trace's times by `compute_scale` x batch / reference_batch (linear in batch);
/// under fp16/bf16 the float32 gradients become 2-byte tensors (gradient_dtype).
Result<StepPlan> make_step_plan(const ModelTrace& trace, double compute_scale, int batch,
                                Precision precision = Precision::kFp32);
/// Same, with the scale from compute_speed(trace, gpu, precision).
Result<StepPlan> make_step_plan(const ModelTrace& trace, std::string_view gpu, int batch,
                                Precision precision = Precision::kFp32);

}  // namespace hvd::workloads
