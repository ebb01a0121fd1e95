// The strict JSON parse of the project's input files: a SAX pass over the text that follows
// the path of the value being read, bounds the nesting depth and rejects duplicate keys
// (nlohmann keeps the last one silently), then nlohmann's parse of the document. Both are
// checked before anything builds, copies or prints the document. The parser itself is
// iterative; the bound protects what comes after (recursive walks, dump()) from a
// 100k-deep document.
//
// The callers word their own messages: a trace's "tensors[3].elements: duplicate key ..."
// (libs/workloads) and a scenario's "cluster: key "gpu" appears twice ..." (simulator) come
// from one parse, each through its formatter.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hvd::strict_json {

/// One open array or object on the way from the root to the value being read.
struct Open {
  bool array = false;
  std::size_t started = 0;  ///< arrays: elements started so far (the one being read is started - 1)
  std::string key;          ///< objects: the key of the value being read
};

/// What stopped the parse.
enum class Problem {
  kTooDeep,         ///< an array or object would open more than max_depth containers
  kDuplicateKey,    ///< a key seen before in the same object (the innermost Open's key)
  kSyntax,          ///< nlohmann::json::parse_error: not JSON at all
  kNumberOverflow,  ///< nlohmann::json::out_of_range (406): a number beyond double, e.g. 1e400
  kOther,           ///< any other nlohmann::json::exception
};

/// Everything a formatter may name. `open` is outermost first; at kTooDeep it does not yet
/// hold the container that went too deep (`array`: that one is an array), whose element
/// count in its parent is already counted.
struct Failure {
  Problem problem;
  const std::vector<Open>& open;
  bool array = false;                  ///< kTooDeep: the new container is an array
  const nlohmann::json::exception* error = nullptr;  ///< kSyntax, kNumberOverflow, kOther
  int max_depth = 0;
};

/// Words the one-line message of a failure.
using Formatter = std::function<std::string(const Failure&)>;

/// Parses one JSON document, at most `max_depth` arrays/objects deep, each key once per
/// object. On failure returns nullopt and sets *message to format(failure).
std::optional<nlohmann::json> parse(std::string_view text, int max_depth, const Formatter& format,
                                    std::string* message);

/// `text` for an error message: at most `max` characters, "..." ending a cut one.
std::string cut_text(std::string_view text, std::size_t max = 60);

}  // namespace hvd::strict_json
