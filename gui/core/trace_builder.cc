#include "core/trace_builder.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <nlohmann/json.hpp>

namespace hvdview {
namespace {

constexpr int64_t kAsyncTid = std::numeric_limits<int64_t>::max();
constexpr int64_t kCounterTidBase = std::numeric_limits<int64_t>::max() - 1;
constexpr int64_t kTextIdBase = int64_t{1} << 50;

std::string PidLabel(int64_t pid) {
  return "pid " + std::to_string(pid);
}

}  // namespace

std::string_view CutUtf8(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

size_t Utf8SequenceLength(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&text](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return length;
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string RepairText(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = Utf8SequenceLength(text.substr(i));
    if (length == 0 || static_cast<unsigned char>(text[i]) < 0x20) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

void TraceBuilder::BeginFile(const std::string& path) {
  file_index_ = static_cast<uint32_t>(trace_.files.size());
  trace_.files.push_back(path);
  has_last_lane_ = false;
}

uint32_t TraceBuilder::Intern(std::string_view name) {
  auto it = name_ids_.find(std::string(name));
  if (it != name_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(trace_.names.size());
  trace_.names.emplace_back(name);
  name_category_.push_back(-1);
  name_ids_.emplace(std::string(name), id);
  return id;
}

Category TraceBuilder::CategoryOf(std::string_view cat, uint32_t name) {
  if (!cat.empty()) {
    bool known = false;
    const Category category = CategoryFromCat(cat, &known);
    if (known) return category;
  }
  if (name_category_[name] < 0) {
    name_category_[name] = static_cast<int8_t>(CategoryFromName(trace_.names[name]));
  }
  return static_cast<Category>(name_category_[name]);
}

int64_t TraceBuilder::IdOfText(std::string_view text) {
  auto [it, inserted] = text_ids_.emplace(std::string(text), 0);
  if (inserted) {
    it->second = kTextIdBase + static_cast<int64_t>(text_ids_.size());
    id_texts_.emplace_back(text);
  }
  return it->second;
}

std::string TraceBuilder::ThreadLabel(int64_t tid) const {
  // A tid given as a string (or as a number beyond int64): its text. Compared before
  // subtracting, as tid may be any int64.
  if (tid > kTextIdBase && tid - kTextIdBase <= static_cast<int64_t>(id_texts_.size())) {
    return "tid " + id_texts_[static_cast<size_t>(tid - kTextIdBase - 1)];
  }
  return "tid " + std::to_string(tid);
}

Process& TraceBuilder::ProcessFor(int64_t pid) {
  auto [it, inserted] = process_ids_.emplace(pid, trace_.processes.size());
  if (inserted) {
    Process process;
    process.pid = pid;
    process.name = PidLabel(pid);
    process.sort_index = 0;
    trace_.processes.push_back(process);
    process_file_.push_back(file_index_);
  } else if (process_file_[it->second] != file_index_) {
    // The pid (rank) of an earlier file: files of different runs would be stacked into one
    // rank. Noted once per pid and file (the process then counts as this file's).
    SharedPid& shared = shared_pids_[{file_index_, process_file_[it->second]}];
    if (shared.count++ == 0) {
      shared.pid = pid;
      shared.offset = event_offset_;
    }
    process_file_[it->second] = file_index_;
  }
  return trace_.processes[it->second];
}

uint32_t TraceBuilder::LaneFor(int64_t pid, int64_t tid, LaneKind kind) {
  if (has_last_lane_ && last_pid_ == pid && last_tid_ == tid) return last_lane_;
  auto [it, inserted] = lane_ids_.emplace(std::make_pair(pid, tid), 0);
  if (!inserted && lane_file_[it->second] != file_index_) {
    lane_file_[it->second] = file_index_;
    ProcessFor(pid);  // a lane of an earlier file: is its pid shared between files?
  }
  if (inserted) {
    ProcessFor(pid);
    lane_file_.push_back(file_index_);
    it->second = static_cast<uint32_t>(trace_.lanes.size());
    Lane lane;
    lane.pid = pid;
    lane.tid = tid;
    lane.kind = kind;
    lane.sort_index =
        tid >= kTextIdBase ? 0 : static_cast<int>(std::clamp<int64_t>(tid, -1 << 30, 1 << 30));
    lane.name = kind == LaneKind::kAsync ? "async" : ThreadLabel(tid);
    if (kind == LaneKind::kAsync) lane.sort_index = 1 << 30;
    trace_.lanes.push_back(std::move(lane));
    pending_.emplace_back();
  }
  last_pid_ = pid;
  last_tid_ = tid;
  last_lane_ = it->second;
  has_last_lane_ = true;
  return it->second;
}

void TraceBuilder::Note(const std::string& problem, uint64_t offset) {
  Problem& entry = problems_[problem];
  if (entry.count++ == 0) {
    entry.file = trace_.files.empty() ? "" : trace_.files[file_index_];
    entry.first_offset = offset;
  }
}

void TraceBuilder::Add(const RawEvent& event) {
  if (event.bad_text == 0 || event.type_error) {
    if (AddRepaired(event)) NoteRepairs(event);
    return;
  }
  RawEvent repaired = event;
  std::string_view* fields[] = {&repaired.name,     &repaired.cat,      &repaired.id,
                                &repaired.scope,    &repaired.pid_text, &repaired.tid_text};
  std::string texts[std::size(fields)];
  for (size_t i = 0; i < std::size(fields); ++i) {
    texts[i] = RepairText(*fields[i]);
    *fields[i] = texts[i];
  }
  if (AddRepaired(repaired)) NoteRepairs(repaired);
}

// Events that were kept (or metadata that was applied) with something repaired: one line
// per kind, like skipped events.
void TraceBuilder::NoteRepairs(const RawEvent& event) {
  if (!event.has_pid) Note("repaired events: no \"pid\" (put in pid 0)", event.offset);
  if (event.bad_text & kTextInvalidUtf8) {
    Note("repaired events: invalid UTF-8 in a string (replaced by U+FFFD)", event.offset);
  }
  if (event.bad_text & kTextControlChar) {
    Note("repaired events: a raw control character in a string, which JSON allows only "
         "escaped (replaced by U+FFFD)",
         event.offset);
  }
  if (event.repeated_key) {
    Note(std::string("repaired events: the key \"") + event.repeated_key +
             "\" twice (the last value is used)",
         event.offset);
  }
}

bool TraceBuilder::AddRepaired(const RawEvent& event) {
  event_offset_ = event.offset;
  if (event.type_error) {
    Note(std::string("skipped events: ") + event.type_error, event.offset);
    return false;
  }
  const int64_t pid = event.pid_text.empty() ? event.pid : IdOfText(event.pid_text);
  const int64_t tid = event.tid_text.empty() ? event.tid : IdOfText(event.tid_text);
  if (!event.pid_text.empty()) {
    Process& process = ProcessFor(pid);
    if (process.name == PidLabel(pid)) process.name = std::string(event.pid_text);
  }
  if (event.ph != 'M') {
    if (!event.has_ts) {
      Note(std::string("skipped events without \"ts\" (phase '") + event.ph + "')", event.offset);
      return false;
    }
    min_time_ = std::min(min_time_, event.ts);
    max_time_ = std::max(max_time_, event.ts + (event.has_dur ? event.dur : 0));
  }
  bool kept = true;
  switch (event.ph) {
    case 'X':
    case 'B':
    case 'E':
      kept = AddDuration(event, pid, tid);
      break;
    case 'i':
    case 'I':
    case 'n':
    case 'R': {
      Lane& lane = trace_.lanes[LaneFor(pid, event.ph == 'n' ? kAsyncTid : tid,
                                        event.ph == 'n' ? LaneKind::kAsync : LaneKind::kThread)];
      const uint32_t name = Intern(event.name);
      lane.instants.push_back(
          {event.ts, MakeSourceRef(file_index_, event.offset), name, CategoryOf(event.cat, name)});
      ++trace_.instant_count;
      break;
    }
    case 'b':
    case 'e':
    case 'S':
    case 'F':
      kept = AddAsync(event, pid);
      break;
    case 'M':
      AddMetadata(event, pid, tid);
      return true;  // applied, but not counted as an event
    case 'C':
      kept = AddCounter(event, pid);
      break;
    default:
      Note(std::string("skipped events of unsupported phase '") + event.ph + "'", event.offset);
      kept = false;
  }
  if (kept) ++trace_.events_kept;
  return kept;
}

bool TraceBuilder::AddDuration(const RawEvent& event, int64_t pid, int64_t tid) {
  const uint32_t lane_index = LaneFor(pid, tid, LaneKind::kThread);
  PendingLane& pending = pending_[lane_index];
  const SourceRef source = MakeSourceRef(file_index_, event.offset);
  if (event.ph == 'X') {
    const uint32_t name = Intern(event.name);
    if (!event.has_dur || event.dur < 0) {
      Note("'X' events without a valid \"dur\" shown as 0-length", event.offset);
    }
    const double dur = event.has_dur && event.dur > 0 ? event.dur : 0;
    pending.slices.push_back({event.ts, dur, source, name, CategoryOf(event.cat, name), 0});
  } else if (event.ph == 'B') {
    const uint32_t name = Intern(event.name);
    pending.open.push_back({event.ts, name, CategoryOf(event.cat, name), source});
  } else if (pending.open.empty()) {
    Note("ignored 'E' events without a matching 'B'", event.offset);
    return false;
  } else {
    const OpenSlice open = pending.open.back();
    pending.open.pop_back();
    const double dur = std::max(0.0, event.ts - open.start);
    pending.slices.push_back({open.start, dur, open.source, open.name, open.category, 0});
  }
  return true;
}

bool TraceBuilder::AddAsync(const RawEvent& event, int64_t pid) {
  const uint32_t lane_index = LaneFor(pid, kAsyncTid, LaneKind::kAsync);
  std::string key = std::to_string(pid);
  key.append("/").append(event.cat).append("/").append(event.id);
  const uint32_t name = Intern(event.name);
  auto& stack = open_async_[key];
  if (event.ph == 'b' || event.ph == 'S') {
    stack.push_back(
        {lane_index,
         {event.ts, name, CategoryOf(event.cat, name), MakeSourceRef(file_index_, event.offset)}});
    return true;
  }
  if (stack.empty()) {
    Note("ignored async 'e' events without a matching 'b'", event.offset);
    return false;
  }
  auto match = std::find_if(stack.rbegin(), stack.rend(),
                            [name](const auto& entry) { return entry.second.name == name; });
  auto chosen = match == stack.rend() ? stack.end() - 1 : std::prev(match.base());
  const OpenSlice open = chosen->second;
  stack.erase(chosen);
  pending_[lane_index].slices.push_back(
      {open.start, std::max(0.0, event.ts - open.start), open.source, open.name, open.category, 0});
  return true;
}

void TraceBuilder::AddMetadata(const RawEvent& event, int64_t pid, int64_t tid) {
  nlohmann::json args = nlohmann::json::parse(event.args, nullptr, false);
  if (!args.is_object()) {
    Note("ignored metadata events without an \"args\" object", event.offset);
    return;
  }
  // A name cut to kMaxNameBytes; a sort index clamped to +-2^30 (a double out of int's range
  // must not be converted as is).
  auto name = [&] {
    const std::string& text = args["name"].get_ref<const std::string&>();
    if (text.size() > kMaxNameBytes) Note("metadata names cut to 4096 bytes", event.offset);
    return std::string(CutUtf8(text, kMaxNameBytes));
  };
  auto sort_index = [&] {
    const double value = args["sort_index"].get<double>();
    return static_cast<int>(std::clamp(value, -1073741824.0, 1073741824.0));
  };
  if (event.name == "process_name" && args.contains("name") && args["name"].is_string()) {
    ProcessFor(pid).name = name();
  } else if (event.name == "process_sort_index" && args.contains("sort_index") &&
             args["sort_index"].is_number()) {
    ProcessFor(pid).sort_index = sort_index();
  } else if (event.name == "thread_name" && args.contains("name") && args["name"].is_string()) {
    trace_.lanes[LaneFor(pid, tid, LaneKind::kThread)].name = name();
  } else if (event.name == "thread_sort_index" && args.contains("sort_index") &&
             args["sort_index"].is_number()) {
    trace_.lanes[LaneFor(pid, tid, LaneKind::kThread)].sort_index = sort_index();
  }
}

bool TraceBuilder::AddCounter(const RawEvent& event, int64_t pid) {
  nlohmann::json args = nlohmann::json::parse(event.args, nullptr, false);
  if (!args.is_object()) {
    Note("ignored counter events without an \"args\" object", event.offset);
    return false;
  }
  for (const auto& [key, value] : args.items()) {
    if (!value.is_number()) continue;
    std::string series(event.name);
    if (args.size() > 1 || key != "value") series += "." + key;
    if (series.size() > kMaxNameBytes) series = std::string(CutUtf8(series, kMaxNameBytes));
    auto [it, inserted] = counter_lanes_.emplace(std::make_pair(pid, series), 0);
    if (inserted) {
      const int64_t tid = kCounterTidBase - static_cast<int64_t>(counter_lanes_.size());
      it->second = LaneFor(pid, tid, LaneKind::kCounter);
      trace_.lanes[it->second].name = series;
      trace_.lanes[it->second].sort_index = (1 << 30) - 1;
    }
    Lane& lane = trace_.lanes[it->second];
    lane.counter.push_back({event.ts, value.get<double>()});
    lane.counter_max = std::max(lane.counter_max, value.get<double>());
    ++trace_.counter_count;
  }
  return true;
}

void TraceBuilder::CloseOpenSlices() {
  size_t unfinished = 0;
  uint64_t first_offset = 0;
  auto close = [&](uint32_t lane_index, const OpenSlice& open) {
    if (unfinished++ == 0) first_offset = SourceOffset(open.source);
    pending_[lane_index].slices.push_back({open.start, std::max(0.0, max_time_ - open.start),
                                           open.source, open.name, open.category,
                                           kSliceUnfinished});
  };
  for (uint32_t lane = 0; lane < pending_.size(); ++lane) {
    for (const OpenSlice& open : pending_[lane].open) close(lane, open);
    pending_[lane].open.clear();
  }
  for (auto& [key, stack] : open_async_) {
    for (const auto& [lane, open] : stack) close(lane, open);
  }
  open_async_.clear();
  if (unfinished > 0) {
    Problem& entry = problems_
        ["unfinished slices ('B' without 'E' or 'b' without 'e') "
         "drawn to the end of the trace"];
    entry.count += unfinished;
    entry.first_offset = first_offset;
    entry.file = trace_.files.empty() ? "" : trace_.files.back();
  }
}

// Sorts by start (longer first on ties so parents precede children) and puts each slice on
// the first row that is free at its start: nested slices land one row below their parent,
// overlapping slices that do not nest get a row of their own instead of being dropped.
// Starts only grow, so a row once free at a start stays free for the later ones: rows move
// from a min-heap of busy rows (by end time) to a min-heap of free rows (by index) as the
// starts pass their ends, O(n log n) (scanning every row for each slice was quadratic on a
// staircase of slices that overlap without nesting).
void TraceBuilder::LayOutRows(Lane& lane, std::vector<Slice>& slices) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return a.start != b.start ? a.start < b.start : a.dur > b.dur;
  });
  using RowEnd = std::pair<double, size_t>;  // end time, row
  std::priority_queue<RowEnd, std::vector<RowEnd>, std::greater<RowEnd>> busy;
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> free_rows;
  for (const Slice& slice : slices) {
    while (!busy.empty() && busy.top().first <= slice.start) {
      free_rows.push(busy.top().second);
      busy.pop();
    }
    size_t row = lane.rows.size();
    if (free_rows.empty()) {
      lane.rows.emplace_back();
    } else {
      row = free_rows.top();
      free_rows.pop();
    }
    busy.push({slice.end(), row});
    lane.rows[row].slices.push_back(slice);
  }
  trace_.slice_count += slices.size();
  std::vector<Slice>().swap(slices);
}

void TraceBuilder::FinishProcesses() {
  for (Process& process : trace_.processes) process.lanes.clear();
  for (uint32_t i = 0; i < trace_.lanes.size(); ++i) {
    const Lane& lane = trace_.lanes[i];
    if (lane.rows.empty() && lane.instants.empty() && lane.counter.empty()) continue;
    trace_.processes[process_ids_[lane.pid]].lanes.push_back(i);
  }
  for (Process& process : trace_.processes) {
    std::stable_sort(process.lanes.begin(), process.lanes.end(), [this](uint32_t a, uint32_t b) {
      const Lane& x = trace_.lanes[a];
      const Lane& y = trace_.lanes[b];
      return x.sort_index != y.sort_index ? x.sort_index < y.sort_index : x.tid < y.tid;
    });
  }
  std::erase_if(trace_.processes, [](const Process& p) { return p.lanes.empty(); });
  SortProcesses(trace_, ProcessOrder::kBySortIndex);
}

std::vector<TraceBuilder::SharedPidError> TraceBuilder::SharedPidErrors() const {
  std::vector<SharedPidError> errors;
  for (const auto& [files, shared] : shared_pids_) {
    const auto& [file, earlier] = files;
    std::string message = "pid " + ProcessLabel(shared.pid) + " is also in " + trace_.files[earlier];
    if (shared.count > 1) message += " (and " + std::to_string(shared.count - 1) + " more pids)";
    message += ": runs of different jobs would be stacked into one rank; open the files of one run "
               "together, or two runs with --compare (File > Open for compare B)";
    errors.push_back({trace_.files[file], shared.offset, std::move(message)});
  }
  return errors;
}

std::string TraceBuilder::ProcessLabel(int64_t pid) const {
  if (pid > kTextIdBase && pid - kTextIdBase <= static_cast<int64_t>(id_texts_.size())) {
    return "'" + id_texts_[static_cast<size_t>(pid - kTextIdBase - 1)] + "'";
  }
  return std::to_string(pid);
}

std::vector<std::string> TraceBuilder::Finish() {
  CloseOpenSlices();
  for (uint32_t i = 0; i < trace_.lanes.size(); ++i) {
    LayOutRows(trace_.lanes[i], pending_[i].slices);
    Lane& lane = trace_.lanes[i];
    std::stable_sort(lane.instants.begin(), lane.instants.end(),
                     [](const Instant& a, const Instant& b) { return a.time < b.time; });
    std::stable_sort(lane.counter.begin(), lane.counter.end(),
                     [](const CounterPoint& a, const CounterPoint& b) { return a.time < b.time; });
  }
  pending_.clear();
  FinishProcesses();
  trace_.min_time = std::isfinite(min_time_) ? min_time_ : 0;
  trace_.max_time = std::isfinite(max_time_) ? max_time_ : 0;
  std::vector<std::string> warnings;
  for (const auto& [problem, entry] : problems_) {
    warnings.push_back(entry.file + ": " + std::to_string(entry.count) + " " + problem +
                       " (first at byte " + std::to_string(entry.first_offset) + ")");
  }
  return warnings;
}

}  // namespace hvdview
