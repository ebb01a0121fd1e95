// Scenario loading: JSON text -> overrides -> sweep expansion -> one ScenarioPoint each.
#include "hvd/sim/scenario.h"

#include <fstream>
#include <sstream>

#include "scenario_json.h"

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

// Sets doc[a][b][c] = value for path "a.b.c", creating objects on the way.
void set_path(json& doc, const std::string& path, const json& value, const std::string& what) {
  std::vector<std::string> parts = split_path(path);
  if (parts.empty() || path.back() == '.')
    throw ScenarioError(what, "\"" + path + "\" is not a path like cluster.network.bandwidth");
  json* cur = &doc;
  std::string walked;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) throw ScenarioError(what, "\"" + path + "\" has an empty component");
    if (cur->is_null()) *cur = json::object();
    if (!cur->is_object())
      throw ScenarioError(walked, show_json(*cur) + " is not an object, so " + what + " cannot set \"" + path + "\"");
    walked += (walked.empty() ? "" : ".") + parts[i];
    if (i + 1 == parts.size()) (*cur)[parts[i]] = value;
    else cur = &(*cur)[parts[i]];
  }
}

json value_of(const std::string& text) {
  json v = json::parse(text, nullptr, false);
  if (v.is_discarded()) return json(text);
  return v;
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
    } else {
      throw ScenarioError(p, "unknown sweep axis; expected np, a runtime knob (fusion_threshold, "
                             "cycle_time_ms, ...) or a scenario path (cluster.network.bandwidth)");
    }
    if (!v.is_array() || v.empty()) throw ScenarioError(p, show_json(v) + " is not a non-empty array of values");
    a.values.assign(v.begin(), v.end());
    points *= a.values.size();
    if (points > 4096) throw ScenarioError(p, "the sweep has more than 4096 points");
    axes.push_back(std::move(a));
  }
  return axes;
}

}  // namespace

Status parse_scenario(const std::string& text, const std::string& source,
                      const std::vector<std::string>& overrides, Scenario* out) {
  *out = Scenario{};
  out->source = source;
  try {
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
      // Re-parse with exceptions for the position of the error.
      try {
        const json again = json::parse(text);
        (void)again;
      } catch (const json::exception& e) {
        throw ScenarioError("", std::string("not valid JSON: ") + e.what());
      }
      throw ScenarioError("", "not valid JSON");
    }
    if (!doc.is_object()) throw ScenarioError("", show_json(doc) + " is not a scenario object");
    for (const std::string& o : overrides) {
      const size_t eq = o.find('=');
      if (eq == std::string::npos || eq == 0)
        throw ScenarioError("--set " + o, "expected path=value (e.g. cluster.network.bandwidth=40Gbps)");
      const std::string path = o.substr(0, eq);
      if (path.rfind("sweep.", 0) == 0 && path.size() > 6) {  // sweep axes may contain dots
        if (!doc.contains("sweep") || doc["sweep"].is_null()) doc["sweep"] = json::object();
        if (!doc["sweep"].is_object()) throw ScenarioError("sweep", show_json(doc["sweep"]) + " is not an object");
        doc["sweep"][path.substr(6)] = value_of(o.substr(eq + 1));
        continue;
      }
      set_path(doc, path, value_of(o.substr(eq + 1)), "--set");
    }
    if (doc.contains("name") && doc["name"].is_string()) out->name = doc["name"].get<std::string>();
    apply_calibration(doc, source);
    const auto what_ifs = what_if_points(doc);
    std::vector<Axis> axes = sweep_axes(doc);
    size_t total = 1;
    for (const Axis& a : axes) total *= a.values.size();
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
          const std::string where = w > 0 ? "what-if " + what_ifs[w - 1].first +
                                                (label.empty() ? "" : ", sweep point " + label)
                                          : "sweep point " + label;
          throw ScenarioError("", std::string(e.what()) + " (" + where + ")");
        }
        pt.label = lw;
        if (w > 0) pt.what_if = what_ifs[w - 1].first;
        out->points.push_back(std::move(pt));
      }
    }
  } catch (const ScenarioError& e) {
    return Status::InvalidArgument(source + ": " + one_line(e.what()));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(source + ": " + one_line(e.what()));
  }
  return Status::OK();
}

Status load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                     Scenario* out) {
  std::ifstream f(path);
  if (!f) return Status::InvalidArgument(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_scenario(ss.str(), path, overrides, out);
}

}  // namespace hvd::sim
