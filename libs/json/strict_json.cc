// The strict parse (hvd/json/strict_json.h): nlohmann's callback keeps a stack of the open
// containers; the first problem stops the parse with the formatter's message.
#include "hvd/json/strict_json.h"

#include <set>

namespace hvd::strict_json {
namespace {

using nlohmann::json;

// Thrown from the callback to stop parsing at the first problem.
struct Stop {
  std::string message;
};

class Tracker {
 public:
  Tracker(int max_depth, const Formatter& format) : max_depth_(max_depth), format_(format) {}

  bool on_event(json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        const bool array = event == json::parse_event_t::array_start;
        begin_value();
        if (static_cast<int>(open_.size()) >= max_depth_) throw Stop{fail(Problem::kTooDeep, array)};
        open_.push_back(Open{array, 0, {}});
        keys_.emplace_back();
        break;
      }
      case json::parse_event_t::key:
        open_.back().key = parsed.get<std::string>();
        if (!keys_.back().insert(open_.back().key).second) throw Stop{fail(Problem::kDuplicateKey)};
        break;
      case json::parse_event_t::value:
        begin_value();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        open_.pop_back();
        keys_.pop_back();
        break;
    }
    return true;
  }

  std::string fail(Problem problem, bool array = false, const json::exception* error = nullptr) const {
    return format_(Failure{problem, open_, array, error, max_depth_});
  }

 private:
  // A value starts inside the innermost container: arrays count their elements.
  void begin_value() {
    if (!open_.empty() && open_.back().array) ++open_.back().started;
  }

  int max_depth_;
  const Formatter& format_;
  std::vector<Open> open_;
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

std::optional<json> parse(std::string_view text, int max_depth, const Formatter& format, std::string* message) {
  Tracker tracker(max_depth, format);
  try {
    return json::parse(text, [&tracker](int, json::parse_event_t event, json& parsed) {
      return tracker.on_event(event, parsed);
    });
  } catch (const Stop& e) {
    *message = e.message;
  } catch (const json::parse_error& e) {
    *message = tracker.fail(Problem::kSyntax, false, &e);
  } catch (const json::out_of_range& e) {
    *message = tracker.fail(Problem::kNumberOverflow, false, &e);
  } catch (const json::exception& e) {
    *message = tracker.fail(Problem::kOther, false, &e);
  }
  return std::nullopt;
}

std::string cut_text(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max > 3 ? max - 3 : 0)) + "...";
}

}  // namespace hvd::strict_json
