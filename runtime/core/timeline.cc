#include "hvd/timeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hvd {

namespace {
constexpr char kTail[] = "\n]\n";
constexpr size_t kFlushBytes = 1 << 20;
}  // namespace

std::string timeline_rank_path(const std::string& path, int rank) {
  if (rank == 0) return path;
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  std::string tag = ".rank";
  tag += std::to_string(rank);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + tag;
  std::string out = path.substr(0, dot);
  out += tag;
  out += path.substr(dot);
  return out;
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += c;
        }
    }
  }
  return out;
}

StatusOr<std::unique_ptr<TimelineWriter>> TimelineWriter::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::InvalidArgument("cannot open timeline file '" + path + "': " + std::strerror(errno));
  auto w = std::unique_ptr<TimelineWriter>(new TimelineWriter(fd, path));
  const std::string head = std::string("[") + kTail;
  if (::pwrite(fd, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()))
    return Status::InvalidArgument("cannot write timeline file '" + path + "'");
  w->file_end_ = 1;
  return w;
}

TimelineWriter::TimelineWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

TimelineWriter::~TimelineWriter() {
  flush();
  ::close(fd_);
}

void TimelineWriter::append(const std::string& event) {
  std::lock_guard<std::mutex> lk(mu_);
  buffer_ += first_ ? "\n" : ",\n";
  first_ = false;
  buffer_ += event;
  ++events_;
  if (buffer_.size() >= kFlushBytes) {
    // Inline flush (lock held).
    std::string chunk = buffer_ + kTail;
    if (::pwrite(fd_, chunk.data(), chunk.size(), file_end_) == static_cast<ssize_t>(chunk.size()))
      file_end_ += static_cast<int64_t>(buffer_.size());
    buffer_.clear();
  }
}

void TimelineWriter::flush() {
  std::lock_guard<std::mutex> lk(mu_);
  if (buffer_.empty()) return;
  // One pwrite carries the new events and the closing bracket: valid before and after.
  std::string chunk = buffer_ + kTail;
  if (::pwrite(fd_, chunk.data(), chunk.size(), file_end_) == static_cast<ssize_t>(chunk.size()))
    file_end_ += static_cast<int64_t>(buffer_.size());
  buffer_.clear();
}

void TimelineWriter::declare_rank(int pid, const std::string& label) {
  static constexpr const char* kLanes[] = {"cycle", "negotiation", "collective", "compute"};
  char b[256];
  std::snprintf(b, sizeof b,
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"%s\"}}",
                pid, json_escape(label).c_str());
  append(b);
  std::snprintf(b, sizeof b,
                "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}",
                pid, pid);
  append(b);
  for (int tid = 0; tid < 4; ++tid) {
    std::snprintf(b, sizeof b,
                  "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                  pid, tid, kLanes[tid]);
    append(b);
  }
}

void TimelineWriter::complete(int pid, int tid, std::string_view name, std::string_view cat,
                              double ts_us, double dur_us, std::string_view args_json) {
  char b[192];
  std::snprintf(b, sizeof b, "\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", pid,
                tid, ts_us, dur_us < 0 ? 0.0 : dur_us);
  std::string e = "{\"name\":\"";
  e += json_escape(name);
  e += "\",\"cat\":\"";
  e += cat;
  e += b;
  if (!args_json.empty()) {
    e += ",\"args\":{";
    e += args_json;
    e += '}';
  }
  e += '}';
  append(e);
}

void TimelineWriter::instant(int pid, int tid, std::string_view name, std::string_view cat,
                             double ts_us) {
  char b[160];
  std::snprintf(b, sizeof b, "\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f}", pid,
                tid, ts_us);
  std::string e = "{\"name\":\"";
  e += json_escape(name);
  e += "\",\"cat\":\"";
  e += cat;
  e += b;
  append(e);
}

}  // namespace hvd
