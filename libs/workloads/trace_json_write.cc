// Writes a ModelTrace as JSON (the format trace.schema.json describes) and loads trace files.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hvd/workloads/trace_json.h"

namespace hvd::workloads {

std::string to_json(const ModelTrace& trace, int indent) {
  using nlohmann::ordered_json;
  ordered_json root;
  root["format"] = kTraceFormat;
  root["version"] = kTraceVersion;
  root["name"] = trace.name;
  root["description"] = trace.description;
  root["sample_unit"] = trace.sample_unit;
  root["reference_gpu"] = trace.reference_gpu;
  root["reference_batch"] = trace.reference_batch;
  if (trace.seq_len > 0) root["seq_len"] = trace.seq_len;
  root["reference_samples_per_sec"] = trace.reference_samples_per_sec;
  root["reference_source"] = trace.reference_source;
  root["compute_model"] = trace.compute_model;
  root["params"] = trace.params;
  root["fwd_s"] = trace.fwd_s;
  root["bwd_s"] = trace.bwd_s;
  root["step_s"] = trace.step_s;
  ordered_json layers = ordered_json::array();
  for (const LayerSpec& l : trace.layers) {
    layers.push_back({{"name", l.name},
                      {"type", l.type},
                      {"fwd_flops", l.fwd_flops},
                      {"fwd_s", l.fwd_s},
                      {"bwd_s", l.bwd_s}});
  }
  root["layers"] = std::move(layers);
  ordered_json tensors = ordered_json::array();
  for (const TensorSpec& t : trace.tensors) {
    ordered_json j = {{"name", t.name}, {"elements", t.elements}};
    if (!t.shape.empty()) j["shape"] = t.shape;
    j["dtype"] = t.dtype;
    if (!t.layer.empty()) j["layer"] = t.layer;
    j["ready_s"] = t.ready_s;
    tensors.push_back(std::move(j));
  }
  root["tensors"] = std::move(tensors);
  return root.dump(indent) + "\n";
}

Result<ModelTrace> load_trace_file(const std::string& path) {
  // Not a FIFO to wait on, nor a device or a file too large to hold.
  constexpr std::uintmax_t kMaxTraceBytes = std::uintmax_t{256} << 20;
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    return Error{path + ": is not a regular file (a trace file is JSON on disk)"};
  if (const auto n = std::filesystem::file_size(path, ec); !ec && n > kMaxTraceBytes)
    return Error{path + ": has " + std::to_string(n) + " bytes, more than the 256 MiB a trace file may have"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open trace file"};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read trace file"};
  return parse_trace(text.str(), path);
}

}  // namespace hvd::workloads
