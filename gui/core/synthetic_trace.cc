#include "core/synthetic_trace.h"

#include <charconv>
#include <cstdio>
#include <memory>

namespace hvdview {
namespace {

class TimelineWriter {
 public:
  explicit TimelineWriter(FILE* out) : out_(out) { text_.reserve(1 << 21); }
  ~TimelineWriter() { Flush(); }

  void Metadata(int pid, int tid, const char* kind, const std::string& value) {
    Begin();
    text_ += "{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
             ",\"name\":\"" + kind + "\",\"args\":{\"" +
             (std::string(kind).ends_with("sort_index") ? "sort_index\":" + value
                                                        : "name\":\"" + value + "\"") +
             "}}";
  }
  void Complete(int pid, int tid, const char* name, const char* cat, double ts, double dur,
                const char* args = nullptr) {
    Begin();
    text_ += "{\"ph\":\"X\",\"name\":\"";
    text_ += name;
    text_ += "\",\"cat\":\"";
    text_ += cat;
    text_ += "\",\"pid\":";
    Number(pid);
    text_ += ",\"tid\":";
    Number(tid);
    text_ += ",\"ts\":";
    Number(ts);
    text_ += ",\"dur\":";
    Number(dur);
    if (args) {
      text_ += ",\"args\":";
      text_ += args;
    }
    text_ += "}";
  }
  void Instant(int pid, int tid, const char* name, double ts) {
    Begin();
    text_ += "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cycle\",\"name\":\"";
    text_ += name;
    text_ += "\",\"pid\":";
    Number(pid);
    text_ += ",\"tid\":";
    Number(tid);
    text_ += ",\"ts\":";
    Number(ts);
    text_ += "}";
  }
  void Close(bool close_array) {
    text_ += close_array ? "\n]\n" : ",\n";
    Flush();
  }
  size_t events() const { return events_; }

 private:
  void Begin() {
    text_ += events_++ == 0 ? "[\n" : ",\n";
    if (text_.size() > (1 << 20)) Flush();
  }
  void Number(double value) {
    char digits[32];
    auto [end, ec] =
        std::to_chars(digits, digits + sizeof digits, value, std::chars_format::fixed, 3);
    text_.append(digits, end);
  }
  void Number(int value) { text_ += std::to_string(value); }
  void Flush() {
    std::fwrite(text_.data(), 1, text_.size(), out_);
    text_.clear();
  }

  FILE* out_;
  std::string text_;
  size_t events_ = 0;
};

void WriteMetadata(TimelineWriter& writer, int rank) {
  writer.Metadata(rank, 0, "process_name", "rank " + std::to_string(rank));
  writer.Metadata(rank, 0, "process_sort_index", std::to_string(rank));
  const char* lanes[] = {"cycle", "negotiation", "collective", "compute"};
  for (int tid = 0; tid < 4; ++tid) writer.Metadata(rank, tid, "thread_name", lanes[tid]);
}

// One training step of one rank: compute lane, then per-collective negotiation and phases.
void WriteStep(TimelineWriter& writer, const SyntheticTimelineSpec& spec, int rank, int step) {
  const double t0 = step * spec.step_us;
  const double compute = spec.step_us * 0.7 * (1.0 + rank * spec.rank_skew);
  writer.Complete(rank, 3, "STEP", "compute", t0,
                  std::min(compute + spec.step_us * 0.25, spec.step_us * 0.999));
  writer.Complete(rank, 3, "FORWARD", "compute", t0, compute * 0.35);
  writer.Complete(rank, 3, "BACKWARD", "compute", t0 + compute * 0.35, compute * 0.6);
  writer.Complete(rank, 3, "OPTIMIZER", "compute", t0 + compute * 0.95, compute * 0.05);
  const int n = spec.collectives_per_step;
  const double slot = spec.step_us * 0.55 / n;
  for (int c = 0; c < n; ++c) {
    const double start = t0 + compute * 0.4 + c * slot;
    writer.Instant(rank, 0, "CYCLE_START", start);
    writer.Complete(rank, 1, "NEGOTIATE_ALLREDUCE", "negotiation", start, slot * 0.2);
    const double op = start + slot * 0.2;
    const double len = slot * 0.75;
    char args[160];
    std::snprintf(args, sizeof args,
                  "{\"tensors\":3,\"bytes\":%d,\"names\":\"grad_%d_%d\",\"algorithm\":\"ring\","
                  "\"process_set\":0}",
                  (c + 1) * 1048576, step, c);
    writer.Complete(rank, 2, "ALLREDUCE", "communication", op, len, args);
    writer.Complete(rank, 2, "QUEUE", "queue", op, len * 0.05);
    writer.Complete(rank, 2, "MEMCPY_IN_FUSION_BUFFER", "memcpy", op + len * 0.05, len * 0.1);
    writer.Complete(rank, 2, "RING_ALLREDUCE", "communication", op + len * 0.15, len * 0.75);
    writer.Complete(rank, 2, "MEMCPY_OUT_FUSION_BUFFER", "memcpy", op + len * 0.9, len * 0.1);
  }
}

}  // namespace

size_t WriteSyntheticTimeline(const std::string& path, const SyntheticTimelineSpec& spec) {
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!out || spec.ranks <= 0) return 0;
  TimelineWriter writer(out.get());
  const size_t per_step = 4 + 7 * static_cast<size_t>(spec.collectives_per_step);
  const size_t steps = std::max<size_t>(1, spec.events / (per_step * spec.ranks));
  const int end_rank = spec.first_rank + spec.ranks;
  for (int rank = spec.first_rank; rank < end_rank; ++rank) WriteMetadata(writer, rank);
  for (size_t step = 0; step < steps; ++step) {
    for (int rank = spec.first_rank; rank < end_rank; ++rank) {
      WriteStep(writer, spec, rank, static_cast<int>(step));
    }
  }
  writer.Close(spec.close_array);
  return writer.events();
}

}  // namespace hvdview
