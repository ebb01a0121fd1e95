// Model registry: the built-in traces by name, or a user trace by .json path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hvd/workloads/model_trace.h"
#include "hvd/workloads/result.h"

namespace hvd::workloads {

/// One line of list_models().
struct ModelInfo {
  std::string name;         ///< registry name, e.g. "resnet101"
  std::string description;  ///< one line
  std::int64_t params = 0;  ///< total gradient elements
  std::size_t tensors = 0;  ///< number of gradient tensors
};

/// Names of the built-in models, in listing order.
const std::vector<std::string>& builtin_model_names();
/// The built-in models with their sizes.
std::vector<ModelInfo> list_models();
/// A built-in model by name, or a trace file when `name` ends in ".json" or contains '/'.
/// `seq_len` > 0 rebuilds a built-in transformer at that sequence length (an error for the
/// CNNs, for trace files and beyond the model's position embeddings).
Result<ModelTrace> find_model(std::string_view name, int seq_len = 0);

}  // namespace hvd::workloads
