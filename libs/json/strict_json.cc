// The strict parse (hvd/json/strict_json.h): a SAX pass keeps a stack of the open containers
// and stops at the first problem with the formatter's message; then nlohmann builds the
// document.
#include "hvd/json/strict_json.h"

#include <set>

namespace hvd::strict_json {
namespace {

using nlohmann::json;

// The checks, as a SAX pass that builds nothing: it follows the path of the value being
// read, bounds the depth and rejects duplicate keys; the first problem stops it with the
// formatter's message. (nlohmann's callback parser did this while building the document,
// but its end_object looks through every element of the enclosing container: a trace of
// 200,000 tensors took O(n^2).)
class Checker final : public nlohmann::json_sax<json> {
 public:
  Checker(int max_depth, const Formatter& format) : max_depth_(max_depth), format_(format) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool key(string_t& k) override {
    open_.back().key = k;
    if (!keys_.back().insert(k).second) return stop(fail(Problem::kDuplicateKey));
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    const Problem p = dynamic_cast<const json::parse_error*>(&e)    ? Problem::kSyntax
                      : dynamic_cast<const json::out_of_range*>(&e) ? Problem::kNumberOverflow
                                                                     : Problem::kOther;
    return stop(fail(p, false, &e));
  }

  const std::string& message() const { return message_; }
  std::string fail(Problem problem, bool array = false, const json::exception* error = nullptr) const {
    return format_(Failure{problem, open_, array, error, max_depth_});
  }

 private:
  // A value starts inside the innermost container: arrays count their elements.
  bool value() {
    if (!open_.empty() && open_.back().array) ++open_.back().started;
    return true;
  }
  bool open(bool array) {
    value();
    if (static_cast<int>(open_.size()) >= max_depth_) return stop(fail(Problem::kTooDeep, array));
    open_.push_back(Open{array, 0, {}});
    keys_.emplace_back();
    return true;
  }
  bool close() {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool stop(std::string m) {
    if (message_.empty()) message_ = std::move(m);
    return false;
  }

  int max_depth_;
  const Formatter& format_;
  std::vector<Open> open_;
  std::vector<std::set<std::string>> keys_;
  std::string message_;
};

}  // namespace

std::optional<json> parse(std::string_view text, int max_depth, const Formatter& format, std::string* message) {
  // The checks first, then the document (both linear in the text).
  Checker check(max_depth, format);
  try {
    if (!json::sax_parse(text, &check)) {
      *message = check.message().empty() ? check.fail(Problem::kOther) : check.message();
      return std::nullopt;
    }
    return json::parse(text);
  } catch (const json::parse_error& e) {
    *message = check.fail(Problem::kSyntax, false, &e);
  } catch (const json::out_of_range& e) {
    *message = check.fail(Problem::kNumberOverflow, false, &e);
  } catch (const json::exception& e) {
    *message = check.fail(Problem::kOther, false, &e);
  }
  return std::nullopt;
}

std::string cut_text(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max > 3 ? max - 3 : 0)) + "...";
}

}  // namespace hvd::strict_json
