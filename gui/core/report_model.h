// Benchmark / simulation reports (hvdbench --report, hvdsim --report), JSON or CSV.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hvdview {

// One run of a report: one model at one np (and one sweep label).
struct ReportRun {
  std::string model;
  int np = 0;
  int batch_size = 0;
  std::string gpu;
  std::string label;
  double images_per_sec = 0;
  double images_per_sec_ci95 = 0;
  double images_per_sec_single = 0;
  double scaling_efficiency = 0;
  double step_time_s = 0;
  double compute_s = 0;
  double exposed_comm_s = 0;
  double negotiation_s = 0;
  int steps = 0;
  // "model" or "model (label)": the series a run belongs to in charts.
  std::string SeriesName() const { return label.empty() ? model : model + " (" + label + ")"; }
};

struct Report {
  std::string tool;
  std::string version;
  std::string source;
  std::vector<ReportRun> runs;
};

// Reads a report file (JSON, or CSV with the header of docs/formats.md). On failure returns
// nullopt and sets `error` to one line naming the problem (byte offset or field path).
std::optional<Report> LoadReport(const std::string& path, std::string* error);

// What a file holds, judged from its first bytes.
enum class FileKind { kTimeline, kReport, kEmpty, kUnknown, kUnreadable, kDirectory };
FileKind DetectFileKind(const std::string& path);

// The one-line problem of a file that is not a timeline or report ("empty file", "is a
// directory, ..."); empty for kTimeline and kReport.
std::string DescribeFileKindProblem(FileKind kind);

}  // namespace hvdview
