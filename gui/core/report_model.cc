#include "core/report_model.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hvdview {
namespace {

// The viewer's Report from the report library's reading of the file (knobs and
// collectives, which the viewer does not show, are left unread).
std::optional<Report> ToReport(std::optional<hvd::report::ReportDocument> doc) {
  if (!doc) return std::nullopt;
  Report report{doc->tool, doc->version, doc->source, {}, std::move(doc->reference)};
  for (hvd::report::RunRecord& r : doc->runs) {
    ReportRun run;
    static_cast<hvd::report::RunRecord&>(run) = std::move(r);
    report.runs.push_back(std::move(run));
  }
  return report;
}

}  // namespace

std::optional<Report> LoadReport(const std::string& path, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = DescribeFileKindProblem(FileKind::kDirectory);
    return std::nullopt;
  }
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    *error = DescribeFileKindProblem(FileKind::kNotRegular);
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  const size_t first = content.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    *error = "empty file";
    return std::nullopt;
  }
  if (content[first] == '{' || content[first] == '[') {
    return ToReport(hvd::report::document_from_json(content, error, hvd::report::RecordParts::kFigures));
  }
  return ToReport(hvd::report::document_from_csv(content, error));
}

FileKind DetectFileKind(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return FileKind::kDirectory;
  // A FIFO or a device would block the read (or never end): refused before it is opened.
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) return FileKind::kNotRegular;
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileKind::kUnreadable;
  std::string head(65536, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return FileKind::kEmpty;
  if (head[first] == '[') return FileKind::kTimeline;
  if (head[first] == '{') {
    if (head.find("\"traceEvents\"") != std::string::npos) return FileKind::kTimeline;
    if (head.find("\"runs\"") != std::string::npos) return FileKind::kReport;
    return FileKind::kTimeline;  // the timeline parser explains what is missing
  }
  if (head.compare(first, 9, "model,np,") == 0) return FileKind::kReport;
  return FileKind::kUnknown;
}

}  // namespace hvdview

namespace hvdview {

std::string DescribeFileKindProblem(FileKind kind) {
  switch (kind) {
    case FileKind::kTimeline:
    case FileKind::kReport:
      return {};
    case FileKind::kEmpty:
      return "empty file";
    case FileKind::kUnreadable:
      return "cannot open";
    case FileKind::kDirectory:
      return "is a directory, expected a timeline or report file";
    case FileKind::kNotRegular:
      return "is not a regular file (a FIFO or a device), expected a timeline or report file";
    case FileKind::kUnknown:
      break;
  }
  return "neither a timeline (JSON trace) nor a report (JSON or CSV)";
}

}  // namespace hvdview
