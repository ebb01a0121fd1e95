#include "core/json_scan.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace hvdview {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
bool IsNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

void AppendUtf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

}  // namespace

std::string DescribeChar(char c) {
  if (c >= 0x20 && c < 0x7F) return std::string("'") + c + "'";
  char text[16];
  std::snprintf(text, sizeof text, "byte 0x%02x", static_cast<unsigned char>(c));
  return text;
}

std::string QuoteCut(std::string_view text) {
  constexpr size_t kShown = 60;
  std::string out = "'";
  for (char c : text.substr(0, kShown)) {
    out += (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  out += text.size() > kShown ? "...' (" + std::to_string(text.size()) + " bytes)" : "'";
  return out;
}

void JsonScanner::Reset(const char* pos, const char* end, uint64_t base_offset_of_begin) {
  begin_ = pos;
  pos_ = pos;
  end_ = end;
  base_ = base_offset_of_begin;
}

char JsonScanner::PeekAfterSpace() {
  while (pos_ < end_ && IsSpace(*pos_)) ++pos_;
  if (pos_ == end_) throw NeedMoreInput{};
  return *pos_;
}

void JsonScanner::ExpectAfterSpace(char c) {
  const char found = PeekAfterSpace();
  if (found != c) throw Error(std::string("expected '") + c + "' but found " + DescribeChar(found));
  ++pos_;
}

void JsonScanner::CheckText(const char* begin, const char* end) {
  bool control = false, high = false;
  for (const char* at = begin; at < end; ++at) {
    const auto c = static_cast<unsigned char>(*at);
    control |= c < 0x20;
    high |= c >= 0x80;
  }
  if (control) bad_text_ |= kTextControlChar;
  // Escapes are ASCII, so the raw bytes are valid UTF-8 exactly when the literal text is.
  if (high && !IsValidUtf8(std::string_view(begin, static_cast<size_t>(end - begin)))) {
    bad_text_ |= kTextInvalidUtf8;
  }
}

std::string_view JsonScanner::String(int slot) {
  const char* start = ++pos_;
  for (const char* at = start; at < end_; ++at) {
    if (*at == '"') {
      pos_ = at + 1;
      CheckText(start, at);
      return {start, static_cast<size_t>(at - start)};
    }
    if (*at == '\\') return DecodeEscaped(start, at, slot);
  }
  throw NeedMoreInput{};
}

std::string_view JsonScanner::DecodeEscaped(const char* start, const char* at, int slot) {
  std::string& out = scratch_[static_cast<size_t>(slot)];
  out.assign(start, at);
  while (true) {
    if (at >= end_) throw NeedMoreInput{};
    const char c = *at;
    if (c == '"') break;
    if (c != '\\') {
      out.push_back(c);
      ++at;
      continue;
    }
    if (at + 1 >= end_) throw NeedMoreInput{};
    const char escape = at[1];
    at += 2;
    switch (escape) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        if (end_ - at < 4) throw NeedMoreInput{};
        uint32_t code = 0;
        auto [ptr, ec] = std::from_chars(at, at + 4, code, 16);
        if (ec != std::errc() || ptr != at + 4) throw Error("invalid \\u escape");
        at += 4;
        AppendUtf8(out, code);  // surrogate halves are kept as-is (rare in traces)
        break;
      }
      default:
        out.push_back(escape);
    }
  }
  CheckText(start, at);
  pos_ = at + 1;
  return out;
}

double JsonScanner::Number() {
  const char* start = pos_;
  while (pos_ < end_ && IsNumberChar(*pos_)) ++pos_;
  if (pos_ == end_) throw NeedMoreInput{};
  double value = 0;
  auto [ptr, ec] = std::from_chars(start, pos_, value);
  if (ec == std::errc::result_out_of_range && ptr == pos_) {
    // Valid but beyond a double: strtod tells overflow (+-HUGE_VAL) from underflow (~0).
    value = std::strtod(std::string(start, pos_).c_str(), nullptr);
  } else if (ec != std::errc() || ptr != pos_ || start == pos_) {
    const char* stop = pos_;
    while (stop < end_ && stop - start < 64 && std::isalnum(static_cast<unsigned char>(*stop)))
      ++stop;
    pos_ = start;
    throw Error("expected a number but found " +
                QuoteCut(std::string_view(start, static_cast<size_t>(stop - start))));
  }
  return value;
}

std::string_view JsonScanner::IdNumber(int64_t* id) {
  const char* start = pos_;
  Number();
  auto [ptr, ec] = std::from_chars(start, pos_, *id);
  if (ec == std::errc() && ptr == pos_) return {};
  *id = 0;
  return {start, static_cast<size_t>(pos_ - start)};
}

void JsonScanner::SkipString() {
  const char* start = ++pos_;
  while (true) {
    const char* quote = static_cast<const char*>(std::memchr(pos_, '"', end_ - pos_));
    if (!quote) throw NeedMoreInput{};
    size_t backslashes = 0;
    for (const char* p = quote - 1; p >= pos_ && *p == '\\'; --p) ++backslashes;
    pos_ = quote + 1;
    if (backslashes % 2 == 0) break;
  }
  CheckText(start, pos_ - 1);
}

void JsonScanner::SkipValue() {
  const char c = PeekAfterSpace();
  if (c == '"') return SkipString();
  if (c == '-' || (c >= '0' && c <= '9')) {
    Number();
    return;
  }
  if (c == '{' || c == '[') {
    int depth = 0;
    while (true) {
      if (pos_ >= end_) throw NeedMoreInput{};
      const char d = *pos_;
      if (d == '"') {
        SkipString();
        continue;
      }
      if ((d == '{' || d == '[') && ++depth > kMaxJsonDepth) {
        throw Error("arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) +
                    " levels");
      }
      if ((d == '}' || d == ']') && --depth == 0) {
        ++pos_;
        return;
      }
      ++pos_;
    }
  }
  for (std::string_view literal : {"true", "false", "null"}) {
    if (literal[0] != c) continue;
    if (end_ - pos_ < static_cast<ptrdiff_t>(literal.size())) throw NeedMoreInput{};
    if (std::string_view(pos_, literal.size()) == literal) {
      pos_ += literal.size();
      return;
    }
  }
  const bool not_json = c == 'N' || c == 'I';  // NaN, Infinity
  throw Error("expected a value but found " + DescribeChar(c) +
              (not_json ? " (NaN and Infinity are not JSON numbers)" : ""));
}

void JsonScanner::EventObject(RawEvent& event) {
  ++pos_;  // '{'
  bad_text_ = 0;
  seen_keys_ = 0;
  char c = PeekAfterSpace();
  if (c == '}') {
    ++pos_;
  } else {
    while (true) {
      if (c != '"') throw Error("expected a key in an event but found " + DescribeChar(c));
      const std::string_view key = String(7);
      ExpectAfterSpace(':');
      PeekAfterSpace();
      EventField(key, event);
      c = PeekAfterSpace();
      ++pos_;
      if (c == '}') break;
      if (c != ',') {
        --pos_;
        throw Error("expected ',' or '}' in an event but found " + DescribeChar(c));
      }
      c = PeekAfterSpace();
    }
  }
  if (event.ph == 0 && !event.type_error) event.type_error = "events without \"ph\"";
  event.bad_text = bad_text_;
}

void JsonScanner::EventField(std::string_view key, RawEvent& event) {
  const char c = *pos_;
  const bool is_string = c == '"';
  const bool is_number = c == '-' || (c >= '0' && c <= '9');
  auto wrong = [&](const char* message) {
    if (!event.type_error) event.type_error = message;
    SkipValue();
  };
  // Known fields given twice (the last value is used); other keys are not tracked.
  auto once = [&](uint32_t bit, const char* field) {
    if ((seen_keys_ & bit) && !event.repeated_key) event.repeated_key = field;
    seen_keys_ |= bit;
  };
  if (key == "ph") {
    once(1u << 0, "ph");
    if (!is_string) return wrong("events whose \"ph\" is not a string");
    const std::string_view ph = String(0);
    event.ph = ph.empty() ? '?' : ph[0];
  } else if (key == "name") {
    once(1u << 1, "name");
    if (!is_string) return wrong("events whose \"name\" is not a string");
    event.name = String(1);
  } else if (key == "cat") {
    once(1u << 2, "cat");
    if (is_string)
      event.cat = String(2);
    else
      SkipValue();
  } else if (key == "ts" || key == "dur") {
    const bool ts = key == "ts";
    once(ts ? 1u << 3 : 1u << 4, ts ? "ts" : "dur");
    if (!is_number)
      return wrong(ts ? "events whose \"ts\" is not a number"
                      : "events whose \"dur\" is not a number");
    const double value = Number();
    if (!(std::fabs(value) <= kMaxTimeUs) && !event.type_error) {
      event.type_error = ts ? "events whose \"ts\" is beyond +-1e18 us"
                            : "events whose \"dur\" is beyond +-1e18 us";
    }
    (ts ? event.ts : event.dur) = value;
    (ts ? event.has_ts : event.has_dur) = true;
  } else if (key == "pid" || key == "tid") {
    const bool pid = key == "pid";
    once(pid ? 1u << 5 : 1u << 6, pid ? "pid" : "tid");
    if (pid) event.has_pid = true;
    if (is_number) {
      (pid ? event.pid_text : event.tid_text) = IdNumber(pid ? &event.pid : &event.tid);
    } else if (is_string) {
      (pid ? event.pid_text : event.tid_text) = String(pid ? 3 : 4);
    } else {
      return wrong(pid ? "events whose \"pid\" is not a number"
                       : "events whose \"tid\" is not a number");
    }
  } else if (key == "id") {
    once(1u << 7, "id");
    const char* start = pos_;
    if (is_string)
      event.id = String(5);
    else {
      SkipValue();
      event.id = std::string_view(start, static_cast<size_t>(pos_ - start));
    }
  } else if (key == "s") {
    once(1u << 8, "s");
    if (is_string)
      event.scope = String(6);
    else
      SkipValue();
  } else if (key == "args") {
    once(1u << 9, "args");
    const char* start = pos_;
    SkipValue();
    event.args = std::string_view(start, static_cast<size_t>(pos_ - start));
  } else {
    SkipValue();
  }
}

}  // namespace hvdview
