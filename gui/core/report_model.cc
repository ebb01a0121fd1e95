#include "core/report_model.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hvdview {
namespace {

const char* const kCsvHeader =
    "model,np,batch_size,gpu,label,images_per_sec,images_per_sec_ci95,images_per_sec_single,"
    "scaling_efficiency,step_time_s,compute_s,exposed_comm_s,negotiation_s,steps";

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
  return run;
}

std::optional<Report> ReportFromJson(const std::string& text, std::string* error) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    *error = "invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what();
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

std::optional<Report> ReportFromCsv(const std::string& text, std::string* error) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != kCsvHeader) {
    *error = "not a report CSV: the first line must be the header " + std::string(kCsvHeader);
    return std::nullopt;
  }
  Report report;
  report.tool = "csv";
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = SplitCsvLine(line);
    if (f.size() != 14) {
      *error = "line " + std::to_string(number) + ": expected 14 fields, found " +
               std::to_string(f.size());
      return std::nullopt;
    }
    try {
      ReportRun run{f[0],
                    std::stoi(f[1]),
                    std::stoi(f[2]),
                    f[3],
                    f[4],
                    std::stod(f[5]),
                    std::stod(f[6]),
                    std::stod(f[7]),
                    std::stod(f[8]),
                    std::stod(f[9]),
                    std::stod(f[10]),
                    std::stod(f[11]),
                    std::stod(f[12]),
                    std::stoi(f[13])};
      report.runs.push_back(run);
    } catch (const std::exception&) {
      *error = "line " + std::to_string(number) + ": a numeric field is not a number";
      return std::nullopt;
    }
  }
  return report;
}

}  // namespace

std::optional<Report> LoadReport(const std::string& path, std::string* error) {
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
