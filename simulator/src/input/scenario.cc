// Scenario loading: JSON text -> overrides -> sweep expansion -> one ScenarioPoint each.
#include "hvd/sim/scenario.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "input/scenario_json.h"

namespace hvd::sim {

using nlohmann::json;

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  std::string p;
  while (std::getline(ss, p, '.')) parts.push_back(p);
  return parts;
}

// The most points (sweep points x what-ifs) a scenario may have; the most simulations by
// default (sweep.max_runs raises it) and at all.
constexpr size_t kMaxPoints = 4096;
constexpr size_t kDefaultMaxRuns = 1024;
constexpr size_t kMaxMaxRuns = 1 << 20;

// The most keys a --set, sweep or what-if path may have (the document is no deeper anyway).
constexpr size_t kMaxPathParts = 16;

// Sets doc[a][b][c] = value for path "a.b.c", creating objects on the way.
void set_path(json& doc, const std::string& path, const json& value, const std::string& what) {
  std::vector<std::string> parts = split_path(path);
  const std::string shown = show_json(path);
  if (parts.empty() || path.back() == '.')
    throw ScenarioError(what, shown + " is not a path like cluster.network.bandwidth");
  if (parts.size() > kMaxPathParts)
    throw ScenarioError(what, shown + " is not a path of at most " + std::to_string(kMaxPathParts) + " keys");
  json* cur = &doc;
  std::string walked;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) throw ScenarioError(what, shown + " has an empty component");
    if (cur->is_null()) *cur = json::object();
    if (!cur->is_object())
      throw ScenarioError(walked, show_json(*cur) + " is not an object, so " + what + " cannot set " + shown);
    walked += (walked.empty() ? "" : ".") + parts[i];
    if (i + 1 < parts.size()) {
      cur = &(*cur)[parts[i]];
      continue;
    }
    (*cur)[parts[i]] = value;
    // workload.model, workload.models and workload.trace say the same thing: setting one
    // replaces the others (a scenario with "models" and --set workload.model=vgg16 runs
    // vgg16 alone; --set workload.trace=run.json the recorded trace alone).
    for (const char* spelling : {"model", "models", "trace"})
      if (walked == std::string("workload.") + spelling)
        for (const char* other : {"model", "models", "trace"})
          if (std::string(other) != spelling) cur->erase(other);
  }
}

// A --set value: JSON when it parses as JSON (within the same bounds as a scenario), else
// the text as a string.
json value_of(const std::string& text, const std::string& what) {
  try {
    return parse_json_strict(text);
  } catch (const ScenarioError& e) {
    if (std::string(e.what()).rfind("not valid JSON", 0) == 0) return json(text);
    throw ScenarioError(what, e.what());
  }
}

std::string show_value(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

bool is_knob(const std::string& k) {
  Config c;
  Status s = c.set(k, "");
  return s.message().find("unknown knob") == std::string::npos;
}

struct Axis {
  std::string key;    // as written in the sweep
  std::string path;   // where it goes
  std::vector<json> values;
};

// The error is one line whatever the document's keys hold: a key may contain "\n" (found
// by scenario_fuzzer: an unknown sweep axis echoed a key with a newline).
std::string one_line(std::string message) {
  for (char& c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return message;
}

std::vector<Axis> sweep_axes(const json& doc) {
  std::vector<Axis> axes;
  if (!doc.contains("sweep")) return axes;
  const json& sw = doc["sweep"];
  if (!sw.is_object()) throw ScenarioError("sweep", show_json(sw) + " is not an object of axis: [values]");
  size_t points = 1;
  for (const auto& [k, v] : sw.items()) {
    if (k == "np") continue;
    const std::string p = "sweep." + k;
    Axis a;
    a.key = k;
    if (k.find('.') != std::string::npos) {
      a.path = k;
      if (k.rfind("sweep.", 0) == 0) throw ScenarioError(p, "a sweep cannot sweep itself");
    } else if (is_knob(k)) {
      a.path = "runtime." + k;
    } else if (k == "max_runs") {
      continue;  // not an axis: the limit on simulations (max_runs_of)
    } else {
      throw ScenarioError(p, "unknown sweep axis; expected np, max_runs, a runtime knob (fusion_threshold, "
                             "cycle_time_ms, ...) or a scenario path (cluster.network.bandwidth)");
    }
    if (!v.is_array() || v.empty()) throw ScenarioError(p, show_json(v) + " is not a non-empty array of values");
    std::set<json> seen;  // a value given twice is one point (the first place counts)
    for (const json& x : v)
      if (seen.insert(x).second) a.values.push_back(x);
    points *= a.values.size();
    if (points > kMaxPoints) throw ScenarioError(p, "the sweep has more than " + std::to_string(kMaxPoints) + " points");
    axes.push_back(std::move(a));
  }
  return axes;
}

// sweep.max_runs: the most simulations a scenario may ask for (docs/formats.md).
size_t max_runs_of(const json& doc) {
  if (!doc.contains("sweep") || !doc["sweep"].is_object() || !doc["sweep"].contains("max_runs"))
    return kDefaultMaxRuns;
  const json& m = doc["sweep"]["max_runs"];
  if (!m.is_number_unsigned() || m.get<uint64_t>() < 1 || m.get<uint64_t>() > kMaxMaxRuns)
    throw ScenarioError("sweep.max_runs", show_json(m) + " is not an integer in [1, " +
                                              std::to_string(kMaxMaxRuns) + "]");
  return m.get<size_t>();
}

ScenarioError too_many_runs(size_t runs, size_t max_runs, const char* at_least, bool seeds = false) {
  return ScenarioError("sweep", std::string(at_least) + std::to_string(runs) +
                                    " simulations (each model at each np, the np=1 baseline included, at each "
                                    "point" + (seeds ? ", times simulation.seeds" : "") + ") is not at most sweep.max_runs (" +
                                    std::to_string(max_runs) + "); raise it to run them all");
}

// Drops what the points do not read from `doc` once it has been applied (the what-ifs, the
// sweep's axes, the calibration reference, the description) and makes sweep.np's values
// distinct, keeping the first of each: a rank count given twice is simulated once.
void shrink_for_points(json& doc) {
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) throw ScenarioError("description", show_json(doc["description"]) + " is not a string");
    doc.erase("description");
  }
  doc.erase("what_if");
  doc.erase("calibration");
  doc.erase("reference");
  if (!doc.contains("sweep")) return;
  if (!doc["sweep"].is_object() || !doc["sweep"].contains("np")) {
    doc.erase("sweep");
    return;
  }
  json np = std::move(doc["sweep"]["np"]);
  if (np.is_array()) {
    json distinct = json::array();
    std::set<json> seen;
    for (json& v : np)
      if (seen.insert(v).second) distinct.push_back(std::move(v));
    np = std::move(distinct);
  }
  doc["sweep"] = json{{"np", std::move(np)}};
}

}  // namespace

Status parse_scenario(const std::string& text, const std::string& source,
                      const std::vector<std::string>& overrides, Scenario* out) {
  *out = Scenario{};
  out->source = source;
  try {
    json doc = parse_json_strict(text);
    if (!doc.is_object()) throw ScenarioError("", show_json(doc) + " is not a scenario object");
    for (const std::string& o : overrides) {
      const size_t eq = o.find('=');
      if (eq == std::string::npos || eq == 0)
        throw ScenarioError("--set " + cut(o), "expected path=value (e.g. cluster.network.bandwidth=40Gbps)");
      const std::string path = o.substr(0, eq);
      const json value = value_of(o.substr(eq + 1), "--set " + path);
      if (path.rfind("sweep.", 0) == 0 && path.size() > 6) {  // sweep axes may contain dots
        if (!doc.contains("sweep") || doc["sweep"].is_null()) doc["sweep"] = json::object();
        if (!doc["sweep"].is_object()) throw ScenarioError("sweep", show_json(doc["sweep"]) + " is not an object");
        doc["sweep"][path.substr(6)] = value;
        continue;
      }
      set_path(doc, path, value, "--set");
    }
    if (doc.contains("name") && doc["name"].is_string()) out->name = doc["name"].get<std::string>();
    apply_calibration(doc, source);
    if (doc.contains("reference")) out->reference = read_reference(doc["reference"]);
    const auto what_ifs = what_if_points(doc);
    std::vector<Axis> axes = sweep_axes(doc);
    size_t total = 1;
    for (const Axis& a : axes) total *= a.values.size();
    const size_t max_runs = max_runs_of(doc);
    if (total * (what_ifs.size() + 1) > kMaxPoints)
      throw ScenarioError("what_if", std::to_string(total) + " sweep points x " +
                                         std::to_string(what_ifs.size() + 1) +
                                         " (the baseline and each what-if) is not at most " +
                                         std::to_string(kMaxPoints) + " points");
    // Every point is a copy of the document: only what read_point reads is copied.
    shrink_for_points(doc);
    const json::json_pointer np_at("/sweep/np");
    const size_t nps = doc.contains(np_at) && doc.at(np_at).is_array() ? doc.at(np_at).size() : 1;
    if (total * (what_ifs.size() + 1) * std::max<size_t>(1, nps) > max_runs)
      throw too_many_runs(total * (what_ifs.size() + 1) * nps, max_runs, "at least ");
    for (size_t i = 0; i < total; ++i) {
      json d = doc;
      std::string label;
      size_t rest = i;
      for (size_t k = axes.size(); k-- > 0;) {  // last axis varies fastest
        const Axis& a = axes[k];
        const json& v = a.values[rest % a.values.size()];
        rest /= a.values.size();
        set_path(d, a.path, v, "sweep." + a.key);
        label = a.key + "=" + show_value(v) + (label.empty() ? "" : "," + label);
      }
      // The point itself, then each what-if applied to it.
      for (size_t w = 0; w <= what_ifs.size(); ++w) {
        json dw = d;
        std::string lw = label;
        if (w > 0) {
          const auto& [name, set] = what_ifs[w - 1];
          for (const auto& [path, value] : set.items())
            set_path(dw, path, value, "what_if[" + std::to_string(w - 1) + "].set");
          lw += (lw.empty() ? "" : ",") + name;
        }
        ScenarioPoint pt;
        try {
          read_point(dw, &pt);
        } catch (const ScenarioError& e) {
          if (lw.empty()) throw;
          const std::string where = w > 0 ? "what-if " + cut(what_ifs[w - 1].first) +
                                                (label.empty() ? "" : ", sweep point " + cut(label))
                                          : "sweep point " + cut(label);
          throw ScenarioError("", std::string(e.what()) + " (" + where + ")");
        }
        pt.label = lw;
        if (w > 0) pt.what_if = what_ifs[w - 1].first;
        out->points.push_back(std::move(pt));
      }
    }
    size_t runs = 0;
    bool seeds = false;  // hvdsim --seeds K: K simulations each
    for (const ScenarioPoint& pt : out->points) {
      runs += pt.workload.models.size() * static_cast<size_t>(pt.seeds) *
              (pt.np.size() + (std::find(pt.np.begin(), pt.np.end(), 1) == pt.np.end() ? 1 : 0));
      seeds = seeds || pt.seeds > 1;
    }
    if (runs > max_runs) throw too_many_runs(runs, max_runs, "", seeds);
  } catch (const std::exception& e) {  // ScenarioError, or a library's (cut: never huge)
    out->points.clear();
    return Status::InvalidArgument(one_line(cut(source, 200) + ": " + cut(e.what(), 2000)));
  }
  return Status::OK();
}

Status load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                     Scenario* out) {
  std::string text;
  if (const std::string bad = read_input_file(path, &text); !bad.empty())
    return Status::InvalidArgument(cut(path, 200) + ": cannot open the scenario file: it " + bad);
  return parse_scenario(text, path, overrides, out);
}

}  // namespace hvd::sim
