// TimelineWriter: Chrome Trace Event JSON that stays valid at every moment. Events are
// buffered and appended by one pwrite() that also rewrites the closing bracket, so a
// process killed at any point leaves a file that parses. One writer may be shared by all
// ranks of a process (in-process and simulated worlds); it is internally locked.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "hvd/status.h"

namespace hvd {

/// Lanes (tid) of a rank's row.
enum TimelineLane : int { kLaneCycle = 0, kLaneNegotiation = 1, kLaneCollective = 2, kLaneCompute = 3 };

/// Appends trace events to one JSON file.
class TimelineWriter {
 public:
  /// Creates/truncates `path`, or says why it cannot.
  static StatusOr<std::unique_ptr<TimelineWriter>> open(const std::string& path);
  ~TimelineWriter();
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  /// Names rank `pid`'s row and its four lanes (metadata events).
  void declare_rank(int pid, const std::string& label);
  /// A complete event ("ph":"X") from `ts_us` lasting `dur_us`; `args_json` is an object
  /// body without braces (e.g. "\"bytes\":4") or empty.
  void complete(int pid, int tid, std::string_view name, std::string_view cat, double ts_us,
                double dur_us, std::string_view args_json = {});
  /// An instant event ("ph":"i").
  void instant(int pid, int tid, std::string_view name, std::string_view cat, double ts_us);
  /// Writes buffered events (the file stays valid JSON).
  void flush();
  /// Path of the file.
  const std::string& path() const { return path_; }
  /// Events written so far.
  int64_t events() const { return events_; }

 private:
  TimelineWriter(int fd, std::string path);
  void append(const std::string& event);

  std::mutex mu_;  // guards the buffer only; never held while waiting for anything
  int fd_;
  std::string path_;
  std::string buffer_;
  int64_t file_end_ = 0;  // offset of the closing "\n]\n"
  int64_t events_ = 0;
  bool first_ = true;
};

/// The file rank `rank` of a multi-process run writes: "timeline.json" stays for rank 0,
/// "timeline.rank3.json" for rank 3 (docs/formats.md).
std::string timeline_rank_path(const std::string& path, int rank);

/// JSON string escaping for names.
std::string json_escape(std::string_view s);

}  // namespace hvd
