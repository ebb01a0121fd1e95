// In-memory timeline: processes (ranks or tensors), their lanes, and slices sorted per row.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/category.h"

namespace hvdview {

// Where an event came from: file index (high 16 bits) and byte offset of its object.
using SourceRef = uint64_t;
inline SourceRef MakeSourceRef(uint32_t file, uint64_t offset) {
  return (static_cast<uint64_t>(file) << 48) | (offset & ((uint64_t{1} << 48) - 1));
}
inline uint32_t SourceFile(SourceRef ref) {
  return static_cast<uint32_t>(ref >> 48);
}
inline uint64_t SourceOffset(SourceRef ref) {
  return ref & ((uint64_t{1} << 48) - 1);
}

// One duration event (X, B/E pair or b/e async pair). Times in microseconds.
struct Slice {
  double start = 0;
  double dur = 0;
  SourceRef source = 0;
  uint32_t name = 0;  // index into Trace::names
  Category category = Category::kOther;
  uint8_t flags = 0;  // kSliceUnfinished when the end was never recorded
  double end() const { return start + dur; }
};
inline constexpr uint8_t kSliceUnfinished = 1;

// One instant event (i/I/n).
struct Instant {
  double time = 0;
  SourceRef source = 0;
  uint32_t name = 0;
  Category category = Category::kOther;
};

// One sample of a counter (C).
struct CounterPoint {
  double time = 0;
  double value = 0;
};

// A sub-row of a lane: slices that do not overlap, sorted by start (so also by end).
struct Row {
  std::vector<Slice> slices;
};

enum class LaneKind : uint8_t { kThread, kAsync, kCounter };

// One lane: a (pid, tid) thread, the async events of a pid, or one counter series.
struct Lane {
  int64_t pid = 0;
  int64_t tid = 0;
  LaneKind kind = LaneKind::kThread;
  std::string name;
  int sort_index = 0;
  std::vector<Row> rows;  // depth 0 first
  std::vector<Instant> instants;
  std::vector<CounterPoint> counter;
  double counter_max = 0;
};

// One process: a rank in our files, a tensor in Horovod's.
struct Process {
  int64_t pid = 0;
  std::string name;
  int sort_index = 0;
  std::vector<uint32_t> lanes;  // indexes into Trace::lanes, display order
};

// The whole loaded timeline (one or several files merged).
struct Trace {
  std::vector<std::string> files;
  std::vector<std::string> names;  // interned activity names
  std::vector<Process> processes;  // display order (sort index, then pid)
  std::vector<Lane> lanes;
  double min_time = 0;
  double max_time = 0;
  size_t slice_count = 0;
  size_t instant_count = 0;
  size_t counter_count = 0;
  // Trace events read and kept, the count shown in headers and in "kept the N complete
  // events": metadata ('M') records and skipped events are not counted; a 'B'/'E' pair is 2.
  size_t events_kept = 0;
  size_t event_count() const { return slice_count + instant_count + counter_count; }
  bool empty() const { return event_count() == 0; }
};

// Identifies one slice (row >= 0) or one instant (row == -1) of a lane.
struct SliceRef {
  uint32_t lane = 0;
  int32_t row = 0;
  uint32_t index = 0;
  bool operator==(const SliceRef&) const = default;
};

// Time and name of the slice or instant a SliceRef designates.
struct EventView {
  double start = 0;
  double dur = 0;
  uint32_t name = 0;
  Category category = Category::kOther;
  SourceRef source = 0;
  bool unfinished = false;
};
EventView ViewOf(const Trace& trace, const SliceRef& ref);

// Statistics of one activity name over a time range.
struct NameStats {
  std::string name;
  size_t count = 0;
  double total = 0;
  double max = 0;
  double mean() const { return count ? total / static_cast<double>(count) : 0; }
};

// Per-name statistics of the slices that intersect [t0, t1]; sorted by total, descending.
std::vector<NameStats> RangeStats(const Trace& trace, double t0, double t1);

// Slices and instants whose name contains `query` (case-insensitive), sorted by start.
std::vector<SliceRef> FindByName(const Trace& trace, const std::string& query);

// Start time of the n-th (1-based) occurrence of an event named exactly `name`, counted in the
// first process (display order) that has one. nullopt when there are fewer than n.
std::optional<double> NthOccurrence(const Trace& trace, const std::string& name, int n);

// Per-process time inside collectives and in negotiation (union of intervals, microseconds).
struct ProcessBusyTime {
  std::string process;
  double communication_us = 0;
  double negotiation_us = 0;
};
std::vector<ProcessBusyTime> CollectiveTimePerProcess(const Trace& trace);

// Orders processes: by sort index and pid, by name, or by time in collectives (most first).
enum class ProcessOrder { kBySortIndex, kByName, kByCollectiveTime };
void SortProcesses(Trace& trace, ProcessOrder order);

}  // namespace hvdview
