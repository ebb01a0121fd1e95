// JSON model-trace format: write, parse with strict validation, load from a file.
#pragma once

#include <string>
#include <string_view>

#include "hvd/workloads/model_trace.h"
#include "hvd/workloads/result.h"

namespace hvd::workloads {

/// Value of the "format" field written by to_json().
inline constexpr std::string_view kTraceFormat = "hvd-model-trace";
/// Value of the "version" field written by to_json().
inline constexpr int kTraceVersion = 1;

/// The trace as JSON text (all fields; parse_trace() gives it back unchanged).
std::string to_json(const ModelTrace& trace, int indent = 2);
/// Parses and validates a trace; errors read "<source>: <json path>: <value> <what was expected>".
Result<ModelTrace> parse_trace(std::string_view json_text, std::string_view source = "trace");
/// Reads and parses the file at `path` (the path is the error source).
Result<ModelTrace> load_trace_file(const std::string& path);

}  // namespace hvd::workloads
