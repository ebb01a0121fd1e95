// A minimal JSON scanner over a byte range, for the hot path of trace parsing: no DOM,
// no allocation unless a string has escapes. Throws NeedMoreInput at the end of the range.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/trace_builder.h"

namespace hvdview {

// The range ended inside a token; refill and retry the current unit.
struct NeedMoreInput {};

struct JsonSyntaxError {
  uint64_t offset;
  std::string message;
};

// "'x'", "end of file" or "byte 0x1f", for error messages.
std::string DescribeChar(char c);

// `text` quoted for a message, cut to about 60 bytes ("'aaaa...' (20971520 bytes)").
std::string QuoteCut(std::string_view text);

// Deepest nesting of arrays and objects inside an event (or a skipped top-level value): the
// scanner is not recursive, but the JSON library that later reads "args" is, in places.
inline constexpr int kMaxJsonDepth = 512;

// Largest |ts| and |dur| accepted, in microseconds (about 31,700 years): sums and
// differences of times then stay finite and exact enough for drawing.
inline constexpr double kMaxTimeUs = 1e18;

class JsonScanner {
 public:
  void Reset(const char* pos, const char* end, uint64_t base_offset_of_begin);
  const char* pos() const { return pos_; }
  uint64_t offset() const { return base_ + static_cast<uint64_t>(pos_ - begin_); }

  // Skips whitespace and returns the next character without consuming it.
  char PeekAfterSpace();
  void Advance() { ++pos_; }
  void ExpectAfterSpace(char c);
  // Reads a string token (at '"'); escaped strings are decoded into scratch slot `slot`.
  std::string_view String(int slot);
  // Reads a number; one too large for a double is returned as +-infinity.
  double Number();
  // Reads a number used as a pid or tid: an integer within int64 is stored in `id` and an
  // empty view returned; any other number (2.5, 1e30, 99999999999999999999) is returned as
  // its text, to be used like a string id (no lossy or undefined conversion).
  std::string_view IdNumber(int64_t* id);
  // Skips any value (at its first character); nested values are only bracket-matched.
  void SkipValue();
  // Reads an event object (at '{') into `event`; views stay valid until the next Reset.
  void EventObject(RawEvent& event);

 private:
  void EventField(std::string_view key, RawEvent& event);
  std::string_view DecodeEscaped(const char* start, const char* at, int slot);
  void SkipString();
  // Notes raw control characters and invalid UTF-8 in a string's raw bytes (bad_text_).
  void CheckText(const char* begin, const char* end);
  JsonSyntaxError Error(const std::string& message) const { return {offset(), message}; }

  const char* begin_ = nullptr;
  const char* pos_ = nullptr;
  const char* end_ = nullptr;
  uint64_t base_ = 0;
  std::array<std::string, 8> scratch_;
  uint8_t bad_text_ = 0;   // kText* bits of the strings read since the event began
  uint32_t seen_keys_ = 0;  // known event fields read so far, to notice one given twice
};

}  // namespace hvdview
