// The report record's JSON and CSV, both ways (hvd/report/record.h). One writer for
// hvdbench, hvdsim and hvdsim's worker processes; one reader for hvdview and hvdsim.
#include "hvd/report/record.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <type_traits>

namespace hvd::report {

const char* const kCsvHeader =
    "model,np,batch_size,gpu,label,images_per_sec,images_per_sec_ci95,images_per_sec_single,"
    "scaling_efficiency,step_time_s,compute_s,exposed_comm_s,negotiation_s,steps";
const char* const kCsvSeedColumns =
    ",seeds,images_per_sec_lo,images_per_sec_hi,scaling_efficiency_lo,scaling_efficiency_hi";

// ---- writing -----------------------------------------------------------------------------

nlohmann::json to_json(const RunRecord& r) {
  nlohmann::json j = {{"model", r.model},
                      {"np", r.np},
                      {"batch_size", r.batch_size},
                      {"gpu", r.gpu},
                      {"label", r.label},
                      {"images_per_sec", r.images_per_sec},
                      {"images_per_sec_ci95", r.images_per_sec_ci95},
                      {"images_per_sec_single", r.images_per_sec_single},
                      {"scaling_efficiency", r.scaling_efficiency},
                      {"step_time_s", r.step_time_s},
                      {"compute_s", r.compute_s},
                      {"exposed_comm_s", r.exposed_comm_s},
                      {"negotiation_s", r.negotiation_s},
                      {"steps", r.steps},
                      {"knobs", r.knobs}};
  if (r.seeds > 1) {  // hvdsim --seeds K: the range over the K draws (K = 1: as before)
    j["seeds"] = r.seeds;
    j["images_per_sec_lo"] = r.images_per_sec_lo;
    j["images_per_sec_hi"] = r.images_per_sec_hi;
    j["scaling_efficiency_lo"] = r.scaling_efficiency_lo;
    j["scaling_efficiency_hi"] = r.scaling_efficiency_hi;
  }
  if (r.seq_len > 0) {  // sequence workloads that name their length (before: not written)
    j["seq_len"] = r.seq_len;
    j["tokens_per_sec"] = r.tokens_per_sec;
    j["sharding"] = r.sharding;
  }
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : r.collectives)
    cs.push_back({{"op", c.op},
                  {"calls", c.calls},
                  {"bytes", c.bytes},
                  {"time_s", c.time_s},
                  {"algbw_gbps", c.algbw_gbps},
                  {"busbw_gbps", c.busbw_gbps}});
  j["collectives"] = cs;
  return j;
}

nlohmann::json to_json(const Reference& p) {
  return {{"model", p.model}, {"np", p.np}, {"scaling_efficiency", p.scaling_efficiency}, {"source", p.source}};
}

nlohmann::json to_json(const std::string& tool, const std::string& source, const std::vector<RunRecord>& runs,
                       const std::vector<Reference>& reference) {
  nlohmann::json j = {{"tool", tool}, {"version", kReportVersion}, {"source", source}};
  j["runs"] = nlohmann::json::array();
  for (const auto& r : runs) j["runs"].push_back(to_json(r));
  for (const auto& p : reference) j["reference"].push_back(to_json(p));
  return j;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string to_csv(const std::vector<RunRecord>& runs) {
  std::ostringstream f;
  f << kCsvHeader;
  bool seeds = false;
  for (const auto& r : runs) seeds = seeds || r.seeds > 1;
  f << (seeds ? std::string(kCsvSeedColumns) + "\n" : "\n");
  char buf[512];
  for (const auto& r : runs) {
    std::snprintf(buf, sizeof buf, "%d,%d,", r.np, r.batch_size);
    f << csv_field(r.model) << ',' << buf << csv_field(r.gpu) << ',' << csv_field(r.label);
    std::snprintf(buf, sizeof buf, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d", r.images_per_sec,
                  r.images_per_sec_ci95, r.images_per_sec_single, r.scaling_efficiency,
                  r.step_time_s, r.compute_s, r.exposed_comm_s, r.negotiation_s, r.steps);
    f << buf;
    if (seeds) {
      std::snprintf(buf, sizeof buf, ",%d,%.6g,%.6g,%.6g,%.6g", r.seeds, r.images_per_sec_lo, r.images_per_sec_hi,
                    r.scaling_efficiency_lo, r.scaling_efficiency_hi);
      f << buf;
    }
    f << '\n';
  }
  return f.str();
}

// ---- reading JSON ------------------------------------------------------------------------

namespace {

// Reads run[key] into *out: a string, an integer from 0 to the type's maximum (converting
// 1e30 or 2^40 to int is undefined), or a number. Absent or null: left as is, unless required.
template <typename T>
void read_field(const nlohmann::json& run, const std::string& path, const char* key, T* out, bool required) {
  auto it = run.find(key);
  if (it == run.end() || it->is_null()) {
    if (required) throw RecordError(path + "." + key + ": missing");
    return;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) throw RecordError(path + "." + key + ": expected a string");
    *out = it->template get<std::string>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!it->is_number()) throw RecordError(path + "." + key + ": expected a number, got " + it->type_name());
    constexpr auto max = std::numeric_limits<T>::max();
    const bool fits = it->is_number_integer() &&
                      (it->is_number_unsigned() ? it->template get<uint64_t>() <= static_cast<uint64_t>(max)
                                                : it->template get<int64_t>() >= 0 &&
                                                      it->template get<int64_t>() <= static_cast<int64_t>(max));
    if (!fits) {
      throw RecordError(path + "." + key + ": expected an integer from 0 to " + std::to_string(max) + ", got " +
                        it->dump().substr(0, 60));
    }
    *out = it->template get<T>();
  } else {
    if (!it->is_number()) throw RecordError(path + "." + key + ": expected a number, got " + it->type_name());
    *out = it->template get<T>();
  }
}

void read_knobs(const nlohmann::json& run, const std::string& path, std::map<std::string, std::string>* out) {
  auto it = run.find("knobs");
  if (it == run.end() || it->is_null()) return;
  if (!it->is_object()) throw RecordError(path + ".knobs: expected an object");
  for (const auto& [name, value] : it->items()) read_field(*it, path + ".knobs", name.c_str(), &(*out)[name], true);
}

void read_collectives(const nlohmann::json& run, const std::string& path, std::vector<CollectiveRecord>* out) {
  auto it = run.find("collectives");
  if (it == run.end() || it->is_null()) return;
  if (!it->is_array()) throw RecordError(path + ".collectives: expected an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& c = (*it)[i];
    const std::string at = path + ".collectives[" + std::to_string(i) + "]";
    if (!c.is_object()) throw RecordError(at + ": expected an object");
    CollectiveRecord cr;
    read_field(c, at, "op", &cr.op, true);
    read_field(c, at, "calls", &cr.calls, false);
    read_field(c, at, "bytes", &cr.bytes, false);
    read_field(c, at, "time_s", &cr.time_s, false);
    read_field(c, at, "algbw_gbps", &cr.algbw_gbps, false);
    read_field(c, at, "busbw_gbps", &cr.busbw_gbps, false);
    out->push_back(cr);
  }
}

}  // namespace

RunRecord run_from_json(const nlohmann::json& j, const std::string& path, RecordParts parts) {
  if (!j.is_object()) throw RecordError(path + ": expected an object");
  RunRecord run;
  read_field(j, path, "model", &run.model, true);
  read_field(j, path, "np", &run.np, true);
  read_field(j, path, "batch_size", &run.batch_size, false);
  read_field(j, path, "gpu", &run.gpu, false);
  read_field(j, path, "label", &run.label, false);
  read_field(j, path, "images_per_sec", &run.images_per_sec, true);
  read_field(j, path, "images_per_sec_ci95", &run.images_per_sec_ci95, false);
  read_field(j, path, "images_per_sec_single", &run.images_per_sec_single, false);
  read_field(j, path, "scaling_efficiency", &run.scaling_efficiency, false);
  read_field(j, path, "step_time_s", &run.step_time_s, false);
  read_field(j, path, "compute_s", &run.compute_s, false);
  read_field(j, path, "exposed_comm_s", &run.exposed_comm_s, false);
  read_field(j, path, "negotiation_s", &run.negotiation_s, false);
  read_field(j, path, "steps", &run.steps, false);
  read_field(j, path, "seeds", &run.seeds, false);
  read_field(j, path, "images_per_sec_lo", &run.images_per_sec_lo, false);
  read_field(j, path, "images_per_sec_hi", &run.images_per_sec_hi, false);
  read_field(j, path, "scaling_efficiency_lo", &run.scaling_efficiency_lo, false);
  read_field(j, path, "scaling_efficiency_hi", &run.scaling_efficiency_hi, false);
  read_field(j, path, "seq_len", &run.seq_len, false);
  read_field(j, path, "tokens_per_sec", &run.tokens_per_sec, false);
  read_field(j, path, "sharding", &run.sharding, false);
  if (parts == RecordParts::kAll) {
    read_knobs(j, path, &run.knobs);
    read_collectives(j, path, &run.collectives);
  }
  return run;
}

Reference reference_from_json(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw RecordError(path + ": expected an object");
  Reference ref;
  read_field(j, path, "model", &ref.model, true);
  read_field(j, path, "np", &ref.np, true);
  read_field(j, path, "scaling_efficiency", &ref.scaling_efficiency, true);
  read_field(j, path, "source", &ref.source, false);
  if (!std::isfinite(ref.scaling_efficiency)) throw RecordError(path + ".scaling_efficiency: expected a finite number");
  return ref;
}

std::optional<nlohmann::json> parse_json_text(const std::string& text, std::string* error) {
  // nlohmann quotes the whole token read so far ("last read: ..."): keep one short line.
  auto shortened = [](const char* what) {
    std::string w = what;
    return w.size() > 200 ? w.substr(0, 200) + "..." : w;
  };
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    *error = "invalid JSON at byte " + std::to_string(e.byte) + ": " + shortened(e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number beyond double (1e400)
    *error = "invalid JSON: " + shortened(e.what());
  }
  return std::nullopt;
}

std::optional<ReportDocument> document_from_json(const std::string& text, std::string* error, RecordParts parts) {
  const std::optional<nlohmann::json> parsed = parse_json_text(text, error);
  if (!parsed) return std::nullopt;
  const nlohmann::json& json = *parsed;
  if (!json.is_object() || !json.contains("runs") || !json["runs"].is_array()) {
    *error = "not a report: expected an object with a \"runs\" array";
    return std::nullopt;
  }
  ReportDocument report;
  try {
    read_field(json, "report", "tool", &report.tool, false);
    read_field(json, "report", "version", &report.version, false);
    read_field(json, "report", "source", &report.source, false);
    const auto& runs = json["runs"];
    for (size_t i = 0; i < runs.size(); ++i)
      report.runs.push_back(run_from_json(runs[i], "runs[" + std::to_string(i) + "]", parts));
    if (json.contains("reference") && !json["reference"].is_null()) {
      const auto& refs = json["reference"];
      if (!refs.is_array()) throw RecordError("reference: expected an array");
      for (size_t i = 0; i < refs.size(); ++i)
        report.reference.push_back(reference_from_json(refs[i], "reference[" + std::to_string(i) + "]"));
    }
  } catch (const RecordError& e) {
    *error = e.what();
    return std::nullopt;
  }
  return report;
}

// ---- reading CSV -------------------------------------------------------------------------

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      field.push_back('"');  // RFC 4180: a doubled quote inside quotes is one quote
      ++i;
    } else if (c == '"') {
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

// A CSV field as a finite number / an integer from 0 to INT_MAX, else a RecordError naming
// the line, the column and the (cut) text.
double csv_double(const std::string& text, const std::string& at, const char* column) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw RecordError(at + ", " + column + ": expected a finite number, got '" + text.substr(0, 60) + "'");
  return value;
}

int csv_int(const std::string& text, const std::string& at, const char* column) {
  size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 0 || value > std::numeric_limits<int>::max()) {
    throw RecordError(at + ", " + column + ": expected an integer from 0 to 2147483647, got '" + text.substr(0, 60) +
                      "'");
  }
  return static_cast<int>(value);
}

}  // namespace

std::optional<ReportDocument> document_from_csv(const std::string& text, std::string* error) {
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
  ReportDocument report;
  report.tool = "csv";
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = split_csv_line(line);
    if (f.size() != columns) {
      *error = "line " + std::to_string(number) + ": expected " + std::to_string(columns) + " fields, found " +
               std::to_string(f.size());
      return std::nullopt;
    }
    try {
      const std::string at = "line " + std::to_string(number);
      RunRecord run;
      run.model = f[0];
      run.np = csv_int(f[1], at, "np");
      run.batch_size = csv_int(f[2], at, "batch_size");
      run.gpu = f[3];
      run.label = f[4];
      run.images_per_sec = csv_double(f[5], at, "images_per_sec");
      run.images_per_sec_ci95 = csv_double(f[6], at, "images_per_sec_ci95");
      run.images_per_sec_single = csv_double(f[7], at, "images_per_sec_single");
      run.scaling_efficiency = csv_double(f[8], at, "scaling_efficiency");
      run.step_time_s = csv_double(f[9], at, "step_time_s");
      run.compute_s = csv_double(f[10], at, "compute_s");
      run.exposed_comm_s = csv_double(f[11], at, "exposed_comm_s");
      run.negotiation_s = csv_double(f[12], at, "negotiation_s");
      run.steps = csv_int(f[13], at, "steps");
      if (seeds) {
        run.seeds = csv_int(f[14], at, "seeds");
        run.images_per_sec_lo = csv_double(f[15], at, "images_per_sec_lo");
        run.images_per_sec_hi = csv_double(f[16], at, "images_per_sec_hi");
        run.scaling_efficiency_lo = csv_double(f[17], at, "scaling_efficiency_lo");
        run.scaling_efficiency_hi = csv_double(f[18], at, "scaling_efficiency_hi");
      }
      report.runs.push_back(run);
    } catch (const RecordError& e) {
      *error = e.what();
      return std::nullopt;
    }
  }
  return report;
}

}  // namespace hvd::report
