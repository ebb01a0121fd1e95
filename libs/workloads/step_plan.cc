// Step decomposition: the trace's reference times scaled to a GPU and a batch size.
#include "hvd/workloads/step_plan.h"

#include <cmath>
#include <string>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::workloads {

Result<StepPlan> make_step_plan(const ModelTrace& trace, double compute_scale, int batch,
                                Precision precision) {
  if (!(compute_scale > 0) || !std::isfinite(compute_scale)) {
    return Error{"compute scale " + std::to_string(compute_scale) + " is not a number > 0"};
  }
  if (batch <= 0)
    return Error{"batch size " + std::to_string(batch) + " is not a positive integer"};
  if (trace.reference_batch <= 0) {
    return Error{trace.name + ": reference_batch " + std::to_string(trace.reference_batch) +
                 " is not a positive integer"};
  }
  StepPlan plan;
  plan.batch = batch;
  plan.time_scale = compute_scale * batch / trace.reference_batch;
  plan.fwd_s = trace.fwd_s * plan.time_scale;
  plan.bwd_s = trace.bwd_s * plan.time_scale;
  plan.step_s = plan.fwd_s + plan.bwd_s;
  // Backward visits layers last to first.
  double elapsed = 0;
  plan.layers.resize(trace.layers.size());
  for (std::size_t i = trace.layers.size(); i-- > 0;) {
    const LayerSpec& l = trace.layers[i];
    LayerTiming& out = plan.layers[i];
    out.name = l.name;
    out.fwd_s = l.fwd_s * plan.time_scale;
    out.bwd_s = l.bwd_s * plan.time_scale;
    out.bwd_start_s = elapsed;
    elapsed += out.bwd_s;
    out.bwd_end_s = elapsed;
  }
  // Tensors of one layer are listed together: look a layer up only when the name changes.
  std::string last_name;
  int last_index = -1;
  auto layer_of = [&](const std::string& name) {
    if (name != last_name) {
      last_name = name;
      last_index = trace.layer_index(name);
    }
    return last_index;
  };
  for (std::size_t i = 0; i < trace.tensors.size(); ++i) {
    const TensorSpec& t = trace.tensors[i];
    const std::string dtype = gradient_dtype(precision, t.dtype);
    plan.tensors.push_back(TensorReady{i, t.name, t.elements, t.elements * dtype_size(dtype), dtype,
                                       t.ready_s * plan.time_scale, layer_of(t.layer)});
  }
  return plan;
}

Result<StepPlan> make_step_plan(const ModelTrace& trace, std::string_view gpu, int batch,
                                Precision precision) {
  Result<ComputeSpeed> speed = compute_speed(trace, gpu, precision);
  if (!speed) return Error{speed.error()};
  return make_step_plan(trace, speed->scale, batch, precision);
}

}  // namespace hvd::workloads
