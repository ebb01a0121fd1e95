// Strict JSON parsing: nlohmann's parser with a callback that keeps the JSON path of the
// value being read, bounds the nesting depth and rejects duplicate keys (nlohmann keeps the
// last one silently). The parser itself is iterative; the bound protects what comes after
// (recursive walks, dump()) from a 100k-deep document.
#include "hvd/workloads/strict_json.h"

#include <set>
#include <vector>

namespace hvd::workloads {
namespace {

using nlohmann::json;

// Thrown from the callback to stop parsing at the first problem.
struct StrictJsonError {
  std::string message;  // without the "<source>: " prefix
};

// One open array or object on the way from the root to the value being read.
struct Frame {
  bool array = false;
  std::size_t next_index = 0;  // arrays: index of the next element
  std::string key;             // objects: the key of the value being read
  std::set<std::string> keys;  // objects: keys seen so far
};

class PathTracker {
 public:
  explicit PathTracker(int max_depth) : max_depth_(max_depth) {}

  // nlohmann's parser callback: depth is the number of open containers around the event.
  bool on_event(int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        begin_value();
        if (depth >= max_depth_) {
          throw StrictJsonError{where() + "nested deeper than " + std::to_string(max_depth_) +
                                " levels; expected at most " + std::to_string(max_depth_) +
                                " nested arrays/objects"};
        }
        stack_.push_back(Frame{event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::key: {
        Frame& f = stack_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw StrictJsonError{where() + "duplicate key \"" + cut_text(f.key) +
                                "\"; expected each key once per object"};
        }
        break;
      }
      case json::parse_event_t::value:
        begin_value();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack_.pop_back();
        break;
    }
    return true;
  }

  // "<path>: " of the value being read (or "" at the root), cut to a readable length.
  std::string where() const {
    std::string path;
    for (const Frame& f : stack_) {
      if (f.array) {
        path += "[" + std::to_string(f.next_index == 0 ? 0 : f.next_index - 1) + "]";
      } else {
        path += (path.empty() ? "" : ".") + cut_text(f.key, 40);
      }
      if (path.size() > 120) return cut_text(path, 120) + ": ";
    }
    return path.empty() ? "" : path + ": ";
  }

  // Before an error at a value not yet announced (the parser failed inside it): point the
  // innermost array at that next element.
  void point_at_next_element() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().next_index;
  }

 private:
  // A value starts inside the innermost container: arrays count their elements.
  void begin_value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().next_index;
  }

  int max_depth_;
  std::vector<Frame> stack_;
};

}  // namespace

std::string cut_text(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max > 3 ? max - 3 : 0)) + "...";
}

std::string show_json_value(const json& value, std::size_t max) {
  // Bytes that are not UTF-8 cannot be in a parsed document, but replace them anyway.
  return cut_text(value.dump(-1, ' ', false, json::error_handler_t::replace), max);
}

Result<json> parse_json_strict(std::string_view text, std::string_view source, int max_depth) {
  const std::string name(source);
  PathTracker tracker(max_depth);
  try {
    return json::parse(text, [&tracker](int depth, json::parse_event_t event, json& parsed) {
      return tracker.on_event(depth, event, parsed);
    });
  } catch (const StrictJsonError& e) {
    return Error{name + ": " + e.message};
  } catch (const json::parse_error& e) {
    // The message quotes the last token read, which may be huge: cut it.
    return Error{name + ": not valid JSON: " + cut_text(e.what(), 160)};
  } catch (const json::out_of_range& e) {  // 406: a number beyond double, e.g. 1e400
    tracker.point_at_next_element();
    return Error{name + ": " + tracker.where() + cut_text(e.what(), 120) +
                 "; expected a finite number"};
  } catch (const json::exception& e) {
    tracker.point_at_next_element();
    return Error{name + ": " + tracker.where() + "invalid JSON: " + cut_text(e.what(), 120)};
  }
}

}  // namespace hvd::workloads
