// Strict JSON parsing of model traces (the parse itself is libs/json's, shared with the
// scenario loader): nesting depth bounded, duplicate keys rejected, every nlohmann exception
// turned into one short line that names the source and the JSON path. Values in messages
// are cut.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hvd/json/strict_json.h"
#include "hvd/workloads/result.h"

namespace hvd::workloads {

/// Deepest nesting of arrays and objects that parse_json_strict() accepts by default (the
/// project's formats need 4; a 100k-deep document must not exhaust a stack later on).
inline constexpr int kMaxJsonDepth = 64;

/// `text` for an error message: at most `max` characters, "..." ending a cut one.
using strict_json::cut_text;
/// A JSON value for an error message (its compact dump, cut as cut_text()).
std::string show_json_value(const nlohmann::json& value, std::size_t max = 60);

/// Parses one JSON document; errors are one line, "<source>: " then one of
///   "not valid JSON: [json.exception.parse_error.101] parse error at line 1, ..." (cut)
///   "<path>: nested deeper than 64 levels; expected at most 64 nested arrays/objects"
///   "<path>: duplicate key \"k\"; expected each key once per object"
///   "<path>: number overflow parsing '1e400' (json out_of_range.406); expected a finite number"
/// where <path> is the JSON path of the offending value, e.g. tensors[3].elements.
Result<nlohmann::json> parse_json_strict(std::string_view text, std::string_view source,
                                         int max_depth = kMaxJsonDepth);

}  // namespace hvd::workloads
