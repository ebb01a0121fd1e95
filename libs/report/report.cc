#include "hvd/report/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iomanip>
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

namespace {

// Where writing `path` lands: through a symbolic link, its target (a link is written
// through, never replaced by a file renamed over it).
std::string landing(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {  // a dangling link too
    const fs::path t = fs::read_symlink(p, ec);
    if (ec) break;
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  return p.string();
}

// `text` into `path` through a temporary file beside it: every write and the close are
// checked, and only a complete file is renamed into place. A failed write leaves the
// previous file (if any) as it was and no partial one. `*target_out`: where it goes.
Status write_whole(const std::string& shown, const std::string& text, std::string* tmp_out = nullptr,
                   std::string* target_out = nullptr) {
  const std::string path = landing(shown);
  if (target_out) *target_out = path;
  // A device or a FIFO is never replaced by a file renamed over it.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    return Status::InvalidArgument("cannot write report '" + shown + "': not a regular file");
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Status::InvalidArgument("cannot write report '" + path + "'");
    f << text;
    f.close();
    if (f.fail()) {
      std::remove(tmp.c_str());
      return Status::Internal("error writing report '" + path + "' (disk full?)");
    }
  }
  if (tmp_out) {  // the caller renames it (several files at once)
    *tmp_out = tmp;
    return Status::OK();
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::Internal("cannot move the report into '" + path + "'");
  }
  return Status::OK();
}

}  // namespace

Status write_json(const std::string& path, const std::string& tool, const std::string& source,
                  const std::vector<RunRecord>& runs, const std::vector<Reference>& reference) {
  return write_whole(path, to_json(tool, source, runs, reference).dump(2) + "\n");
}

Status write_csv(const std::string& path, const std::vector<RunRecord>& runs) {
  return write_whole(path, to_csv(runs));
}

std::string csv_path(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  return (dot == std::string::npos || (slash != std::string::npos && dot < slash)) ? path + ".csv"
                                                                                  : path.substr(0, dot) + ".csv";
}

namespace {

// Why `path` cannot take a file written through a temporary one beside it, or "".
std::string unwritable(const std::string& shown) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(landing(shown));
  if (fs::is_directory(p, ec)) return "a directory";
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) return "a device or a FIFO, not a regular file";
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return "no directory \"" + dir.string().substr(0, 60) + "\"";
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0) return "not writable";
  // The temporary file beside it must be creatable (a read-only or virtual file system
  // refuses even root): try one, then take it away.
  const std::string probe = (dir / (".hvd_report_probe" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return "its directory takes no new file: " + std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

}  // namespace

std::string report_path_problem(const std::string& path, const std::vector<std::pair<std::string, std::string>>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) return "an empty path";
  const std::string csv = csv_path(path);
  if (csv == path)
    return "\"" + path.substr(0, 60) + "\" ends in .csv, the name of the CSV written beside the JSON report; name the JSON file (e.g. \"" +
           path.substr(0, std::min<size_t>(60, path.size() - 4)) + ".json\")";
  for (const std::string& f : {path, csv}) {
    if (const std::string why = unwritable(f); !why.empty())
      return "\"" + f.substr(0, 60) + "\" cannot be written (" + why + ")";
    std::error_code ec;
    for (const auto& [label, in] : inputs)
      if (!in.empty() && fs::equivalent(f, in, ec))
        return "\"" + f.substr(0, 60) + "\" is the " + label + " this run reads";
  }
  return "";
}

Status write_report_files(const std::string& path, const std::string& json, const std::string& csv_text) {
  const std::string csv = csv_path(path);
  // Both files are written in full before either replaces what was there.
  std::string tmp_json, tmp_csv, to_json_file, to_csv_file;
  Status s = write_whole(path, json, &tmp_json, &to_json_file);
  if (s.ok()) s = write_whole(csv, csv_text, &tmp_csv, &to_csv_file);
  // The CSV first: when it cannot take its place, the JSON report has not been touched yet.
  if (s.ok() && (std::rename(tmp_csv.c_str(), to_csv_file.c_str()) != 0 ||
                 std::rename(tmp_json.c_str(), to_json_file.c_str()) != 0))
    s = Status::Internal("cannot move the report into '" + path + "' and '" + csv + "'");
  if (!s.ok()) {
    if (!tmp_json.empty()) std::remove(tmp_json.c_str());
    if (!tmp_csv.empty()) std::remove(tmp_csv.c_str());
  }
  return s;
}

Status write_report(const std::string& path, const std::string& tool, const std::string& source,
                    const std::vector<RunRecord>& runs, const std::vector<Reference>& reference) {
  return write_report_files(path, to_json(tool, source, runs, reference).dump(2) + "\n", to_csv(runs));
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
