#include "hvd/report/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hvd::report {

double busbw_factor(const std::string& op, int n) {
  if (n <= 1) return op == "broadcast" ? 1.0 : 0.0;
  const double dn = n;
  if (op == "allreduce") return 2.0 * (dn - 1) / dn;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall") return (dn - 1) / dn;
  return 1.0;
}

void fill_bandwidth(CollectiveRecord* c, int n) {
  c->algbw_gbps = c->time_s > 0 ? static_cast<double>(c->bytes) / c->time_s / 1e9 : 0;
  c->busbw_gbps = c->algbw_gbps * busbw_factor(c->op, n);
}

namespace {

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

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

bool any_seeds(const std::vector<RunRecord>& runs) {
  for (const auto& r : runs)
    if (r.seeds > 1) return true;
  return false;
}

// The published point for a record's model and np, or null.
const Reference* published(const std::vector<Reference>& reference, const RunRecord& r) {
  for (const auto& p : reference)
    if (p.model == r.model && p.np == r.np) return &p;
  return nullptr;
}

}  // namespace

Status write_json(const std::string& path, const std::string& tool, const std::string& source,
                  const std::vector<RunRecord>& runs, const std::vector<Reference>& reference) {
  nlohmann::json j = {{"tool", tool}, {"version", "0.1.0"}, {"source", source}};
  j["runs"] = nlohmann::json::array();
  for (const auto& r : runs) j["runs"].push_back(to_json(r));
  for (const auto& p : reference)
    j["reference"].push_back({{"model", p.model}, {"np", p.np}, {"scaling_efficiency", p.scaling_efficiency},
                              {"source", p.source}});
  std::ofstream f(path);
  if (!f) return Status::InvalidArgument("cannot write report '" + path + "'");
  f << j.dump(2) << '\n';
  return f.good() ? Status::OK() : Status::Internal("error writing report '" + path + "'");
}

Status write_csv(const std::string& path, const std::vector<RunRecord>& runs) {
  std::ofstream f(path);
  if (!f) return Status::InvalidArgument("cannot write report '" + path + "'");
  f << "model,np,batch_size,gpu,label,images_per_sec,images_per_sec_ci95,images_per_sec_single,"
       "scaling_efficiency,step_time_s,compute_s,exposed_comm_s,negotiation_s,steps";
  const bool seeds = any_seeds(runs);
  f << (seeds ? ",seeds,images_per_sec_lo,images_per_sec_hi,scaling_efficiency_lo,scaling_efficiency_hi\n" : "\n");
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
  return f.good() ? Status::OK() : Status::Internal("error writing report '" + path + "'");
}

Status write_report(const std::string& path, const std::string& tool, const std::string& source,
                    const std::vector<RunRecord>& runs, const std::vector<Reference>& reference) {
  Status s = write_json(path, tool, source, runs, reference);
  if (!s.ok()) return s;
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  std::string csv = (dot == std::string::npos || (slash != std::string::npos && dot < slash))
                        ? path + ".csv"
                        : path.substr(0, dot) + ".csv";
  return write_csv(csv, runs);
}

void add_autotune_knobs(const AutotuneState& t, int tuning_steps, std::map<std::string, std::string>* k) {
  std::ostringstream cycle;
  cycle << t.cycle_time_ms;
  (*k)["autotune.done"] = t.done ? "true" : "false";
  (*k)["autotune.samples"] = std::to_string(t.samples);
  (*k)["autotune.tuning_steps"] = std::to_string(tuning_steps);
  (*k)["autotune.fusion_threshold"] = std::to_string(t.fusion_threshold);
  (*k)["autotune.cycle_time_ms"] = cycle.str();
  (*k)["autotune.cache"] = t.cache_enabled ? "true" : "false";
  (*k)["autotune.hierarchical_allreduce"] = t.hierarchical_allreduce ? "true" : "false";
  (*k)["autotune.hierarchical_allgather"] = t.hierarchical_allgather ? "true" : "false";
}

std::string format_table(const std::vector<RunRecord>& runs, const std::vector<Reference>& reference) {
  // hvdsim --seeds K: the mean, then [min-max] over the K draws; published efficiencies
  // (scenario "reference") at the end of the rows they match, sources under the table.
  const bool seeds = any_seeds(runs);
  std::vector<std::string> sources;
  for (const auto& r : runs)
    if (const Reference* p = published(reference, r);
        p && std::find(sources.begin(), sources.end(), p->source) == sources.end())
      sources.push_back(p->source);
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %6s %-18s %12s", "model", "np", "label", "images/s");
  os << line;
  if (seeds) os << " [min-max]      ";
  os << "      eff";
  if (seeds) os << " [min-max]    ";
  std::snprintf(line, sizeof line, " %10s %10s %10s %10s", "step_ms", "compute_ms", "exposed_ms", "negot_ms");
  os << line << (sources.empty() ? "" : "  published (sim - published)") << "\n";
  for (const auto& r : runs) {
    // With bands, whole images/s like the band's (a mean of 118.5 in [119-119] reads wrong).
    std::snprintf(line, sizeof line, seeds ? "%-12s %6d %-18s %12.0f" : "%-12s %6d %-18s %12.1f", r.model.c_str(),
                  r.np, r.label.empty() ? "-" : r.label.c_str(), r.images_per_sec);
    os << line;
    if (seeds) {
      std::snprintf(line, sizeof line, "[%.0f-%.0f]", r.images_per_sec_lo, r.images_per_sec_hi);
      os << " " << std::left << std::setw(15) << (r.seeds > 1 ? line : "-");
    }
    std::snprintf(line, sizeof line, " %7.1f%%", 100.0 * r.scaling_efficiency);
    os << line;
    if (seeds) {
      std::snprintf(line, sizeof line, "[%.1f-%.1f]", 100.0 * r.scaling_efficiency_lo, 100.0 * r.scaling_efficiency_hi);
      os << " " << std::left << std::setw(13) << (r.seeds > 1 ? line : "-");
    }
    std::snprintf(line, sizeof line, " %10.2f %10.2f %10.2f %10.2f", r.step_time_s * 1e3, r.compute_s * 1e3,
                  r.exposed_comm_s * 1e3, r.negotiation_s * 1e3);
    os << line;
    if (const Reference* p = published(reference, r)) {
      std::snprintf(line, sizeof line, "  published %5.1f%% (%+.1f)", 100.0 * p->scaling_efficiency,
                    100.0 * (r.scaling_efficiency - p->scaling_efficiency));
      os << line;
    }
    os << "\n";
  }
  for (const std::string& s : sources)
    os << "published: " << (s.size() > 120 ? s.substr(0, 117) + "..." : s) << "\n";
  return os.str();
}

}  // namespace hvd::report
