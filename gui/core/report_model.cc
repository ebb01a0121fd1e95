#include "core/report_model.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hvdview {
namespace {

const char* const kCsvHeader =
    "model,np,batch_size,gpu,label,images_per_sec,images_per_sec_ci95,images_per_sec_single,"
    "scaling_efficiency,step_time_s,compute_s,exposed_comm_s,negotiation_s,steps";
// hvdsim --seeds K: five more columns.
const char* const kCsvSeedColumns =
    ",seeds,images_per_sec_lo,images_per_sec_hi,scaling_efficiency_lo,scaling_efficiency_hi";

struct FieldError {
  std::string message;
};

template <typename T>
void ReadField(const nlohmann::json& run, const std::string& path, const char* key, T* out,
               bool required) {
  auto it = run.find(key);
  if (it == run.end() || it->is_null()) {
    if (required) throw FieldError{path + "." + key + ": missing"};
    return;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) throw FieldError{path + "." + key + ": expected a string"};
    *out = it->template get<std::string>();
  } else if constexpr (std::is_same_v<T, int>) {
    if (!it->is_number()) {
      throw FieldError{path + "." + key + ": expected a number, got " + it->type_name()};
    }
    // Converting 1e30 or 2^40 to int is undefined: ask for an integer that fits.
    const bool fits = it->is_number_integer() &&
                      (it->is_number_unsigned()
                           ? it->template get<uint64_t>() <= std::numeric_limits<int>::max()
                           : it->template get<int64_t>() >= 0 &&
                                 it->template get<int64_t>() <= std::numeric_limits<int>::max());
    if (!fits) {
      throw FieldError{path + "." + key + ": expected an integer from 0 to 2147483647, got " +
                       it->dump().substr(0, 60)};
    }
    *out = it->template get<int>();
  } else {
    if (!it->is_number()) {
      throw FieldError{path + "." + key + ": expected a number, got " + it->type_name()};
    }
    *out = it->template get<T>();
  }
}

ReportRun RunFromJson(const nlohmann::json& json, const std::string& path) {
  if (!json.is_object()) throw FieldError{path + ": expected an object"};
  ReportRun run;
  ReadField(json, path, "model", &run.model, true);
  ReadField(json, path, "np", &run.np, true);
  ReadField(json, path, "batch_size", &run.batch_size, false);
  ReadField(json, path, "gpu", &run.gpu, false);
  ReadField(json, path, "label", &run.label, false);
  ReadField(json, path, "images_per_sec", &run.images_per_sec, true);
  ReadField(json, path, "images_per_sec_ci95", &run.images_per_sec_ci95, false);
  ReadField(json, path, "images_per_sec_single", &run.images_per_sec_single, false);
  ReadField(json, path, "scaling_efficiency", &run.scaling_efficiency, false);
  ReadField(json, path, "step_time_s", &run.step_time_s, false);
  ReadField(json, path, "compute_s", &run.compute_s, false);
  ReadField(json, path, "exposed_comm_s", &run.exposed_comm_s, false);
  ReadField(json, path, "negotiation_s", &run.negotiation_s, false);
  ReadField(json, path, "steps", &run.steps, false);
  ReadField(json, path, "seeds", &run.seeds, false);
  ReadField(json, path, "images_per_sec_lo", &run.images_per_sec_lo, false);
  ReadField(json, path, "images_per_sec_hi", &run.images_per_sec_hi, false);
  ReadField(json, path, "scaling_efficiency_lo", &run.scaling_efficiency_lo, false);
  ReadField(json, path, "scaling_efficiency_hi", &run.scaling_efficiency_hi, false);
  return run;
}

ReportReference ReferenceFromJson(const nlohmann::json& json, const std::string& path) {
  if (!json.is_object()) throw FieldError{path + ": expected an object"};
  ReportReference ref;
  ReadField(json, path, "model", &ref.model, true);
  ReadField(json, path, "np", &ref.np, true);
  ReadField(json, path, "scaling_efficiency", &ref.scaling_efficiency, true);
  ReadField(json, path, "source", &ref.source, false);
  if (!std::isfinite(ref.scaling_efficiency)) {
    throw FieldError{path + ".scaling_efficiency: expected a finite number"};
  }
  return ref;
}

std::optional<Report> ReportFromJson(const std::string& text, std::string* error) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann quotes the whole token read so far ("last read: ..."): keep one short line.
    std::string what = e.what();
    if (what.size() > 200) what = what.substr(0, 200) + "...";
    *error = "invalid JSON at byte " + std::to_string(e.byte) + ": " + what;
    return std::nullopt;
  }
  if (!json.is_object() || !json.contains("runs") || !json["runs"].is_array()) {
    *error = "not a report: expected an object with a \"runs\" array";
    return std::nullopt;
  }
  Report report;
  try {
    ReadField(json, "report", "tool", &report.tool, false);
    ReadField(json, "report", "version", &report.version, false);
    ReadField(json, "report", "source", &report.source, false);
    const auto& runs = json["runs"];
    for (size_t i = 0; i < runs.size(); ++i) {
      report.runs.push_back(RunFromJson(runs[i], "runs[" + std::to_string(i) + "]"));
    }
    if (json.contains("reference") && !json["reference"].is_null()) {
      const auto& refs = json["reference"];
      if (!refs.is_array()) throw FieldError{"reference: expected an array"};
      for (size_t i = 0; i < refs.size(); ++i) {
        report.reference.push_back(ReferenceFromJson(refs[i], "reference[" + std::to_string(i) + "]"));
      }
    }
  } catch (const FieldError& e) {
    *error = e.message;
    return std::nullopt;
  }
  return report;
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  fields.push_back(field);
  return fields;
}

// A CSV field as a finite number / an integer from 0 to INT_MAX, else a FieldError naming
// the line, the column and the (cut) text.
double CsvDouble(const std::string& text, const std::string& at, const char* column) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value)) {
    throw FieldError{at + ", " + column + ": expected a finite number, got '" +
                     text.substr(0, 60) + "'"};
  }
  return value;
}

int CsvInt(const std::string& text, const std::string& at, const char* column) {
  size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 0 || value > std::numeric_limits<int>::max()) {
    throw FieldError{at + ", " + column + ": expected an integer from 0 to 2147483647, got '" +
                     text.substr(0, 60) + "'"};
  }
  return static_cast<int>(value);
}

std::optional<Report> ReportFromCsv(const std::string& text, std::string* error) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const bool seeds = line == std::string(kCsvHeader) + kCsvSeedColumns;
  if (line != kCsvHeader && !seeds) {
    *error = "not a report CSV: the first line must be the header " + std::string(kCsvHeader) +
             " (and, from hvdsim --seeds, " + kCsvSeedColumns + ")";
    return std::nullopt;
  }
  const size_t columns = seeds ? 19 : 14;
  Report report;
  report.tool = "csv";
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = SplitCsvLine(line);
    if (f.size() != columns) {
      *error = "line " + std::to_string(number) + ": expected " + std::to_string(columns) +
               " fields, found " + std::to_string(f.size());
      return std::nullopt;
    }
    try {
      const std::string at = "line " + std::to_string(number);
      ReportRun run{f[0],
                    CsvInt(f[1], at, "np"),
                    CsvInt(f[2], at, "batch_size"),
                    f[3],
                    f[4],
                    CsvDouble(f[5], at, "images_per_sec"),
                    CsvDouble(f[6], at, "images_per_sec_ci95"),
                    CsvDouble(f[7], at, "images_per_sec_single"),
                    CsvDouble(f[8], at, "scaling_efficiency"),
                    CsvDouble(f[9], at, "step_time_s"),
                    CsvDouble(f[10], at, "compute_s"),
                    CsvDouble(f[11], at, "exposed_comm_s"),
                    CsvDouble(f[12], at, "negotiation_s"),
                    CsvInt(f[13], at, "steps")};
      if (seeds) {
        run.seeds = CsvInt(f[14], at, "seeds");
        run.images_per_sec_lo = CsvDouble(f[15], at, "images_per_sec_lo");
        run.images_per_sec_hi = CsvDouble(f[16], at, "images_per_sec_hi");
        run.scaling_efficiency_lo = CsvDouble(f[17], at, "scaling_efficiency_lo");
        run.scaling_efficiency_hi = CsvDouble(f[18], at, "scaling_efficiency_hi");
      }
      report.runs.push_back(run);
    } catch (const FieldError& e) {
      *error = e.message;
      return std::nullopt;
    }
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
  if (content[first] == '{' || content[first] == '[') return ReportFromJson(content, error);
  return ReportFromCsv(content, error);
}

FileKind DetectFileKind(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return FileKind::kDirectory;
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
    case FileKind::kUnknown:
      break;
  }
  return "neither a timeline (JSON trace) nor a report (JSON or CSV)";
}

}  // namespace hvdview
