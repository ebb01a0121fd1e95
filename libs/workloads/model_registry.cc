// Model registry: built-in traces by name; anything ending in .json (or with a '/') is a file.
#include "hvd/workloads/model_registry.h"

#include <functional>

#include "hvd/workloads/cnn_models.h"
#include "hvd/workloads/strict_json.h"
#include "hvd/workloads/trace_json.h"
#include "hvd/workloads/transformer_models.h"

namespace hvd::workloads {
namespace {

struct Builtin {
  const char* name;
  std::function<ModelTrace(int seq)> build;  ///< seq 0: the model's own length
  int max_seq = 0;                           ///< longest sequence (0: not a sequence model)
};

const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> list = [] {
    std::vector<Builtin> l = {
      {"resnet50", [](int) { return resnet50_trace(); }},
      {"resnet101", [](int) { return resnet101_trace(); }},
      {"vgg16", [](int) { return vgg16_trace(); }},
      {"inception3", [](int) { return inception3_trace(); }},
      {"bert-large", [](int s) { return s > 0 ? bert_large_trace(s) : bert_large_trace(); }, kBertMaxSeq},
      {"gpt2-xl", [](int s) { return s > 0 ? gpt2_xl_trace(s) : gpt2_xl_trace(); }, kGpt2MaxSeq},
    };
    for (const std::string& n : llm_names()) l.push_back({n.c_str(), [n](int s) { return llm_trace(n, s); }, llm_max_seq(n)});
    return l;
  }();
  return list;
}

bool looks_like_path(std::string_view name) {
  return name.find('/') != std::string_view::npos ||
         (name.size() > 5 && name.substr(name.size() - 5) == ".json");
}

}  // namespace

const std::vector<std::string>& builtin_model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& b : builtins()) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

std::vector<ModelInfo> list_models() {
  std::vector<ModelInfo> out;
  for (const auto& b : builtins()) {
    const ModelTrace t = b.build(0);
    out.push_back(ModelInfo{t.name, t.description, t.params, t.tensor_count()});
  }
  return out;
}

Result<ModelTrace> find_model(std::string_view name, int seq_len) {
  if (seq_len < 0) return Error{"sequence length " + std::to_string(seq_len) + " is not a positive integer"};
  std::string sequence_models;
  for (const auto& b : builtins()) {
    if (b.max_seq > 0) sequence_models += (sequence_models.empty() ? "" : ", ") + std::string(b.name);
  }
  for (const auto& b : builtins()) {
    if (name != b.name) continue;
    if (seq_len > 0 && b.max_seq == 0) {
      return Error{"a sequence length applies to the transformer models (" + sequence_models + "), not to " +
                   b.name};
    }
    if (seq_len > b.max_seq) {
      return Error{"sequence length " + std::to_string(seq_len) + " is beyond " + b.name + "'s " +
                   std::to_string(b.max_seq) + " positions"};
    }
    return b.build(seq_len);
  }
  if (looks_like_path(name)) {
    if (seq_len > 0) {
      return Error{"a sequence length applies to the built-in transformer models (" + sequence_models +
                   "); a trace file is timed at its own length"};
    }
    return load_trace_file(std::string(name));
  }
  std::string known;
  for (const auto& n : builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
  return Error{"unknown model '" + cut_text(name) + "'; known models: " + known +
               " (or a path to a .json model trace)"};
}

}  // namespace hvd::workloads
