#include "core/trace_model.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace hvdview {
namespace {

// First slice of a row whose end is after t (rows are sorted by start and by end).
std::vector<Slice>::const_iterator FirstEndingAfter(const Row& row, double t) {
  return std::partition_point(row.slices.begin(), row.slices.end(),
                              [t](const Slice& s) { return s.end() < t; });
}

std::string Lower(const std::string& text) {
  std::string out = text;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Total length of the union of [start, end) intervals.
double UnionLength(std::vector<std::pair<double, double>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  double open_start = 0;
  double open_end = -std::numeric_limits<double>::infinity();
  for (const auto& [start, end] : intervals) {
    if (start > open_end) {
      if (open_end > open_start) total += open_end - open_start;
      open_start = start;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_start) total += open_end - open_start;
  return total;
}

}  // namespace

EventView ViewOf(const Trace& trace, const SliceRef& ref) {
  const Lane& lane = trace.lanes.at(ref.lane);
  EventView view;
  if (ref.row < 0) {
    const Instant& instant = lane.instants.at(ref.index);
    view.start = instant.time;
    view.name = instant.name;
    view.category = instant.category;
    view.source = instant.source;
    return view;
  }
  const Slice& slice = lane.rows.at(static_cast<size_t>(ref.row)).slices.at(ref.index);
  view.start = slice.start;
  view.dur = slice.dur;
  view.name = slice.name;
  view.category = slice.category;
  view.source = slice.source;
  view.unfinished = (slice.flags & kSliceUnfinished) != 0;
  return view;
}

std::vector<NameStats> RangeStats(const Trace& trace, double t0, double t1) {
  if (t1 < t0) std::swap(t0, t1);
  std::vector<NameStats> by_name(trace.names.size());
  for (const Lane& lane : trace.lanes) {
    for (const Row& row : lane.rows) {
      for (auto it = FirstEndingAfter(row, t0); it != row.slices.end() && it->start <= t1; ++it) {
        NameStats& stats = by_name[it->name];
        ++stats.count;
        stats.total += it->dur;
        stats.max = std::max(stats.max, it->dur);
      }
    }
  }
  std::vector<NameStats> result;
  for (size_t i = 0; i < by_name.size(); ++i) {
    if (by_name[i].count == 0) continue;
    by_name[i].name = trace.names[i];
    result.push_back(std::move(by_name[i]));
  }
  std::sort(result.begin(), result.end(), [](const NameStats& a, const NameStats& b) {
    return a.total != b.total ? a.total > b.total : a.name < b.name;
  });
  return result;
}

std::vector<SliceRef> FindByName(const Trace& trace, const std::string& query) {
  std::vector<SliceRef> found;
  if (query.empty()) return found;
  const std::string needle = Lower(query);
  std::vector<bool> name_matches(trace.names.size());
  for (size_t i = 0; i < trace.names.size(); ++i) {
    name_matches[i] = Lower(trace.names[i]).find(needle) != std::string::npos;
  }
  for (uint32_t l = 0; l < trace.lanes.size(); ++l) {
    const Lane& lane = trace.lanes[l];
    for (size_t r = 0; r < lane.rows.size(); ++r) {
      const auto& slices = lane.rows[r].slices;
      for (uint32_t i = 0; i < slices.size(); ++i) {
        if (name_matches[slices[i].name]) found.push_back({l, static_cast<int32_t>(r), i});
      }
    }
    for (uint32_t i = 0; i < lane.instants.size(); ++i) {
      if (name_matches[lane.instants[i].name]) found.push_back({l, -1, i});
    }
  }
  std::stable_sort(found.begin(), found.end(), [&trace](const SliceRef& a, const SliceRef& b) {
    return ViewOf(trace, a).start < ViewOf(trace, b).start;
  });
  return found;
}

std::optional<double> NthOccurrence(const Trace& trace, const std::string& name, int n) {
  auto it = std::find(trace.names.begin(), trace.names.end(), name);
  if (it == trace.names.end() || n < 1) return std::nullopt;
  const uint32_t id = static_cast<uint32_t>(it - trace.names.begin());
  for (const Process& process : trace.processes) {
    std::vector<double> starts;
    for (uint32_t lane_index : process.lanes) {
      const Lane& lane = trace.lanes[lane_index];
      for (const Row& row : lane.rows) {
        for (const Slice& s : row.slices) {
          if (s.name == id) starts.push_back(s.start);
        }
      }
      for (const Instant& i : lane.instants) {
        if (i.name == id) starts.push_back(i.time);
      }
    }
    if (starts.empty()) continue;
    if (static_cast<size_t>(n) > starts.size()) return std::nullopt;
    std::nth_element(starts.begin(), starts.begin() + (n - 1), starts.end());
    return starts[static_cast<size_t>(n - 1)];
  }
  return std::nullopt;
}

std::vector<ProcessBusyTime> CollectiveTimePerProcess(const Trace& trace) {
  std::vector<ProcessBusyTime> result;
  for (const Process& process : trace.processes) {
    std::vector<std::pair<double, double>> communication;
    std::vector<std::pair<double, double>> negotiation;
    for (uint32_t lane_index : process.lanes) {
      for (const Row& row : trace.lanes[lane_index].rows) {
        for (const Slice& s : row.slices) {
          if (s.category == Category::kCommunication) communication.emplace_back(s.start, s.end());
          if (s.category == Category::kNegotiation) negotiation.emplace_back(s.start, s.end());
        }
      }
    }
    result.push_back({process.name, UnionLength(communication), UnionLength(negotiation)});
  }
  return result;
}

void SortProcesses(Trace& trace, ProcessOrder order) {
  auto by_index = [](const Process& a, const Process& b) {
    return a.sort_index != b.sort_index ? a.sort_index < b.sort_index : a.pid < b.pid;
  };
  if (order == ProcessOrder::kBySortIndex) {
    std::stable_sort(trace.processes.begin(), trace.processes.end(), by_index);
  } else if (order == ProcessOrder::kByName) {
    std::stable_sort(trace.processes.begin(), trace.processes.end(),
                     [](const Process& a, const Process& b) { return a.name < b.name; });
  } else {
    std::unordered_map<int64_t, double> busy;
    std::vector<ProcessBusyTime> times = CollectiveTimePerProcess(trace);
    for (size_t i = 0; i < times.size(); ++i) {
      busy[trace.processes[i].pid] = times[i].communication_us;
    }
    std::stable_sort(
        trace.processes.begin(), trace.processes.end(),
        [&busy](const Process& a, const Process& b) { return busy[a.pid] > busy[b.pid]; });
  }
}

}  // namespace hvdview
