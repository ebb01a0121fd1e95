#include "core/trace_parser.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/json_scan.h"
#include "core/trace_builder.h"

namespace hvdview {
namespace {

using FilePtr = std::unique_ptr<FILE, int (*)(FILE*)>;

// Reads one file in chunks and feeds its events to a TraceBuilder. The JSON scanner throws
// NeedMoreInput when a token runs past the buffer; the current unit (one event, one key) is
// then re-read after the buffer has been refilled, so no event ever straddles two chunks.
class TraceFileParser {
 public:
  TraceFileParser(const std::string& path, TraceBuilder& builder, const LoadOptions& options,
                  uint64_t bytes_before, uint64_t bytes_total)
      : path_(path),
        builder_(builder),
        options_(options),
        bytes_before_(bytes_before),
        bytes_total_(bytes_total),
        file_(nullptr, &std::fclose) {}

  // Returns false when cancelled; `error` is set when the file could not be read completely.
  bool Run(std::optional<LoadError>* error);

 private:
  enum class State {
    kStart,
    kArrayFirst,
    kArrayNext,
    kObjectFirstKey,
    kObjectNextKey,
    kTrailing,
    kDone
  };

  void Step();
  void StepArray();
  void StepObject();
  void Refill(const char* keep_from);
  std::optional<LoadError> EndOfInput(const char* mark);
  LoadError Error(uint64_t offset, const std::string& message) const {
    return {path_, offset, message};
  }

  std::string path_;
  TraceBuilder& builder_;
  const LoadOptions& options_;
  uint64_t bytes_before_;
  uint64_t bytes_total_;
  FilePtr file_;
  std::vector<char> buffer_;
  size_t length_ = 0;
  uint64_t base_offset_ = 0;  // file offset of buffer_[0]
  bool eof_ = false;
  JsonScanner scan_;
  RawEvent event_;
  State state_ = State::kStart;
  bool in_object_ = false;
  bool saw_trace_events_ = false;
  size_t events_ = 0;
};

bool TraceFileParser::Run(std::optional<LoadError>* error) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) {
    *error = Error(0, std::string("cannot open: ") + std::strerror(errno));
    return true;
  }
  buffer_.resize(options_.chunk_bytes);
  scan_.Reset(buffer_.data(), buffer_.data(), 0);
  while (state_ != State::kDone) {
    const char* mark = scan_.pos();
    try {
      Step();
    } catch (const NeedMoreInput&) {
      if (eof_) {
        *error = EndOfInput(mark);
        return true;
      }
      Refill(mark);
    } catch (const JsonSyntaxError& e) {
      *error =
          Error(e.offset, "invalid JSON at byte " + std::to_string(e.offset) + ": " + e.message +
                              "; kept the " + std::to_string(events_) + " events before it");
      return true;
    }
    if ((events_ & 0x3FFF) == 0x3FFF) {
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) return false;
      if (options_.progress) options_.progress(bytes_before_ + scan_.offset(), bytes_total_);
    }
  }
  if (events_ == 0) *error = Error(0, "contains no trace events");
  return true;
}

void TraceFileParser::Step() {
  switch (state_) {
    case State::kStart: {
      const char c = scan_.PeekAfterSpace();
      if (c == '[') {
        state_ = State::kArrayFirst;
      } else if (c == '{') {
        state_ = State::kObjectFirstKey;
        in_object_ = true;
      } else {
        throw JsonSyntaxError{scan_.offset(),
                              "not a trace: expected '[' or '{' but found " + DescribeChar(c)};
      }
      scan_.Advance();
      return;
    }
    case State::kArrayFirst:
    case State::kArrayNext:
      StepArray();
      return;
    case State::kObjectFirstKey:
    case State::kObjectNextKey:
      StepObject();
      return;
    case State::kTrailing: {
      const char c = scan_.PeekAfterSpace();
      throw JsonSyntaxError{scan_.offset(),
                            "unexpected " + DescribeChar(c) + " after the end of the trace"};
    }
    case State::kDone:
      return;
  }
}

void TraceFileParser::StepArray() {
  char c = scan_.PeekAfterSpace();
  if (c != ']' && state_ == State::kArrayNext) {
    if (c != ',') {
      throw JsonSyntaxError{scan_.offset(),
                            "expected ',' or ']' between events but found " + DescribeChar(c)};
    }
    scan_.Advance();
    c = scan_.PeekAfterSpace();
  }
  if (c == ']') {  // also accepts a trailing comma, as chrome://tracing does
    scan_.Advance();
    state_ = in_object_ ? State::kObjectNextKey : State::kTrailing;
    return;
  }
  if (c != '{') {
    throw JsonSyntaxError{scan_.offset(), "expected an event object but found " + DescribeChar(c)};
  }
  event_ = RawEvent{};
  event_.offset = scan_.offset();
  scan_.EventObject(event_);
  builder_.Add(event_);
  ++events_;
  state_ = State::kArrayNext;
}

void TraceFileParser::StepObject() {
  char c = scan_.PeekAfterSpace();
  if (c == '}') {
    scan_.Advance();
    if (!saw_trace_events_) {
      throw JsonSyntaxError{scan_.offset(), "the object has no \"traceEvents\" array"};
    }
    state_ = State::kTrailing;
    return;
  }
  if (state_ == State::kObjectNextKey) {
    if (c != ',') {
      throw JsonSyntaxError{scan_.offset(), "expected ',' or '}' but found " + DescribeChar(c)};
    }
    scan_.Advance();
    c = scan_.PeekAfterSpace();
  }
  if (c != '"') {
    throw JsonSyntaxError{scan_.offset(), "expected a key but found " + DescribeChar(c)};
  }
  const std::string key(scan_.String(7));
  scan_.ExpectAfterSpace(':');
  if (key == "traceEvents") {
    scan_.ExpectAfterSpace('[');
    saw_trace_events_ = true;
    state_ = State::kArrayFirst;
  } else {
    scan_.PeekAfterSpace();
    scan_.SkipValue();
    state_ = State::kObjectNextKey;
  }
}

void TraceFileParser::Refill(const char* keep_from) {
  const size_t keep = static_cast<size_t>(keep_from - buffer_.data());
  std::memmove(buffer_.data(), buffer_.data() + keep, length_ - keep);
  length_ -= keep;
  base_offset_ += keep;
  if (length_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // one huge value
  const size_t wanted = buffer_.size() - length_;
  const size_t got = std::fread(buffer_.data() + length_, 1, wanted, file_.get());
  length_ += got;
  if (got < wanted) eof_ = true;
  scan_.Reset(buffer_.data(), buffer_.data() + length_, base_offset_);
}

std::optional<LoadError> TraceFileParser::EndOfInput(const char* mark) {
  const char* end = buffer_.data() + length_;
  const char* unit = std::find_if(mark, end, [](char c) {
    return c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != ',';
  });
  const uint64_t mark_offset = base_offset_ + static_cast<uint64_t>(unit - buffer_.data());
  const uint64_t file_size = base_offset_ + length_;
  if (state_ == State::kStart) return Error(0, "empty file");
  if (state_ == State::kTrailing) {
    state_ = State::kDone;
    return events_ == 0 ? std::optional(Error(0, "contains no trace events")) : std::nullopt;
  }
  const bool only_space_left = unit == end;
  if (!in_object_ && only_space_left && events_ > 0) {
    return std::nullopt;  // the closing ']' is optional in the array format
  }
  std::string what = only_space_left
                         ? "the trace is not closed"
                         : "the event at byte " + std::to_string(mark_offset) + " is incomplete";
  return Error(mark_offset, "truncated at byte " + std::to_string(file_size) + ": " + what +
                                "; kept the " + std::to_string(events_) + " complete events");
}

}  // namespace

std::string LoadError::ToString() const {
  return file + ": " + message;
}

LoadResult LoadTimelines(const std::vector<std::string>& paths, const LoadOptions& options) {
  LoadResult result;
  uint64_t total = 0;
  std::vector<uint64_t> sizes;
  for (const std::string& path : paths) {
    std::error_code ec;
    sizes.push_back(std::filesystem::file_size(path, ec));
    if (ec) sizes.back() = 0;
    total += sizes.back();
  }
  TraceBuilder builder(result.trace);
  uint64_t done = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    builder.BeginFile(paths[i]);
    std::optional<LoadError> error;
    TraceFileParser parser(paths[i], builder, options, done, total);
    if (!parser.Run(&error)) {
      result.cancelled = true;
      return result;
    }
    if (error) result.errors.push_back(*error);
    done += sizes[i];
  }
  result.warnings = builder.Finish();
  if (options.progress) options.progress(total, total);
  return result;
}

std::string ReadEventJson(const Trace& trace, SourceRef source) {
  const uint32_t file = SourceFile(source);
  if (file >= trace.files.size()) return {};
  FilePtr in(std::fopen(trace.files[file].c_str(), "rb"), &std::fclose);
  if (!in || std::fseek(in.get(), static_cast<long>(SourceOffset(source)), SEEK_SET) != 0) {
    return {};
  }
  std::string text;
  char chunk[65536];
  while (text.size() < (64u << 20)) {
    const size_t got = std::fread(chunk, 1, sizeof chunk, in.get());
    text.append(chunk, got);
    JsonScanner scanner;
    scanner.Reset(text.data(), text.data() + text.size(), 0);
    try {
      scanner.SkipValue();
      text.resize(static_cast<size_t>(scanner.offset()));
      nlohmann::json event = nlohmann::json::parse(text, nullptr, false);
      return event.is_discarded() ? text : event.dump(2);
    } catch (const NeedMoreInput&) {
      if (got == 0) return {};
    } catch (const JsonSyntaxError&) {
      return {};
    }
  }
  return {};
}

}  // namespace hvdview
