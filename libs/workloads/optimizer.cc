#include "hvd/workloads/optimizer.h"

#include <string>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::workloads {

Result<Optimizer> parse_optimizer(std::string_view name) {
  for (Optimizer o : {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam, Optimizer::kLamb})
    if (name == optimizer_name(o)) return o;
  return Error{"'" + std::string(name) + "' is not one of sgd, momentum, adam, lamb"};
}

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kMomentum: return "momentum";
    case Optimizer::kAdam: return "adam";
    case Optimizer::kLamb: return "lamb";
  }
  return "?";
}

double optimizer_bytes_per_param(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return 12;
    case Optimizer::kMomentum: return 20;
    case Optimizer::kAdam: return 28;
    case Optimizer::kLamb: return 40;
  }
  return 12;
}

int optimizer_state_tensors(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return 0;
    case Optimizer::kMomentum: return 1;
    case Optimizer::kAdam:
    case Optimizer::kLamb: return 2;
  }
  return 0;
}

Result<double> optimizer_extra_s(Optimizer o, std::int64_t params, std::string_view gpu) {
  Result<GpuSpec> g = find_gpu(gpu);
  if (!g) return Error{g.error()};
  if (!(g->memory_gbps > 0)) return Error{"GPU " + g->name + " has no memory bandwidth in the catalogue"};
  const double extra_bytes = static_cast<double>(params) * (optimizer_bytes_per_param(o) - optimizer_bytes_per_param(Optimizer::kSgd));
  return extra_bytes / (g->memory_gbps * 1e9 * g->memory_efficiency);
}

Result<double> optimizer_extra_s(Optimizer o, const StepPlan& plan, std::string_view gpu) {
  std::int64_t params = 0;
  for (const TensorReady& t : plan.tensors) params += t.elements;
  return optimizer_extra_s(o, params, gpu);
}

}  // namespace hvd::workloads
