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
  // hvdsim --seeds K (K > 1): the figures above are means over K draws, these their range.
  int seeds = 1;
  double images_per_sec_lo = 0;
  double images_per_sec_hi = 0;
  double scaling_efficiency_lo = 0;
  double scaling_efficiency_hi = 0;
  // The run carries a min-max band (efficiency), drawn around its line.
  bool HasBand() const { return seeds > 1 && scaling_efficiency_hi >= scaling_efficiency_lo; }
  // "model" or "model (label)": the series a run belongs to in charts.
  std::string SeriesName() const { return label.empty() ? model : model + " (" + label + ")"; }
};

// A published scaling efficiency the report compares with (hvdsim's scenario "reference").
struct ReportReference {
  std::string model;
  int np = 0;
  double scaling_efficiency = 0;  // a fraction, as ReportRun::scaling_efficiency
  std::string source;
};

struct Report {
  std::string tool;
  std::string version;
  std::string source;
  std::vector<ReportRun> runs;
  std::vector<ReportReference> reference;
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
