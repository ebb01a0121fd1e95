// Strict parser for the JSON model-trace format. Every error names the JSON path, the bad
// value and what was expected: "<source>: tensors[3].elements: -5 is not a positive integer".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unordered_map>

#include "hvd/workloads/gpu_catalog.h"
#include "hvd/workloads/strict_json.h"
#include "hvd/workloads/trace_json.h"

namespace hvd::workloads {
namespace {

using nlohmann::json;

constexpr std::string_view kSampleUnits[] = {"images", "sequences", "samples"};

// Bounds that keep arithmetic finite and exact (docs/models.md, "JSON trace format"): any
// time at most a day, a step at least a nanosecond, FLOPs per sample at most 1e24, a tensor
// at most 2^40 elements and the whole trace at most 2^50 bytes (no int64 overflow).
constexpr double kMaxSeconds = 86400;
constexpr double kMinStepSeconds = 1e-9;
constexpr double kMaxFlops = 1e24;
constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 40;
constexpr std::int64_t kMaxTraceBytes = std::int64_t{1} << 50;

// A JSON value for an error message, cut to a readable length.
std::string show(const json& value) { return show_json_value(value); }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

bool near(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::fabs(b) + 1e-12;
}

// Walks one trace document; throws TraceError (caught in parse_trace) on the first problem.
class TraceParser {
 public:
  explicit TraceParser(std::string_view source) : source_(source) {}

  ModelTrace parse(const json& root);

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw TraceError(source_ + ": " + path + ": " + what);
  }
  [[noreturn]] void bad(const std::string& path, const json& value, const std::string& want) const {
    fail(path, show(value) + " is not " + want);
  }
  static std::string at(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  void check_keys(const json& obj, const std::string& path,
                  const std::set<std::string>& allowed) const;
  const json* get(const json& obj, const std::string& path, const std::string& key, bool required,
                  const std::string& want) const;
  std::string text(const json& obj, const std::string& path, const std::string& key, bool required,
                   std::string fallback = "") const;
  double number(const json& obj, const std::string& path, const std::string& key,
                bool positive, double max = kMaxSeconds) const;
  std::int64_t positive_int(const json& v, const std::string& path) const;
  void parse_header(const json& root, ModelTrace& t) const;
  void parse_layers(const json& root, ModelTrace& t);
  void parse_tensors(const json& root, ModelTrace& t);
  void resolve_timing(const json& root, ModelTrace& t) const;
  void check_step_time(const ModelTrace& t) const;
  void resolve_ready_times(ModelTrace& t) const;

  std::string source_;
  std::vector<bool> layer_timed_;   // layer i had fwd_s and bwd_s
  std::vector<bool> tensor_ready_;  // tensor i had ready_s
  std::vector<double> given_ready_; // tensor i's ready_s as given (when tensor_ready_[i])
  std::unordered_map<std::string, int> layer_index_;  // layer name -> index in layers[]
  std::int64_t bytes_ = 0;          // tensors' bytes so far
};

void TraceParser::check_keys(const json& obj, const std::string& path,
                             const std::set<std::string>& allowed) const {
  for (const auto& item : obj.items()) {
    if (allowed.count(item.key()) == 0) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      fail(at(path, cut_text(item.key())), "unknown field; expected one of " + join(names));
    }
  }
}

const json* TraceParser::get(const json& obj, const std::string& path, const std::string& key,
                             bool required, const std::string& want) const {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) fail(at(path, key), "missing; expected " + want);
    return nullptr;
  }
  return &*it;
}

std::string TraceParser::text(const json& obj, const std::string& path, const std::string& key,
                              bool required, std::string fallback) const {
  const json* v = get(obj, path, key, required, "a non-empty string");
  if (v == nullptr) return fallback;
  if (!v->is_string()) bad(at(path, key), *v, "a string");
  if (required && v->get<std::string>().empty()) bad(at(path, key), *v, "a non-empty string");
  return v->get<std::string>();
}

// A number in [0, max] (positive: in (0, max]); max is a day for times (kMaxSeconds).
double TraceParser::number(const json& obj, const std::string& path, const std::string& key,
                           bool positive, double max) const {
  const json& v = obj.at(key);
  const std::string want = positive ? "a number > 0" : "a number >= 0";
  if (!v.is_number()) bad(at(path, key), v, want);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || (positive && d == 0)) bad(at(path, key), v, want);
  if (d > max) {
    std::ostringstream bound;
    bound << max;
    bad(at(path, key), v,
        want + " and <= " + bound.str() + (max == kMaxSeconds ? " (a day, in seconds)" : ""));
  }
  return d;
}

std::int64_t TraceParser::positive_int(const json& v, const std::string& path) const {
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0 &&
      v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return v.get<std::int64_t>();
  }
  if (v.is_number_integer() && v.get<std::int64_t>() > 0) return v.get<std::int64_t>();
  bad(path, v, "a positive integer");
}

void TraceParser::parse_header(const json& root, ModelTrace& t) const {
  check_keys(root, "",
             {"$schema", "format", "version", "name", "description", "sample_unit", "reference_gpu",
              "reference_batch", "seq_len", "reference_samples_per_sec", "reference_source", "compute_model",
              "params", "fwd_s", "bwd_s", "step_s", "layers", "tensors"});
  if (const json* f = get(root, "", "format", false, "")) {
    if (*f != kTraceFormat) bad("format", *f, "\"" + std::string(kTraceFormat) + "\"");
  }
  if (const json* v = get(root, "", "version", false, "")) {
    if (*v != kTraceVersion) bad("version", *v, std::to_string(kTraceVersion));
  }
  t.name = text(root, "", "name", true);
  t.description = text(root, "", "description", false);
  t.sample_unit = text(root, "", "sample_unit", false, "samples");
  if (std::find(std::begin(kSampleUnits), std::end(kSampleUnits), t.sample_unit) ==
      std::end(kSampleUnits)) {
    bad("sample_unit", root["sample_unit"], "one of \"images\", \"sequences\", \"samples\"");
  }
  t.reference_gpu = text(root, "", "reference_gpu", true);
  if (auto gpu = find_gpu(t.reference_gpu); !gpu) {
    bad("reference_gpu", root["reference_gpu"], "a known GPU: " + gpu.error());
  }
  const json* batch = get(root, "", "reference_batch", true, "a positive integer");
  const std::int64_t b = positive_int(*batch, "reference_batch");
  if (b > 1 << 30) bad("reference_batch", *batch, "a batch size below 2^30");
  t.reference_batch = static_cast<int>(b);
  if (const json* s = get(root, "", "seq_len", false, "")) {
    const std::int64_t n = positive_int(*s, "seq_len");
    if (n > 1 << 20) bad("seq_len", *s, "a sequence length of at most 2^20 tokens");
    t.seq_len = static_cast<int>(n);
  }
  t.reference_source = text(root, "", "reference_source", false);
  t.compute_model = text(root, "", "compute_model", false);
}

void TraceParser::parse_layers(const json& root, ModelTrace& t) {
  const json* layers = get(root, "", "layers", false, "");
  if (layers == nullptr) return;
  if (!layers->is_array()) bad("layers", *layers, "an array of layer objects");
  std::set<std::string> names;
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const std::string path = "layers[" + std::to_string(i) + "]";
    const json& l = (*layers)[i];
    if (!l.is_object()) bad(path, l, "a layer object");
    check_keys(l, path, {"name", "type", "fwd_flops", "fwd_s", "bwd_s"});
    LayerSpec spec;
    spec.name = text(l, path, "name", true);
    if (!names.insert(spec.name).second) bad(path + ".name", l["name"], "a unique layer name");
    spec.type = text(l, path, "type", false, "layer");
    if (l.contains("fwd_flops")) spec.fwd_flops = number(l, path, "fwd_flops", false, kMaxFlops);
    const bool has_fwd = l.contains("fwd_s"), has_bwd = l.contains("bwd_s");
    if (has_fwd) spec.fwd_s = number(l, path, "fwd_s", false);
    if (has_bwd) spec.bwd_s = number(l, path, "bwd_s", false);
    if (has_fwd != has_bwd) {
      fail(path + (has_fwd ? ".bwd_s" : ".fwd_s"),
           "missing; expected a number >= 0 "
           "(a layer gives both fwd_s and bwd_s, or neither)");
    }
    if (i > 0 && has_fwd != layer_timed_[0]) {
      fail(path + ".fwd_s",
           std::string(has_fwd ? "present" : "missing") +
               "; expected every layer or no layer to give fwd_s and bwd_s (as layers[0] does" +
               (layer_timed_[0] ? ")" : " not)"));
    }
    layer_timed_.push_back(has_fwd);
    layer_index_.emplace(spec.name, static_cast<int>(t.layers.size()));
    t.layers.push_back(std::move(spec));
  }
}

void TraceParser::parse_tensors(const json& root, ModelTrace& t) {
  const json* tensors = get(root, "", "tensors", true, "a non-empty array of tensor objects");
  if (!tensors->is_array() || tensors->empty()) {
    bad("tensors", *tensors, "a non-empty array of tensor objects");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < tensors->size(); ++i) {
    const std::string path = "tensors[" + std::to_string(i) + "]";
    const json& j = (*tensors)[i];
    if (!j.is_object()) bad(path, j, "a tensor object");
    check_keys(j, path, {"name", "elements", "shape", "dtype", "layer", "ready_s"});
    TensorSpec spec;
    spec.name = text(j, path, "name", true);
    if (!names.insert(spec.name).second) bad(path + ".name", j["name"], "a unique tensor name");
    const json* elements = get(j, path, "elements", true, "a positive integer");
    spec.elements = positive_int(*elements, path + ".elements");
    if (spec.elements > kMaxTensorElements) {
      bad(path + ".elements", *elements, "a positive integer <= 2^40 (1099511627776)");
    }
    if (const json* shape = get(j, path, "shape", false, "")) {
      if (!shape->is_array()) bad(path + ".shape", *shape, "an array of positive integers");
      // The product saturates past elements (no overflow: elements <= 2^40, dims < 2^63).
      std::int64_t product = 1;
      for (std::size_t d = 0; d < shape->size(); ++d) {
        spec.shape.push_back(positive_int((*shape)[d], path + ".shape[" + std::to_string(d) + "]"));
        product = spec.shape.back() > kMaxTensorElements / product ? kMaxTensorElements + 1
                                                                   : product * spec.shape.back();
      }
      if (product != spec.elements) {
        const std::string shown =
            product > kMaxTensorElements ? "more than 2^40" : std::to_string(product);
        bad(path + ".shape", *shape,
            "a shape whose product (" + shown + ") equals elements (" +
                std::to_string(spec.elements) + ")");
      }
    }
    spec.dtype = text(j, path, "dtype", true);
    if (dtype_size(spec.dtype) == 0) {
      bad(path + ".dtype", j["dtype"], "a known dtype (" + join(known_dtypes()) + ")");
    }
    bytes_ += spec.elements * dtype_size(spec.dtype);
    if (bytes_ > kMaxTraceBytes) {
      bad(path + ".elements", *elements,
          "within the trace's bound of 2^50 bytes (1 PiB) for all tensors together");
    }
    spec.layer = text(j, path, "layer", false);
    if (!spec.layer.empty() && layer_index_.count(spec.layer) == 0) {
      bad(path + ".layer", j["layer"], "the name of an entry in layers[]");
    }
    tensor_ready_.push_back(j.contains("ready_s"));
    if (tensor_ready_.back()) spec.ready_s = number(j, path, "ready_s", false);
    given_ready_.push_back(spec.ready_s);
    t.tensors.push_back(std::move(spec));
  }
}

// Step time: from the layers' fwd_s/bwd_s when they give them, else step_s split by the
// layers' fwd_flops (FLOPs rule), else (no layers) fwd_s/bwd_s or step_s split 1:2.
void TraceParser::resolve_timing(const json& root, ModelTrace& t) const {
  const bool timed = !t.layers.empty() && layer_timed_[0];
  auto opt = [&](const char* key, bool positive) {
    return root.contains(key) ? number(root, "", key, positive) : -1.0;
  };
  const double step = opt("step_s", true), fwd = opt("fwd_s", false), bwd = opt("bwd_s", false);
  if (timed) {
    double sum_f = 0, sum_b = 0;
    for (const auto& l : t.layers) sum_f += l.fwd_s, sum_b += l.bwd_s;
    if (fwd >= 0 && !near(fwd, sum_f))
      bad("fwd_s", root["fwd_s"], "the sum of layers[].fwd_s (" + std::to_string(sum_f) + ")");
    if (bwd >= 0 && !near(bwd, sum_b))
      bad("bwd_s", root["bwd_s"], "the sum of layers[].bwd_s (" + std::to_string(sum_b) + ")");
    t.fwd_s = fwd >= 0 ? fwd : sum_f;
    t.bwd_s = bwd >= 0 ? bwd : sum_b;
    if (step >= 0 && !near(step, t.fwd_s + t.bwd_s))
      bad("step_s", root["step_s"], "fwd_s + bwd_s (" + std::to_string(t.fwd_s + t.bwd_s) + ")");
    t.step_s = step >= 0 ? step : t.fwd_s + t.bwd_s;
    if (t.step_s <= 0) fail("layers", "every fwd_s and bwd_s is 0; expected a positive step time");
    return;
  }
  const bool split = fwd >= 0 && bwd >= 0;
  if (split && step >= 0 && !near(step, fwd + bwd))
    bad("step_s", root["step_s"], "fwd_s + bwd_s (" + std::to_string(fwd + bwd) + ")");
  if (step < 0 && !(split && fwd + bwd > 0)) {
    fail("step_s",
         "missing; expected a number > 0 (or layers with fwd_s and bwd_s, or fwd_s and bwd_s)");
  }
  const double total = step >= 0 ? step : fwd + bwd;
  if (t.layers.empty()) {
    t.fwd_s = split ? fwd : total / 3;
    t.bwd_s = split ? bwd : total - t.fwd_s;
    t.step_s = total;
    return;
  }
  if (t.fwd_flops() <= 0)
    fail("layers", "no layer has fwd_flops > 0; expected fwd_flops to split step_s by");
  split_step_by_flops(t, total);
  if (split && fwd > 0) {
    std::vector<double> fw, bw;
    for (const auto& l : t.layers) fw.push_back(l.fwd_s), bw.push_back(l.bwd_s);
    apply_step_time(t, total, bwd / fwd, fw, bw);
  }
}

// The resolved step (e.g. the sum of many layers' times) within [a nanosecond, a day]: a
// longer one would overflow the replay's clocks, a shorter one the samples per second.
void TraceParser::check_step_time(const ModelTrace& t) const {
  if (t.step_s >= kMinStepSeconds && t.step_s <= kMaxSeconds) return;
  std::ostringstream os;
  os << "the step time (fwd_s + bwd_s) is " << t.step_s
     << " s; expected between 1e-09 s and 86400 s (a day)";
  fail("step_s", os.str());
}

// Tensors without ready_s are ready when their layer's backward ends; the list must be in
// gradient-ready order and end within the backward pass.
void TraceParser::resolve_ready_times(ModelTrace& t) const {
  ModelTrace derived = t;
  fill_ready_times(derived);
  double prev = 0;
  for (std::size_t i = 0; i < t.tensors.size(); ++i) {
    const std::string path = "tensors[" + std::to_string(i) + "]";
    TensorSpec& spec = t.tensors[i];
    // A given ready_s stands (the FLOPs split above refilled them all from the layers).
    if (tensor_ready_[i]) spec.ready_s = given_ready_[i];
    if (!tensor_ready_[i]) {
      if (spec.layer.empty())
        fail(path + ".ready_s", "missing; expected a number >= 0 (or a layer to derive it from)");
      spec.ready_s = derived.tensors[i].ready_s;
    }
    if (spec.ready_s > t.bwd_s * (1 + 1e-9) + 1e-12) {
      bad(path + ".ready_s", spec.ready_s,
          "within the backward pass (<= bwd_s = " + std::to_string(t.bwd_s) + ")");
    }
    if (spec.ready_s < prev) {
      bad(path + ".ready_s", spec.ready_s,
          "in gradient-ready order (>= the previous tensor's " + std::to_string(prev) +
              "); list tensors in the order backprop makes them ready");
    }
    prev = spec.ready_s;
  }
}

ModelTrace TraceParser::parse(const json& root) {
  if (!root.is_object()) bad("(root)", root, "a JSON object (a model trace)");
  ModelTrace t;
  parse_header(root, t);
  parse_layers(root, t);
  parse_tensors(root, t);
  resolve_timing(root, t);
  check_step_time(t);
  resolve_ready_times(t);
  t.params = t.total_elements();
  if (root.contains("params")) {
    const std::int64_t p = positive_int(root["params"], "params");
    if (p != t.params)
      bad("params", root["params"],
          "the sum of tensors[].elements (" + std::to_string(t.params) + ")");
  }
  t.reference_samples_per_sec = t.reference_batch / t.step_s;
  if (root.contains("reference_samples_per_sec")) {
    t.reference_samples_per_sec = number(root, "", "reference_samples_per_sec", true,
                                         std::numeric_limits<double>::max());
  }
  return t;
}

}  // namespace

Result<ModelTrace> parse_trace(std::string_view json_text, std::string_view source) {
  const std::string name(source);
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{name + ": empty document; expected a JSON model trace object"};
  }
  // Depth-bounded, duplicate keys rejected, every JSON exception one line (strict_json.h).
  Result<json> root = parse_json_strict(json_text, source);
  if (!root) return Error{root.error()};
  try {
    return TraceParser(source).parse(*root);
  } catch (const TraceError& e) {
    return Error{e.what()};
  } catch (const json::exception& e) {  // defensive: a type slip in the walker, never a crash
    return Error{name + ": invalid trace: " + cut_text(e.what(), 120)};
  }
}

}  // namespace hvd::workloads
