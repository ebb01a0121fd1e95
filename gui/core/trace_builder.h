// Turns raw trace events (as parsed, in file order) into a Trace: matches B/E and b/e,
// applies metadata, interns names and lays slices out on non-overlapping rows.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/trace_model.h"

namespace hvdview {

// Longest name kept (event, category, string pid/tid, metadata names): longer ones are cut
// at parse time so that a hostile file cannot make every label megabytes long.
inline constexpr size_t kMaxNameBytes = 4096;

// `text` cut to at most `limit` bytes, backing up to the start of a UTF-8 sequence.
std::string_view CutUtf8(std::string_view text, size_t limit);

// Bytes of the valid UTF-8 sequence `text` starts with (1 to 4); 0 when it is not one
// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
size_t Utf8SequenceLength(std::string_view text);
bool IsValidUtf8(std::string_view text);

// RawEvent::bad_text bits: what was wrong in a string of the event (a key, a value, args).
inline constexpr uint8_t kTextInvalidUtf8 = 1;
inline constexpr uint8_t kTextControlChar = 2;  // a raw byte below 0x20, JSON needs it escaped

// `text` with invalid UTF-8 sequences and raw control characters replaced by U+FFFD.
std::string RepairText(std::string_view text);

// One event as read from a file. Views point into the parser's buffer.
struct RawEvent {
  char ph = 0;
  std::string_view name;
  std::string_view cat;
  std::string_view id;        // async id as text
  std::string_view scope;     // "s" of instants
  std::string_view pid_text;  // set when pid was a string
  std::string_view tid_text;
  std::string_view args;  // raw JSON text of "args", empty when absent
  double ts = 0;
  double dur = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  bool has_ts = false;
  bool has_dur = false;
  bool has_pid = false;                // without one the event goes to pid 0, with a note
  uint8_t bad_text = 0;                // kText* bits: strings repaired, with a note
  const char* repeated_key = nullptr;  // a field given twice ("dur"): the last value is used
  const char* type_error = nullptr;    // "ts must be a number", ... : the event is skipped
  uint64_t offset = 0;               // byte offset of the event object in its file
};

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace& trace) : trace_(trace) {}
  // Starts a new input file; later events refer to it.
  void BeginFile(const std::string& path);
  // Adds one event; bad strings are repaired first (RepairText), and repairs noted.
  void Add(const RawEvent& event);
  // Trace::events_kept so far (all files).
  size_t events_kept() const { return trace_.events_kept; }
  // Closes unfinished slices, sorts and lays out rows. Returns one warning line per problem.
  std::vector<std::string> Finish();
  // A pid (rank) found in more than one file: per file, the first such event and the earlier
  // file that has it. Runs of different jobs would be drawn as one rank; an error.
  struct SharedPidError {
    std::string file;
    uint64_t offset = 0;
    std::string message;
  };
  std::vector<SharedPidError> SharedPidErrors() const;

 private:
  struct OpenSlice {
    double start;
    uint32_t name;
    Category category;
    SourceRef source;
  };
  struct PendingLane {
    std::vector<Slice> slices;
    std::vector<OpenSlice> open;  // B events waiting for their E
  };
  struct SharedPid {
    size_t count = 0;  // pids of the file found in the earlier one
    int64_t pid = 0;   // the first of them
    uint64_t offset = 0;
  };
  struct Problem {
    size_t count = 0;
    std::string file;
    uint64_t first_offset = 0;
  };

  uint32_t Intern(std::string_view name);
  Category CategoryOf(std::string_view cat, uint32_t name);
  int64_t IdOfText(std::string_view text);
  std::string ThreadLabel(int64_t tid) const;
  std::string ProcessLabel(int64_t pid) const;
  uint32_t LaneFor(int64_t pid, int64_t tid, LaneKind kind);
  Process& ProcessFor(int64_t pid);
  void Note(const std::string& problem, uint64_t offset);
  bool AddRepaired(const RawEvent& event);  // false when skipped or ignored (and noted)
  void NoteRepairs(const RawEvent& event);
  // Each returns false when the event was ignored (and noted).
  bool AddDuration(const RawEvent& event, int64_t pid, int64_t tid);
  bool AddAsync(const RawEvent& event, int64_t pid);
  void AddMetadata(const RawEvent& event, int64_t pid, int64_t tid);
  bool AddCounter(const RawEvent& event, int64_t pid);
  void CloseOpenSlices();
  void LayOutRows(Lane& lane, std::vector<Slice>& slices);
  void FinishProcesses();

  Trace& trace_;
  uint32_t file_index_ = 0;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::vector<int8_t> name_category_;                  // -1 = not classified yet
  std::unordered_map<std::string, int64_t> text_ids_;  // pid/tid given as strings
  std::vector<std::string> id_texts_;                  // the same, by id - kTextIdBase - 1
  std::map<std::pair<int64_t, int64_t>, uint32_t> lane_ids_;
  std::map<int64_t, size_t> process_ids_;
  std::map<std::pair<int64_t, std::string>, uint32_t> counter_lanes_;
  std::map<std::string, std::vector<std::pair<uint32_t, OpenSlice>>> open_async_;
  std::vector<PendingLane> pending_;
  std::map<std::string, Problem> problems_;
  std::vector<uint32_t> process_file_;  // per process (by index): the file it was last seen in
  std::vector<uint32_t> lane_file_;     // per lane: the same
  std::map<std::pair<uint32_t, uint32_t>, SharedPid> shared_pids_;  // (file, earlier file)
  uint64_t event_offset_ = 0;           // of the event being added
  int64_t last_pid_ = -1, last_tid_ = -1;
  uint32_t last_lane_ = 0;
  bool has_last_lane_ = false;
  double min_time_ = std::numeric_limits<double>::infinity();
  double max_time_ = -std::numeric_limits<double>::infinity();
};

}  // namespace hvdview
