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

// Fills a buffer with the next bytes of the input; returns how many (0 at its end).
using ReadFn = std::function<size_t(char* into, size_t wanted)>;

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
        bytes_total_(bytes_total) {}

  // Returns false when cancelled; appends to `errors` when the input could not be read
  // completely, or had names cut to kMaxNameBytes.
  bool Run(const ReadFn& read, std::vector<LoadError>* errors);

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
  bool Refill(const char* keep_from);
  std::optional<LoadError> EndOfInput(const char* mark);
  uint64_t UnitOffset(const char* mark) const;
  void CutLongStrings();
  std::optional<LoadError> CutNamesError() const;
  LoadError Error(uint64_t offset, const std::string& message) const {
    return {path_, offset, message};
  }
  // "kept the N complete events ...": of this file, counted like Trace::events_kept.
  std::string Kept(const char* what) const {
    return "kept the " + std::to_string(builder_.events_kept() - kept_before_) + " " + what +
           " (metadata records and skipped events not counted)";
  }

  std::string path_;
  TraceBuilder& builder_;
  const LoadOptions& options_;
  uint64_t bytes_before_;
  uint64_t bytes_total_;
  const ReadFn* read_ = nullptr;
  std::vector<char> buffer_;
  size_t length_ = 0;
  uint64_t base_offset_ = 0;  // file offset of buffer_[0]
  bool eof_ = false;
  JsonScanner scan_;
  RawEvent event_;
  State state_ = State::kStart;
  bool in_object_ = false;
  bool saw_trace_events_ = false;
  size_t events_ = 0;       // event objects read, of any phase
  size_t kept_before_ = 0;  // builder_.events_kept() when this file began
  // Strings cut to kMaxNameBytes: how many, and the first one (event, field, original).
  size_t cut_strings_ = 0;
  size_t first_cut_event_ = 0;
  uint64_t first_cut_offset_ = 0;
  std::string first_cut_field_;
  std::string first_cut_value_;  // QuoteCut of the original
};

bool TraceFileParser::Run(const ReadFn& read, std::vector<LoadError>* errors) {
  read_ = &read;
  kept_before_ = builder_.events_kept();
  buffer_.resize(std::max<size_t>(options_.chunk_bytes, 16));
  scan_.Reset(buffer_.data(), buffer_.data(), 0);
  std::optional<LoadError> error;
  while (state_ != State::kDone && !error) {
    const char* mark = scan_.pos();
    try {
      Step();
    } catch (const NeedMoreInput&) {
      if (eof_) {
        error = EndOfInput(mark);
        break;
      }
      if (!Refill(mark)) {
        const uint64_t at = UnitOffset(scan_.pos());
        const bool event = state_ == State::kArrayFirst || state_ == State::kArrayNext;
        error = Error(at, std::string(event ? "the event" : "the value") + " at byte " +
                              std::to_string(at) + " is longer than " +
                              std::to_string(options_.max_event_bytes >> 20) +
                              " MiB, the most one event may take; " +
                              Kept("events before it"));
      }
    } catch (const JsonSyntaxError& e) {
      error =
          Error(e.offset, "invalid JSON at byte " + std::to_string(e.offset) + ": " + e.message +
                              "; " + Kept("events before it"));
    }
    if ((events_ & 0x3FFF) == 0x3FFF) {
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) return false;
      if (options_.progress) options_.progress(bytes_before_ + scan_.offset(), bytes_total_);
    }
  }
  if (!error && events_ == 0) error = Error(0, "contains no trace events");
  if (error) errors->push_back(*error);
  if (auto cut = CutNamesError()) errors->push_back(*cut);
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
  CutLongStrings();
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

// Returns false when the unit being read already fills max_event_bytes.
bool TraceFileParser::Refill(const char* keep_from) {
  const size_t keep = static_cast<size_t>(keep_from - buffer_.data());
  std::memmove(buffer_.data(), buffer_.data() + keep, length_ - keep);
  length_ -= keep;
  base_offset_ += keep;
  scan_.Reset(buffer_.data(), buffer_.data() + length_, base_offset_);
  if (length_ == buffer_.size()) {  // one huge value: grow, up to the limit
    if (buffer_.size() >= options_.max_event_bytes) return false;
    buffer_.resize(std::min(buffer_.size() * 2, std::max(options_.max_event_bytes, length_)));
  }
  size_t got = 0;
  const size_t wanted = buffer_.size() - length_;
  while (got < wanted) {
    const size_t now = (*read_)(buffer_.data() + length_ + got, wanted - got);
    if (now == 0) break;
    got += now;
  }
  length_ += got;
  if (got < wanted) eof_ = true;
  scan_.Reset(buffer_.data(), buffer_.data() + length_, base_offset_);
  return true;
}

// Cuts the event's strings to kMaxNameBytes (a label of megabytes helps nobody and costs
// memory in every copy); the first one is reported once per file, with a count.
void TraceFileParser::CutLongStrings() {
  const std::pair<const char*, std::string_view*> fields[] = {
      {"name", &event_.name},         {"cat", &event_.cat},     {"id", &event_.id},
      {"pid", &event_.pid_text},      {"tid", &event_.tid_text}, {"s", &event_.scope}};
  for (const auto& [field, text] : fields) {
    if (text->size() <= kMaxNameBytes) continue;
    if (cut_strings_++ == 0) {
      first_cut_event_ = events_;
      first_cut_offset_ = event_.offset;
      first_cut_field_ = field;
      first_cut_value_ = QuoteCut(*text);
    }
    *text = CutUtf8(*text, kMaxNameBytes);
  }
}

std::optional<LoadError> TraceFileParser::CutNamesError() const {
  if (cut_strings_ == 0) return std::nullopt;
  std::string message = "event " + std::to_string(first_cut_event_) + " (byte " +
                        std::to_string(first_cut_offset_) + "): \"" + first_cut_field_ +
                        "\" is " + first_cut_value_ + ", expected at most " +
                        std::to_string(kMaxNameBytes) + " bytes; cut to " +
                        std::to_string(kMaxNameBytes);
  if (cut_strings_ > 1) message += " (" + std::to_string(cut_strings_) + " strings cut in all)";
  return Error(first_cut_offset_, message);
}

// File offset of the unit that starts at `mark`, past the separators before it.
uint64_t TraceFileParser::UnitOffset(const char* mark) const {
  const char* end = buffer_.data() + length_;
  const char* unit = std::find_if(mark, end, [](char c) {
    return c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != ',';
  });
  return base_offset_ + static_cast<uint64_t>(unit - buffer_.data());
}

std::optional<LoadError> TraceFileParser::EndOfInput(const char* mark) {
  const char* end = buffer_.data() + length_;
  const uint64_t mark_offset = UnitOffset(mark);
  const char* unit = buffer_.data() + (mark_offset - base_offset_);
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
                                "; " + Kept("complete events"));
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
    std::error_code ec;
    if (std::filesystem::is_directory(paths[i], ec)) {
      result.errors.push_back({paths[i], 0, "is a directory, expected a timeline file"});
      continue;
    }
    if (std::filesystem::exists(paths[i], ec) && !std::filesystem::is_regular_file(paths[i], ec)) {
      result.errors.push_back({paths[i], 0, "is not a regular file (a FIFO or a device), expected a timeline file"});
      continue;
    }
    FilePtr file(std::fopen(paths[i].c_str(), "rb"), &std::fclose);
    if (!file) {
      result.errors.push_back({paths[i], 0, std::string("cannot open: ") + std::strerror(errno)});
      continue;
    }
    const ReadFn read = [&file](char* into, size_t wanted) {
      return std::fread(into, 1, wanted, file.get());
    };
    TraceFileParser parser(paths[i], builder, options, done, total);
    if (!parser.Run(read, &result.errors)) {
      result.cancelled = true;
      return result;
    }
    done += sizes[i];
  }
  result.warnings = builder.Finish();
  for (auto& shared : builder.SharedPidErrors()) {
    result.errors.push_back({std::move(shared.file), shared.offset, std::move(shared.message)});
  }
  if (options.progress) options.progress(total, total);
  return result;
}

LoadResult LoadTimelineBytes(std::string_view bytes, const std::string& name,
                             const LoadOptions& options) {
  LoadResult result;
  TraceBuilder builder(result.trace);
  builder.BeginFile(name);
  size_t at = 0;
  const ReadFn read = [&](char* into, size_t wanted) {
    const size_t now = std::min(wanted, bytes.size() - at);
    std::memcpy(into, bytes.data() + at, now);
    at += now;
    return now;
  };
  TraceFileParser parser(name, builder, options, 0, bytes.size());
  if (!parser.Run(read, &result.errors)) {
    result.cancelled = true;
    return result;
  }
  result.warnings = builder.Finish();
  if (options.progress) options.progress(bytes.size(), bytes.size());
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
