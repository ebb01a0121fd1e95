// libFuzzer target over the timeline parser (LoadTimelineBytes) and what the views compute
// from a trace. The input size picks the chunk size and the event size limit, so that the
// refill paths (a token cut by a chunk end, an event growing the buffer, an event over the
// limit) are reached with small inputs too, while every input is parsed whole (the seeds in
// tests/gui/corpus are plain timeline files). Build: cmake -DHVD_FUZZ=ON with clang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/trace_model.h"
#include "core/trace_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hvdview::LoadOptions options;
  options.chunk_bytes = 16 + (size % 64) * 7;
  options.max_event_bytes = (size / 64) % 4 == 0 ? 4096 : size_t{1} << 20;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  hvdview::LoadResult result = hvdview::LoadTimelineBytes(bytes, "fuzz.json", options);
  for (const hvdview::LoadError& error : result.errors) {
    if (error.message.empty() || error.message.size() > 400) __builtin_trap();  // one short line
  }
  hvdview::Trace& trace = result.trace;
  if (trace.empty()) return 0;
  // What the statistics table, the search box and the charts ask of a loaded trace.
  hvdview::RangeStats(trace, trace.min_time, trace.max_time);
  hvdview::FindByName(trace, "a");
  hvdview::NthOccurrence(trace, trace.names.empty() ? "" : trace.names.front(), 1);
  hvdview::CollectiveTimePerProcess(trace);
  hvdview::SortProcesses(trace, hvdview::ProcessOrder::kByName);
  hvdview::SortProcesses(trace, hvdview::ProcessOrder::kByCollectiveTime);
  return 0;
}
