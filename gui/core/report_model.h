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

// Reads a report file (JSON, or CSV with the header of docs/formats.md). On failure returns
// nullopt and sets `error` to one line naming the problem (byte offset or field path).
std::optional<Report> LoadReport(const std::string& path, std::string* error);

// What a file holds, judged from its first bytes.
enum class FileKind { kTimeline, kReport, kEmpty, kUnknown, kUnreadable, kDirectory, kNotRegular };
FileKind DetectFileKind(const std::string& path);

// The one-line problem of a file that is not a timeline or report ("empty file", "is a
// directory, ..."); empty for kTimeline and kReport.
std::string DescribeFileKindProblem(FileKind kind);

}  // namespace hvdview
