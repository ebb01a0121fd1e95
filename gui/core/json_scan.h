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
  double Number();
  // Skips any value (at its first character); nested values are only bracket-matched.
  void SkipValue();
  // Reads an event object (at '{') into `event`; views stay valid until the next Reset.
  void EventObject(RawEvent& event);

 private:
  void EventField(std::string_view key, RawEvent& event);
  std::string_view DecodeEscaped(const char* start, const char* at, int slot);
  void SkipString();
  JsonSyntaxError Error(const std::string& message) const { return {offset(), message}; }

  const char* begin_ = nullptr;
  const char* pos_ = nullptr;
  const char* end_ = nullptr;
  uint64_t base_ = 0;
  std::array<std::string, 8> scratch_;
};

}  // namespace hvdview
