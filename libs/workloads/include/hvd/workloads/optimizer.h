// The optimizer update of a training step, priced by the device memory it moves: an update is
// a few elementwise passes over the parameters and their optimizer state, bound by memory
// bandwidth, not arithmetic. The measured single-GPU throughputs (precision.h) ran plain SGD,
// so a step with another optimizer pays the difference (docs/models.md, "Optimizer").
#pragma once

#include <cstdint>
#include <string_view>

#include "hvd/workloads/result.h"
#include "hvd/workloads/step_plan.h"

namespace hvd::workloads {

/// The update rule.
enum class Optimizer {
  kSgd,       ///< w -= lr g (what the measured throughputs ran)
  kMomentum,  ///< SGD with a momentum buffer
  kAdam,      ///< Adam / AdamW: first and second moments
  kLamb,      ///< LAMB: Adam's moments, then a per-tensor trust ratio and a second pass
};

/// "sgd", "momentum", "adam" or "lamb"; anything else is an error naming the four.
Result<Optimizer> parse_optimizer(std::string_view name);
/// The name parse_optimizer takes.
const char* optimizer_name(Optimizer o);
/// Bytes of device memory one update reads and writes per parameter: SGD 12 (weight and
/// gradient in, weight out), momentum 20 (+ the buffer in and out), Adam 28 (+ two moments in
/// and out), LAMB 40 (Adam's, writing the update, then a second pass reading weight and update
/// and writing the weight). Under fp16 / bf16 the same count holds with float32 master weights:
/// the 2-byte gradient read is paid back by the 2-byte weight copy written.
double optimizer_bytes_per_param(Optimizer o);
/// Tensors of optimizer state kept per parameter tensor (what a checkpoint or an elastic
/// state carries beside the weights): SGD 0, momentum 1, Adam and LAMB 2 (the two moments).
int optimizer_state_tensors(Optimizer o);
/// Seconds an update of `params` parameters takes on catalogue GPU `gpu` beyond plain SGD's:
/// params x (bytes - SGD's bytes) / (memory bandwidth x its measured efficiency).
Result<double> optimizer_extra_s(Optimizer o, std::int64_t params, std::string_view gpu);
/// The same for the parameters of `plan` (the elements of its gradients).
Result<double> optimizer_extra_s(Optimizer o, const StepPlan& plan, std::string_view gpu);

}  // namespace hvd::workloads
