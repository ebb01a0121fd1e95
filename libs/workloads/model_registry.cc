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
  std::function<ModelTrace()> build;
};

const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> list = {
      {"resnet50", [] { return resnet50_trace(); }},
      {"resnet101", [] { return resnet101_trace(); }},
      {"vgg16", [] { return vgg16_trace(); }},
      {"inception3", [] { return inception3_trace(); }},
      {"bert-large", [] { return bert_large_trace(); }},
      {"gpt2-xl", [] { return gpt2_xl_trace(); }},
  };
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
    const ModelTrace t = b.build();
    out.push_back(ModelInfo{t.name, t.description, t.params, t.tensor_count()});
  }
  return out;
}

Result<ModelTrace> find_model(std::string_view name) {
  for (const auto& b : builtins()) {
    if (name == b.name) return b.build();
  }
  if (looks_like_path(name)) return load_trace_file(std::string(name));
  std::string known;
  for (const auto& n : builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
  return Error{"unknown model '" + cut_text(name) + "'; known models: " + known +
               " (or a path to a .json model trace)"};
}

}  // namespace hvd::workloads
