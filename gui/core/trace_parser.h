// Streaming reader of Chrome Trace Event JSON (array or {"traceEvents": [...]} form).
// Reads in chunks, keeps every complete event before a truncation or syntax error.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace_model.h"

namespace hvdview {

// A problem that stopped reading a file; events before `offset` were kept.
struct LoadError {
  std::string file;
  uint64_t offset = 0;
  std::string message;
  std::string ToString() const;  // "FILE: MESSAGE"
};

struct LoadOptions {
  const std::atomic<bool>* cancel = nullptr;                    // set to stop early
  std::function<void(uint64_t done, uint64_t total)> progress;  // bytes, all files
  size_t chunk_bytes = 4 << 20;
  // The most bytes one event (or one skipped top-level value) may take: the buffer never
  // grows past about this size. A longer one stops reading that file with an error.
  size_t max_event_bytes = kMaxEventBytes;
  static constexpr size_t kMaxEventBytes = size_t{64} << 20;
};

struct LoadResult {
  Trace trace;
  // Per file at most one error that stopped reading it, one for names cut to
  // kMaxNameBytes (that file was read to its end), and one per earlier file it shares pids
  // with (TraceBuilder::SharedPidErrors; the events are drawn, stacked into those ranks).
  std::vector<LoadError> errors;
  std::vector<std::string> warnings;  // skipped or repaired events, one line per kind
  bool cancelled = false;
};

// Reads one or several timeline files into one Trace (e.g. one file per MPI rank).
LoadResult LoadTimelines(const std::vector<std::string>& paths, const LoadOptions& options = {});

// Reads a timeline held in memory (`name` stands for the file in messages); for the fuzzer.
LoadResult LoadTimelineBytes(std::string_view bytes, const std::string& name,
                             const LoadOptions& options = {});

// The JSON text of the event a slice came from, pretty-printed; empty when unreadable.
std::string ReadEventJson(const Trace& trace, SourceRef source);

}  // namespace hvdview
