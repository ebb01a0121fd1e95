// Model trace helpers: sizes, dtypes and the split of a step time over layers.
#include "hvd/workloads/model_trace.h"

#include <numeric>
#include <unordered_map>

namespace hvd::workloads {
namespace {

struct DtypeInfo {
  std::string_view name;
  int bytes;
};

constexpr DtypeInfo kDtypes[] = {
    {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"float64", 8},
    {"int32", 4},   {"int64", 8},   {"int8", 1},     {"uint8", 1},
};

double sum(std::span<const double> v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

}  // namespace

const std::vector<std::string>& known_dtypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& d : kDtypes) out.emplace_back(d.name);
    return out;
  }();
  return names;
}

int dtype_size(std::string_view dtype) {
  for (const auto& d : kDtypes) {
    if (d.name == dtype) return d.bytes;
  }
  return 0;
}

std::int64_t ModelTrace::total_bytes() const {
  std::int64_t bytes = 0;
  for (const auto& t : tensors) bytes += t.elements * dtype_size(t.dtype);
  return bytes;
}

std::int64_t ModelTrace::total_elements() const {
  std::int64_t n = 0;
  for (const auto& t : tensors) n += t.elements;
  return n;
}

double ModelTrace::fwd_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.fwd_flops;
  return f;
}

int ModelTrace::layer_index(std::string_view layer_name) const {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].name == layer_name) return static_cast<int>(i);
  }
  return -1;
}

void apply_step_time(ModelTrace& trace, double step_s, double bwd_over_fwd,
                     std::span<const double> fwd_weights, std::span<const double> bwd_weights) {
  const double fwd_total = step_s / (1.0 + bwd_over_fwd);
  const double bwd_total = step_s - fwd_total;
  const double fwd_sum = sum(fwd_weights);
  const double bwd_sum = sum(bwd_weights);
  for (std::size_t i = 0; i < trace.layers.size(); ++i) {
    auto& layer = trace.layers[i];
    layer.fwd_s = fwd_sum > 0 ? fwd_total * fwd_weights[i] / fwd_sum : 0.0;
    layer.bwd_s = bwd_sum > 0 ? bwd_total * bwd_weights[i] / bwd_sum : 0.0;
  }
  trace.fwd_s = fwd_total;
  trace.bwd_s = bwd_total;
  trace.step_s = step_s;
  fill_ready_times(trace);
}

void split_step_by_flops(ModelTrace& trace, double step_s) {
  std::vector<double> fwd;
  std::vector<double> bwd;
  for (std::size_t i = 0; i < trace.layers.size(); ++i) {
    fwd.push_back(trace.layers[i].fwd_flops);
    bwd.push_back((i == 0 ? 1.0 : 2.0) * trace.layers[i].fwd_flops);
  }
  const double fwd_sum = sum(fwd);
  const double ratio = fwd_sum > 0 ? sum(bwd) / fwd_sum : 2.0;
  apply_step_time(trace, step_s, ratio, fwd, bwd);
}

void fill_ready_times(ModelTrace& trace) {
  // Backward runs the layers last to first; a layer's gradients are ready when it finishes.
  std::vector<double> done(trace.layers.size(), 0.0);
  double elapsed = 0.0;
  for (std::size_t i = trace.layers.size(); i-- > 0;) {
    elapsed += trace.layers[i].bwd_s;
    done[i] = elapsed;
  }
  // By name through a map: a trace may have 100k layers and tensors.
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < trace.layers.size(); ++i) index.emplace(trace.layers[i].name, i);
  for (auto& tensor : trace.tensors) {
    const auto it = index.find(tensor.layer);
    tensor.ready_s = it != index.end() ? done[it->second] : elapsed;
  }
}

}  // namespace hvd::workloads
