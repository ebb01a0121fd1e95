// "calibration": a file written by `hvdbench --calibrate` sets the model's link, device and
// wake-up parameters. Values are merged into the scenario document under what the scenario
// (or --set, or a sweep) says explicitly, so explicit values win; the loader then checks them
// as if they had been written by hand. "what_if": extra points, each the base scenario with
// some values set.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "input/scenario_json.h"

namespace hvd::sim {

using nlohmann::json;

namespace {

std::string fmt(double v, const char* unit) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6f%s", v, unit);
  return b;
}

// The number at `key` of `obj` (path `path` in file `file`), > 0 (or >= 0 if allowed).
double number(const json& obj, const std::string& file, const std::string& path, const char* key,
              bool allow_zero = false) {
  const std::string p = file + ": " + (path.empty() ? "" : path + ".") + key;
  if (!obj.is_object() || !obj.contains(key))
    throw ScenarioError("calibration", p + ": missing; expected a number");
  const json& v = obj[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      (!allow_zero && v.get<double>() == 0))
    throw ScenarioError("calibration", p + ": " + show_json(v) + " is not a number " +
                                           (allow_zero ? ">= 0" : "> 0"));
  return v.get<double>();
}

// A [bytes, factor] table of the file, checked here so that errors name the file.
const json& factors(const json& l, const std::string& file, const std::string& path,
                    const char* key) {
  const json& v = l[key];
  const std::string p = file + ": " + path + "." + key;
  if (!v.is_array())
    throw ScenarioError("calibration", p + ": " + show_json(v) + " is not an array");
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() ||
        !(e[0].get<double>() >= 1) || !(e[1].get<double>() >= 1e-3) ||
        !(e[1].get<double>() <= 1e6) ||
        (i > 0 && !(e[0].get<double>() > v[i - 1][0].get<double>())))
      throw ScenarioError("calibration", p + "[" + std::to_string(i) + "]: " + show_json(e) +
                                             " is not a [bytes, factor] pair (bytes increasing)");
  }
  return v;
}

// Sets doc at the dotted path unless something is already there (explicit values win).
void fill(json& doc, const std::string& path, const json& value) {
  json* cur = &doc;
  std::stringstream ss(path);
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!cur->contains(parts[i])) (*cur)[parts[i]] = json::object();
    cur = &(*cur)[parts[i]];
    if (!cur->is_object()) return;  // the loader reports the bad value
  }
  if (!cur->contains(parts.back())) (*cur)[parts.back()] = value;
}

json read_file(const std::string& shown, const std::string& resolved) {
  std::string text;
  if (const std::string bad = read_input_file(resolved, &text); !bad.empty())
    throw ScenarioError("calibration", show_json(shown) + ": cannot open '" + cut(resolved) + "': it " + bad);
  json c;
  try {
    c = parse_json_strict(text);  // no key twice, not too deep
  } catch (const ScenarioError& e) {
    throw ScenarioError("calibration", cut(shown) + ": " + e.what());
  }
  if (!c.is_object() || c.value("format", "") != "hvdsim-calibration")
    throw ScenarioError("calibration", shown +
                                           ": format: not an hvdsim calibration file "
                                           "(expected \"format\": \"hvdsim-calibration\")");
  if (!c.contains("version") || c["version"] != kCalibrationVersion)
    throw ScenarioError("calibration",
                        shown + ": version: " + show_json(c.value("version", json(nullptr))) +
                            " is not " + std::to_string(kCalibrationVersion) +
                            " (the calibration version this hvdsim reads)");
  return c;
}

}  // namespace

void apply_calibration(json& doc, const std::string& scenario_source) {
  if (!doc.contains("calibration")) return;
  const json& ref = doc["calibration"];
  if (!ref.is_string() || ref.get<std::string>().empty())
    throw ScenarioError("calibration", show_json(ref) + " is not a calibration file name");
  const std::string shown = cut(ref.get<std::string>());  // for messages
  std::filesystem::path p(ref.get<std::string>());
  if (p.is_relative()) p = std::filesystem::path(scenario_source).parent_path() / p;
  const json c = read_file(shown, p.string());
  if (!c.contains("links") || !c["links"].is_object())
    throw ScenarioError("calibration", shown + ": links: missing; expected an object");
  const json& links = c["links"];
  double intra_alpha = 0;
  // The runtime's own work per message (calibrations made with caller_drives, see below).
  double per_message = 0;
  if (c.contains("runtime") && c["runtime"].is_object() && c["runtime"].contains("hand_off_s"))
    per_message = number(c["runtime"], shown, "runtime", "per_message_overhead_s", true);
  // A link class's size-dependent factors (hot and cold), when measured.
  auto link_factors = [&](const json& l, const std::string& cls) {
    for (const auto& [key, suffix] : {std::pair<const char*, const char*>{"bandwidth_factors", ""},
                                      {"bandwidth_factors_cold", "_cold"}})
      if (l.contains(key))
        fill(doc, "simulation.bandwidth_factors." + cls + suffix, factors(l, shown, "links." + cls, key));
  };
  if (links.contains("intra_node") && !links["intra_node"].is_null()) {
    const json& l = links["intra_node"];
    intra_alpha = number(l, shown, "links.intra_node", "latency_s", true);
    // A message between two GPUs of a server crosses two intra links (up, down).
    fill(doc, "cluster.intra_node.latency", fmt((intra_alpha + per_message) / 2 * 1e6, "us"));
    fill(doc, "cluster.intra_node.bandwidth",
         fmt(number(l, shown, "links.intra_node", "bandwidth_Bps") / 1e9, "GBps"));
    link_factors(l, "intra_node");
  }
  if (links.contains("inter_node") && !links["inter_node"].is_null()) {
    const json& l = links["inter_node"];
    // Across servers: two intra hops plus the network; the fit holds the whole path.
    const double alpha = number(l, shown, "links.inter_node", "latency_s", true);
    fill(doc, "cluster.network.latency", fmt(std::max(0.0, alpha - intra_alpha) * 1e6, "us"));
    // Every paired rank measured at once, so bandwidth_Bps is one pair's share of its
    // server's network. With one NIC per server (the default) that NIC carried the flows of
    // every paired rank of the server: its bandwidth is the share times their number.
    const json::json_pointer nic_at("/cluster/network/nic");
    const std::string nic =
        doc.contains(nic_at) && doc.at(nic_at).is_string() ? doc.at(nic_at).get<std::string>() : "per_server";
    double sharing = 1;
    if (nic != "per_gpu" && l.contains("pairs") && c.contains("nodes")) {
      const double pairs = number(l, shown, "links.inter_node", "pairs");
      const double nodes = number(c, shown, "", "nodes");
      sharing = std::max(1.0, std::floor(2 * pairs / nodes + 0.5));  // paired ranks per server
    }
    fill(doc, "cluster.network.bandwidth",
         fmt(sharing * number(l, shown, "links.inter_node", "bandwidth_Bps") / 1e9, "GBps"));
    link_factors(l, "inter_node");
    fill(doc, "cluster.network.efficiency", 1.0);
    fill(doc, "cluster.network.message_overhead", "0us");
  }
  // The probe's hot fraction against reuse distance (2 x pool: send and receive slots).
  if (c.contains("cache_probe") && c["cache_probe"].is_object() &&
      c["cache_probe"].contains("pools") && c["cache_probe"]["pools"].is_array()) {
    // Running minimum: data does not get hotter the longer ago it was touched (the probe's
    // far pools scatter around 0 by noise).
    json curve = json::array();
    double last = 0, floor = 1;
    for (const json& q : c["cache_probe"]["pools"]) {
      const double d = 2 * number(q, shown, "cache_probe.pools[]", "pool_bytes", true);
      const double h = number(q, shown, "cache_probe.pools[]", "hot_fraction", true);
      floor = std::min(floor, std::clamp(h, 0.0, 1.0));
      if (d > last) curve.push_back({d, floor});
      last = d;
    }
    if (!curve.empty()) fill(doc, "simulation.cache_curve", curve);
  }
  if (c.contains("cache_bytes_per_rank"))
    fill(doc, "simulation.cache",
         std::to_string(static_cast<int64_t>(number(c, shown, "", "cache_bytes_per_rank", true))));
  if (c.contains("device") && !c["device"].is_null()) {
    const json& d = c["device"];
    fill(doc, "cluster.device.copy_bandwidth",
         fmt(number(d, shown, "device", "copy_bandwidth_Bps") / 1e9, "GBps"));
    fill(doc, "cluster.device.reduce_bandwidth",
         fmt(number(d, shown, "device", "reduce_bandwidth_Bps") / 1e9, "GBps"));
    // In-cache rates (calibrations from before they were measured have none).
    for (const std::string k : {"copy_bandwidth", "reduce_bandwidth"})
      if (d.contains(k + "_hot_Bps"))
        fill(doc, "cluster.device." + k + "_hot",
             fmt(number(d, shown, "device", (k + "_hot_Bps").c_str()) / 1e9, "GBps"));
  }
  if (c.contains("runtime") && !c["runtime"].is_null()) {
    const json& rt = c["runtime"];
    if (rt.contains("hand_off_s")) {
      // Measured with the caller driving its own cycles: a hand-off is what a call through
      // the loop thread costs more (async calls, caller_drives off), and the rest of the
      // per-call overhead is the runtime's work around each message, which the simulation
      // adds to every message's latency (half on each of the two intra-node hops).
      fill(doc, "simulation.wakeup_latency",
           fmt(number(rt, shown, "runtime", "hand_off_s", true) * 1e6, "us"));
    } else {
      // Calibrations from before caller_drives: the whole overhead is two thread
      // hand-offs (the caller wakes the background loop, the loop wakes the caller).
      const double o = number(rt, shown, "runtime", "per_call_overhead_s", true);
      fill(doc, "simulation.wakeup_latency", fmt(o / 2 * 1e6, "us"));
    }
  }
}

std::vector<std::pair<std::string, json>> what_if_points(const json& doc) {
  std::vector<std::pair<std::string, json>> out;
  if (!doc.contains("what_if")) return out;
  const json& w = doc["what_if"];
  if (!w.is_array())
    throw ScenarioError("what_if", show_json(w) + " is not an array of {name, set}");
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string p = "what_if[" + std::to_string(i) + "]";
    if (!w[i].is_object())
      throw ScenarioError(p, show_json(w[i]) + " is not an object {name, set}");
    for (const auto& [k, v] : w[i].items())
      if (k != "name" && k != "set")
        throw ScenarioError(p + "." + k, "unknown key; expected name, set");
    if (!w[i].contains("name") || !w[i]["name"].is_string() ||
        w[i]["name"].get<std::string>().empty())
      throw ScenarioError(p + ".name", "missing; expected a non-empty string");
    if (!w[i].contains("set") || !w[i]["set"].is_object() || w[i]["set"].empty())
      throw ScenarioError(p + ".set", "missing; expected an object of path: value");
    out.emplace_back(w[i]["name"].get<std::string>(), w[i]["set"]);
  }
  return out;
}

}  // namespace hvd::sim
