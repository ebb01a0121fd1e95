// Benchmark / simulation reports (hvdbench --report, hvdsim --report), JSON or CSV.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hvd/report/record.h"

namespace hvdview {

// One run of a report: one model at one np (and one sweep label). The record is the
// report library's (libs/report, hvd/report/record.h: plain C++, no runtime); the viewer
// adds how it draws it.
struct ReportRun : hvd::report::RunRecord {
  // The run carries a min-max band (efficiency), drawn around its line.
  bool HasBand() const { return seeds > 1 && scaling_efficiency_hi >= scaling_efficiency_lo; }
  // "model" or "model (label)": the series a run belongs to in charts.
  std::string SeriesName() const { return label.empty() ? model : model + " (" + label + ")"; }
};

// A published scaling efficiency the report compares with (hvdsim's scenario "reference").
using ReportReference = hvd::report::Reference;

struct Report {
  std::string tool;
  std::string version;
  std::string source;
  std::vector<ReportRun> runs;
  std::vector<ReportReference> reference;
};

// Reads a report file (JSON, or CSV with the header of docs/formats.md) and checks its
// figures (CheckReport). On failure returns nullopt and sets `error` to the problems, one
// line each ('\n' between them), naming the byte offset or the field path.
std::optional<Report> LoadReport(const std::string& path, std::string* error);

// Figures a chart cannot draw, one line per bad field ("runs[2].np: 0, expected at least
// 1"): no runs; np below 1; images/s, step times, bands and published points that are not
// finite, negative or beyond kMaxImagesPerSec / kMaxStepSeconds; scaling efficiency
// outside 0 .. kMaxEfficiency. Empty when the report is fine.
inline constexpr double kMaxImagesPerSec = 1e12;
inline constexpr double kMaxStepSeconds = 1e9;
inline constexpr double kMaxEfficiency = 2.0;  // 200 % of ideal
std::vector<std::string> CheckReport(const Report& report);

// One size of a collective sweep (hvdsim --collective C --report FILE): NCCL as its tuner
// picks it ("raw") and through the runtime API ("hvd", absent with --raw-only).
struct CollectiveRow {
  double bytes = 0;
  double raw_time_s = 0, raw_algbw_gbps = 0, raw_busbw_gbps = 0;
  std::string algorithm, protocol;
  bool has_hvd = false;
  double hvd_time_s = 0, hvd_algbw_gbps = 0, hvd_busbw_gbps = 0;
};

// A collective sweep report (docs/formats.md, "Collective sweep report"). From the CSV,
// collective, np, nodes and scenario are unknown (empty / 0).
struct CollectiveReport {
  std::string collective;
  int np = 0;
  int nodes = 0;
  std::string scenario;
  std::vector<CollectiveRow> rows;
};

// Largest bandwidth accepted, GB/s, and largest size, bytes.
inline constexpr double kMaxBandwidthGbps = 1e9;
inline constexpr double kMaxSweepBytes = 1e18;

// Reads a collective sweep report, JSON or its CSV; errors as LoadReport's (one line each).
std::optional<CollectiveReport> LoadCollectiveReport(const std::string& path, std::string* error);

// What a file holds, judged from its content: a JSON object by its top-level keys
// ("traceEvents": a timeline, else "runs": a report, "kind": "hvdsim shard": a partial
// report, "collective" and "rows": a collective sweep report), a CSV by its header.
enum class FileKind {
  kTimeline,
  kReport,
  kCollectiveReport,
  kShardReport,
  kEmpty,
  kUnknown,
  kUnreadable,
  kDirectory,
  kNotRegular
};
FileKind DetectFileKind(const std::string& path);

// The one-line problem of a file that is not a timeline or report ("empty file", "is a
// directory, ..."); empty for kTimeline, kReport and kCollectiveReport.
std::string DescribeFileKindProblem(FileKind kind);
// The same for a file at `path`: "cannot open" says why (errno), as the timeline loader does.
std::string DescribeFileProblem(const std::string& path, FileKind kind);

}  // namespace hvdview
