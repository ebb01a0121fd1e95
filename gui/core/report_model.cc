#include "core/report_model.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// The whole file, or nullopt with `error` set (a directory, a FIFO, cannot open, empty).
std::optional<std::string> ReadWholeFile(const std::string& path, std::string* error) {
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
    *error = DescribeFileProblem(path, FileKind::kUnreadable);
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string content = text.str();
  if (content.find_first_not_of(" \t\r\n") == std::string::npos) {
    *error = "empty file";
    return std::nullopt;
  }
  return content;
}

// nlohmann names NaN and Infinity "invalid literal"; say what they are, as the timeline
// parser does ("invalid JSON at byte 40: NaN and Infinity are not JSON numbers").
void ExplainNonJsonNumbers(const std::string& content, std::string* error) {
  if (error->rfind("invalid JSON at byte ", 0) != 0) return;
  const size_t byte = std::strtoull(error->c_str() + 21, nullptr, 10);
  const size_t from = byte > 16 ? byte - 16 : 0;
  for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
    const size_t at = content.find(word, from);
    if (at != std::string::npos && at <= byte) {
      *error = "invalid JSON at byte " + std::to_string(at) + ": NaN and Infinity are not JSON numbers";
      return;
    }
  }
}

// One line: the first bad field, then how many more there are (the rule for bad input).
constexpr size_t kMaxProblemLines = 1;

std::string MoreBadFields(size_t n) {
  return "and " + std::to_string(n) + " more bad field" + (n == 1 ? "" : "s");
}

void AddProblem(std::vector<std::string>* problems, size_t* count, std::string line) {
  if ((*count)++ < kMaxProblemLines) problems->push_back(std::move(line));
}

std::string Number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// "first problem (and N more bad fields)".
std::string Joined(const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  return lines.size() == 1 ? lines[0] : lines[0] + " (" + lines[1] + ")";
}

// Checks a finite value within [low, high]; `what` names the range in the message.
void CheckRange(std::vector<std::string>* problems, size_t* count, const std::string& path, double value,
                double low, double high, const char* what) {
  if (std::isfinite(value) && value >= low && value <= high) return;
  AddProblem(problems, count, path + ": " + Number(value) + ", expected " + what);
}

}  // namespace

std::vector<std::string> CheckReport(const Report& report) {
  std::vector<std::string> problems;
  size_t count = 0;
  if (report.runs.empty()) problems.push_back("runs: no runs");
  static const std::string kIps = "a finite number from 0 to " + Number(kMaxImagesPerSec);
  static const std::string kStep = "a finite number of seconds from 0 to " + Number(kMaxStepSeconds);
  static const std::string kEff = "a fraction from 0 to " + Number(kMaxEfficiency) + " (" +
                                  Number(kMaxEfficiency * 100) + " % of ideal)";
  // Each figure of a run, its bound and what the message calls it; the seed bands only when
  // the run has seeds.
  struct Figure {
    const char* name;
    double ReportRun::*value;
    double high;
    const std::string* what;
    bool band;
  };
  static const Figure kFigures[] = {
      {"images_per_sec", &ReportRun::images_per_sec, kMaxImagesPerSec, &kIps, false},
      {"images_per_sec_ci95", &ReportRun::images_per_sec_ci95, kMaxImagesPerSec, &kIps, false},
      {"images_per_sec_single", &ReportRun::images_per_sec_single, kMaxImagesPerSec, &kIps, false},
      {"scaling_efficiency", &ReportRun::scaling_efficiency, kMaxEfficiency, &kEff, false},
      {"step_time_s", &ReportRun::step_time_s, kMaxStepSeconds, &kStep, false},
      {"compute_s", &ReportRun::compute_s, kMaxStepSeconds, &kStep, false},
      {"exposed_comm_s", &ReportRun::exposed_comm_s, kMaxStepSeconds, &kStep, false},
      {"negotiation_s", &ReportRun::negotiation_s, kMaxStepSeconds, &kStep, false},
      {"images_per_sec_lo", &ReportRun::images_per_sec_lo, kMaxImagesPerSec, &kIps, true},
      {"images_per_sec_hi", &ReportRun::images_per_sec_hi, kMaxImagesPerSec, &kIps, true},
      {"scaling_efficiency_lo", &ReportRun::scaling_efficiency_lo, kMaxEfficiency, &kEff, true},
      {"scaling_efficiency_hi", &ReportRun::scaling_efficiency_hi, kMaxEfficiency, &kEff, true},
  };
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const ReportRun& run = report.runs[i];
    const std::string path = "runs[" + std::to_string(i) + "].";
    if (run.np < 1) AddProblem(&problems, &count, path + "np: " + std::to_string(run.np) + ", expected at least 1");
    for (const Figure& f : kFigures)
      if (!f.band || run.seeds > 1) CheckRange(&problems, &count, path + f.name, run.*f.value, 0, f.high, f.what->c_str());
  }
  for (size_t i = 0; i < report.reference.size(); ++i) {
    const std::string path = "reference[" + std::to_string(i) + "].";
    CheckRange(&problems, &count, path + "scaling_efficiency", report.reference[i].scaling_efficiency, 0,
               kMaxEfficiency, kEff.c_str());
  }
  if (count > kMaxProblemLines) {
    problems.push_back(MoreBadFields(count - kMaxProblemLines));
  }
  return problems;
}

std::optional<Report> LoadReport(const std::string& path, std::string* error) {
  const std::optional<std::string> content = ReadWholeFile(path, error);
  if (!content) return std::nullopt;
  const size_t first = content->find_first_not_of(" \t\r\n");
  std::optional<Report> report;
  if ((*content)[first] == '{' || (*content)[first] == '[') {
    report = ToReport(hvd::report::document_from_json(*content, error, hvd::report::RecordParts::kFigures));
    if (!report) ExplainNonJsonNumbers(*content, error);
  } else {
    report = ToReport(hvd::report::document_from_csv(*content, error));
  }
  if (!report) return std::nullopt;
  const std::vector<std::string> problems = CheckReport(*report);
  if (!problems.empty()) {
    *error = Joined(problems);
    return std::nullopt;
  }
  return report;
}

namespace {

// Bandwidths and times of one side ("raw" or "hvd") of a row; `count` of bad fields.
void CheckCollectiveSide(std::vector<std::string>* problems, size_t* count, const std::string& path,
                         double time_s, double algbw, double busbw) {
  static const std::string kBw = "a finite number of GB/s from 0 to " + Number(kMaxBandwidthGbps);
  CheckRange(problems, count, path + "time_s", time_s, 0, kMaxStepSeconds, "a finite number of seconds, at least 0");
  CheckRange(problems, count, path + "algbw_gbps", algbw, 0, kMaxBandwidthGbps, kBw.c_str());
  CheckRange(problems, count, path + "busbw_gbps", busbw, 0, kMaxBandwidthGbps, kBw.c_str());
}

// A number field of a JSON object; a problem line when it is missing or not a number.
double JsonNumber(const nlohmann::json& object, const std::string& path, const char* key,
                  std::vector<std::string>* problems, size_t* count) {
  const auto it = object.find(key);
  if (it == object.end()) {
    AddProblem(problems, count, path + key + ": missing");
    return 0;
  }
  if (!it->is_number()) {
    AddProblem(problems, count, path + key + ": expected a number");
    return 0;
  }
  return it->get<double>();
}

std::string JsonText(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<CollectiveReport> CollectiveFromJson(const std::string& content, std::string* error) {
  const std::optional<nlohmann::json> parsed = hvd::report::parse_json_text(content, error);
  if (!parsed) {
    ExplainNonJsonNumbers(content, error);
    return std::nullopt;
  }
  const nlohmann::json& json = *parsed;
  if (!json.is_object() || !json.contains("rows") || !json["rows"].is_array()) {
    *error = "not a collective sweep report: expected an object with a \"rows\" array";
    return std::nullopt;
  }
  CollectiveReport report;
  report.collective = JsonText(json, "collective");
  report.scenario = JsonText(json, "scenario");
  if (json.contains("np") && json["np"].is_number_integer()) report.np = json["np"].get<int>();
  if (json.contains("nodes") && json["nodes"].is_number_integer()) report.nodes = json["nodes"].get<int>();
  std::vector<std::string> problems;
  size_t count = 0;
  const nlohmann::json& rows = json["rows"];
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string path = "rows[" + std::to_string(i) + "].";
    if (!rows[i].is_object()) {
      AddProblem(&problems, &count, path.substr(0, path.size() - 1) + ": expected an object");
      continue;
    }
    CollectiveRow row;
    row.bytes = JsonNumber(rows[i], path, "bytes", &problems, &count);
    const auto raw = rows[i].find("raw");
    if (raw == rows[i].end() || !raw->is_object()) {
      AddProblem(&problems, &count, path + "raw: missing");
      continue;
    }
    row.raw_time_s = JsonNumber(*raw, path + "raw.", "time_s", &problems, &count);
    row.raw_algbw_gbps = JsonNumber(*raw, path + "raw.", "algbw_gbps", &problems, &count);
    row.raw_busbw_gbps = JsonNumber(*raw, path + "raw.", "busbw_gbps", &problems, &count);
    row.algorithm = JsonText(*raw, "algorithm");
    row.protocol = JsonText(*raw, "protocol");
    const auto hvd = rows[i].find("hvd");
    if (hvd != rows[i].end() && hvd->is_object()) {
      row.has_hvd = true;
      row.hvd_time_s = JsonNumber(*hvd, path + "hvd.", "time_s", &problems, &count);
      row.hvd_algbw_gbps = JsonNumber(*hvd, path + "hvd.", "algbw_gbps", &problems, &count);
      row.hvd_busbw_gbps = JsonNumber(*hvd, path + "hvd.", "busbw_gbps", &problems, &count);
    }
    report.rows.push_back(row);
  }
  if (!problems.empty()) {
    if (count > kMaxProblemLines) problems.push_back(MoreBadFields(count - kMaxProblemLines));
    *error = Joined(problems);
    return std::nullopt;
  }
  return report;
}

constexpr const char* kCollectiveCsvHeader =
    "bytes,count,raw_time_s,raw_algbw_gbps,raw_busbw_gbps,algorithm,protocol,channels,hvd_time_s,"
    "hvd_algbw_gbps,hvd_busbw_gbps";

std::optional<CollectiveReport> CollectiveFromCsv(const std::string& content, std::string* error) {
  std::istringstream in(content);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != kCollectiveCsvHeader) {
    *error = std::string("not a collective sweep CSV: the first line must be the header ") + kCollectiveCsvHeader;
    return std::nullopt;
  }
  CollectiveReport report;
  for (int number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream split(line);
    for (std::string cell; std::getline(split, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    const std::string where = "line " + std::to_string(number);
    if (cells.size() != 11) {
      *error = where + ": expected 11 columns, got " + std::to_string(cells.size());
      return std::nullopt;
    }
    auto number_at = [&](size_t column, double* value) {
      char* end = nullptr;
      errno = 0;
      *value = std::strtod(cells[column].c_str(), &end);
      if (cells[column].empty() || *end != '\0' || errno == ERANGE || !std::isfinite(*value)) {
        *error = where + ", column " + std::to_string(column + 1) + ": '" + cells[column].substr(0, 60) +
                 "' is not a finite number";
        return false;
      }
      return true;
    };
    CollectiveRow row;
    if (!number_at(0, &row.bytes) || !number_at(2, &row.raw_time_s) || !number_at(3, &row.raw_algbw_gbps) ||
        !number_at(4, &row.raw_busbw_gbps)) {
      return std::nullopt;
    }
    row.algorithm = cells[5];
    row.protocol = cells[6];
    row.has_hvd = !(cells[8].empty() && cells[9].empty() && cells[10].empty());  // --raw-only: ",,"
    if (row.has_hvd && (!number_at(8, &row.hvd_time_s) || !number_at(9, &row.hvd_algbw_gbps) ||
                        !number_at(10, &row.hvd_busbw_gbps))) {
      return std::nullopt;
    }
    report.rows.push_back(row);
  }
  return report;
}

}  // namespace

std::optional<CollectiveReport> LoadCollectiveReport(const std::string& path, std::string* error) {
  const std::optional<std::string> content = ReadWholeFile(path, error);
  if (!content) return std::nullopt;
  const size_t first = content->find_first_not_of(" \t\r\n");
  std::optional<CollectiveReport> report = (*content)[first] == '{' ? CollectiveFromJson(*content, error)
                                                                    : CollectiveFromCsv(content->substr(first), error);
  if (!report) return std::nullopt;
  std::vector<std::string> problems;
  size_t count = 0;
  if (report->rows.empty()) problems.push_back("rows: no rows");
  for (size_t i = 0; i < report->rows.size(); ++i) {
    const CollectiveRow& row = report->rows[i];
    const std::string path = "rows[" + std::to_string(i) + "].";
    CheckRange(&problems, &count, path + "bytes", row.bytes, 1, kMaxSweepBytes, "a size from 1 byte to 1e18");
    CheckCollectiveSide(&problems, &count, path + "raw.", row.raw_time_s, row.raw_algbw_gbps, row.raw_busbw_gbps);
    if (row.has_hvd) {
      CheckCollectiveSide(&problems, &count, path + "hvd.", row.hvd_time_s, row.hvd_algbw_gbps, row.hvd_busbw_gbps);
    }
  }
  if (count > kMaxProblemLines) problems.push_back(MoreBadFields(count - kMaxProblemLines));
  if (!problems.empty()) {
    *error = Joined(problems);
    return std::nullopt;
  }
  return report;
}

namespace {

// Reads a file through a buffer, one byte at a time, for the top-level key scan.
class ByteReader {
 public:
  explicit ByteReader(std::ifstream& in) : in_(in) {}
  // The next byte, or -1 at the end of the file.
  int Next() {
    if (pos_ == length_) {
      in_.read(buffer_, sizeof buffer_);
      length_ = static_cast<size_t>(in_.gcount());
      pos_ = 0;
      if (length_ == 0) return -1;
    }
    return static_cast<unsigned char>(buffer_[pos_++]);
  }
  void Unread() { --pos_; }  // only right after a Next() that returned a byte
  int NextAfterSpace() {
    int c = Next();
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n') c = Next();
    return c;
  }
  // After the opening '"': the string up to its closing quote, at most `keep` bytes kept
  // (escapes left as written). False at the end of the file.
  bool String(std::string* text, size_t keep) {
    text->clear();
    for (int c = Next(); c >= 0; c = Next()) {
      if (c == '"') return true;
      if (c == '\\') {
        c = Next();
        if (c < 0) return false;
      }
      if (text->size() < keep) text->push_back(static_cast<char>(c));
    }
    return false;
  }
  // Skips a value (at its first byte, already read as `c`); nested values are only
  // bracket-counted, so any depth takes no stack. False at the end of the file.
  bool SkipValue(int c) {
    std::string ignored;
    if (c == '"') return String(&ignored, 0);
    if (c == '{' || c == '[') {
      uint64_t depth = 1;
      while (depth > 0) {
        c = Next();
        if (c < 0) return false;
        if (c == '"' && !String(&ignored, 0)) return false;
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
      }
      return true;
    }
    for (; c >= 0; c = Next()) {  // a number or a literal
      if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        Unread();
        return true;
      }
    }
    return false;
  }

 private:
  std::ifstream& in_;
  char buffer_[65536];
  size_t pos_ = 0;
  size_t length_ = 0;
};

// A JSON object's kind from its top-level keys (the reader is past the '{'). The values are
// skipped, not parsed: a report with a long "reference" before "runs", or a timeline with
// "runs" in its metadata before "traceEvents", is judged by its keys. A file cut or broken
// part way is judged by the keys before the break (the loader then names the break).
FileKind KindOfObject(ByteReader& reader) {
  bool runs = false, reference = false, tool = false, collective = false, rows = false;
  std::string key, kind;
  for (;;) {
    int c = reader.NextAfterSpace();
    if (c != '"' || !reader.String(&key, 64)) break;
    if (key == "traceEvents") return FileKind::kTimeline;
    if (reader.NextAfterSpace() != ':') break;
    runs |= key == "runs";
    reference |= key == "reference";
    tool |= key == "tool";
    collective |= key == "collective";
    rows |= key == "rows";
    c = reader.NextAfterSpace();
    if (key == "kind" && c == '"') {
      if (!reader.String(&kind, 64)) break;
    } else if (!reader.SkipValue(c)) {
      break;
    }
    c = reader.NextAfterSpace();
    if (c != ',') break;
  }
  if (kind == "hvdsim shard") return FileKind::kShardReport;
  if (runs || reference || tool) return FileKind::kReport;
  if (collective || rows) return FileKind::kCollectiveReport;
  return FileKind::kTimeline;  // the timeline parser explains what is missing
}

}  // namespace

FileKind DetectFileKind(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return FileKind::kDirectory;
  // A FIFO or a device would block the read (or never end): refused before it is opened.
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) return FileKind::kNotRegular;
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileKind::kUnreadable;
  ByteReader reader(in);
  const int first = reader.NextAfterSpace();
  if (first < 0) return FileKind::kEmpty;
  if (first == '[') return FileKind::kTimeline;
  if (first == '{') return KindOfObject(reader);
  std::string head(1, static_cast<char>(first));
  for (int c = reader.Next(); c >= 0 && c != '\n' && head.size() < 64; c = reader.Next()) {
    head.push_back(static_cast<char>(c));
  }
  if (head.rfind("model,np,", 0) == 0) return FileKind::kReport;
  if (head.rfind("bytes,count,raw_time_s,", 0) == 0) return FileKind::kCollectiveReport;
  return FileKind::kUnknown;
}

std::string DescribeFileKindProblem(FileKind kind) {
  switch (kind) {
    case FileKind::kTimeline:
    case FileKind::kReport:
    case FileKind::kCollectiveReport:
      return {};
    case FileKind::kShardReport:
      return "a partial report of hvdsim --shard: merge the shards with hvdsim --merge, then open the "
             "merged report";
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

std::string DescribeFileProblem(const std::string& path, FileKind kind) {
  if (kind != FileKind::kUnreadable) return DescribeFileKindProblem(kind);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file) {
    std::fclose(file);
    return DescribeFileKindProblem(kind);
  }
  return std::string("cannot open: ") + std::strerror(errno);
}

}  // namespace hvdview
