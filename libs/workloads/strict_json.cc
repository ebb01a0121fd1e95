// Strict JSON parsing of model traces: hvd::strict_json's parse (libs/json), worded as the
// trace loader words its errors: "<source>: <path of the value>: ...", keys cut to 40
// characters in the path and the path to 120.
#include "hvd/workloads/strict_json.h"

namespace hvd::workloads {
namespace {

using nlohmann::json;
using strict_json::Failure;
using strict_json::Problem;

// "<path>: " of the value being read (or "" at the root), cut to a readable length. After a
// failure inside a value not yet announced (`next`: the parser failed within it), the
// innermost array points at that next element.
std::string where(const std::vector<strict_json::Open>& open, bool next) {
  std::string path;
  for (size_t i = 0; i < open.size(); ++i) {
    const strict_json::Open& f = open[i];
    if (f.array) {
      const size_t started = f.started + (next && i + 1 == open.size() ? 1 : 0);
      path += '[';
      path += std::to_string(started == 0 ? 0 : started - 1);
      path += ']';
    } else {
      if (!path.empty()) path += '.';
      path += cut_text(f.key, 40);
    }
    if (path.size() > 120) return cut_text(path, 120) + ": ";
  }
  return path.empty() ? "" : path + ": ";
}

std::string message(const Failure& f) {
  switch (f.problem) {
    case Problem::kTooDeep:
      return where(f.open, false) + "nested deeper than " + std::to_string(f.max_depth) +
             " levels; expected at most " + std::to_string(f.max_depth) + " nested arrays/objects";
    case Problem::kDuplicateKey:
      return where(f.open, false) + "duplicate key \"" + cut_text(f.open.back().key) +
             "\"; expected each key once per object";
    case Problem::kSyntax:  // the message quotes the last token read, which may be huge: cut it
      return "not valid JSON: " + cut_text(f.error->what(), 160);
    case Problem::kNumberOverflow:  // 406: a number beyond double, e.g. 1e400
      return where(f.open, true) + cut_text(f.error->what(), 120) + "; expected a finite number";
    case Problem::kOther:
      break;
  }
  return where(f.open, true) + "invalid JSON: " + cut_text(f.error->what(), 120);
}

}  // namespace

std::string show_json_value(const json& value, std::size_t max) {
  // Bytes that are not UTF-8 cannot be in a parsed document, but replace them anyway.
  return cut_text(value.dump(-1, ' ', false, json::error_handler_t::replace), max);
}

Result<json> parse_json_strict(std::string_view text, std::string_view source, int max_depth) {
  std::string why;
  std::optional<json> doc = strict_json::parse(text, max_depth, message, &why);
  if (!doc) return Error{std::string(source) + ": " + why};
  return std::move(*doc);
}

}  // namespace hvd::workloads
