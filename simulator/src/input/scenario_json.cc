// Field-by-field reading of a scenario document. Unknown keys are errors (typos must not
// pass silently); every message names the path, shows the value and says what was wanted.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "core/units.h"
#include "hvd/json/strict_json.h"
#include "hvd/workloads/gpu_catalog.h"
#include "hvd/workloads/model_registry.h"
#include "hvd/workloads/step_plan.h"
#include "input/scenario_json.h"

namespace hvd::sim {

using nlohmann::json;

std::string cut(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

std::string read_input_file(const std::string& path, std::string* text) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return "does not exist";
  if (std::filesystem::is_directory(st)) return "is a directory, not a file";
  if (!std::filesystem::is_regular_file(st)) return "is not a regular file";
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return "cannot be read (" + ec.message() + ")";
  if (size > kMaxInputFileBytes)
    return "has " + std::to_string(size) + " bytes, more than the " +
           std::to_string(kMaxInputFileBytes >> 20) + " MiB an input file may have";
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::string("cannot be opened (") + std::strerror(errno) + ")";
  std::stringstream ss;
  ss << f.rdbuf();
  *text = ss.str();
  return "";
}

namespace {

// Appends the compact JSON of `v` (as json::dump writes it) to `out`, stopping as soon as
// `out` is longer than `limit`: a 100,000-element array costs a few elements, and as every
// level writes a bracket, the recursion is never deeper than `limit`.
void render(const json& v, size_t limit, std::string* out) {
  if (out->size() > limit) return;
  auto text = [&](const std::string& s) {  // invalid UTF-8 (a --set string) shown as U+FFFD
    *out += json(s.substr(0, limit + 1)).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  if (v.is_object() || v.is_array()) {
    out->push_back(v.is_object() ? '{' : '[');
    for (auto it = v.begin(); it != v.end() && out->size() <= limit; ++it) {
      if (it != v.begin()) out->push_back(',');
      if (v.is_object()) text(it.key()), out->push_back(':');
      render(*it, limit, out);
    }
    out->push_back(v.is_object() ? '}' : ']');
  } else if (v.is_string()) {
    text(v.get_ref<const std::string&>());
  } else {
    *out += v.dump();
  }
}

}  // namespace

std::string show_json(const json& v) {
  std::string s;
  render(v, 60, &s);
  return cut(s, 60);
}

namespace {

// The path of the container open[k] (or, k = open.size(), of the value starting now): the
// key or index each enclosing container is reading, "cluster.links[2]".
std::string path_of(const std::vector<strict_json::Open>& open, size_t k) {
  std::string path;
  for (size_t i = 0; i < k; ++i) {
    const strict_json::Open& o = open[i];
    if (o.array) {
      path += '[';
      path += std::to_string(o.started - 1);
      path += ']';
    } else {
      if (!path.empty()) path += '.';
      path += o.key;
    }
  }
  return path;
}

// A scenario's wording of a strict-parse failure, as ScenarioError words it.
std::string scenario_message(const strict_json::Failure& f) {
  using strict_json::Problem;
  const size_t n = f.open.size();
  switch (f.problem) {
    case Problem::kTooDeep: {
      // Named at the outermost array of the chain that went too deep (the whole document
      // when it is one), shown as the chain's opening brackets.
      size_t base = n;
      while (base > 0 && f.open[base - 1].array) --base;
      std::string shown(std::min<size_t>(n - base, 61), '[');
      shown += f.array ? "[" : "{...";
      return ScenarioError(path_of(f.open, base), cut(shown) + " is not a value nested at most " +
                                                      std::to_string(kMaxJsonDepth) + " levels deep")
          .what();
    }
    case Problem::kDuplicateKey:
      return ScenarioError(path_of(f.open, n - 1), "key " + json(cut(f.open.back().key)).dump() +
                                                       " appears twice; expected each key once per object")
          .what();
    case Problem::kSyntax:
    case Problem::kNumberOverflow:
    case Problem::kOther:
      break;
  }
  return std::string("not valid JSON: ") + f.error->what();
}

}  // namespace

json parse_json_strict(const std::string& text) {
  std::string why;
  std::optional<json> doc = strict_json::parse(text, static_cast<int>(kMaxJsonDepth), scenario_message, &why);
  if (!doc) throw ScenarioError("", why);
  return std::move(*doc);
}

namespace {

[[noreturn]] void fail(const std::string& path, const json& v, const std::string& expected) {
  throw ScenarioError(path, show_json(v) + " is not " + expected);
}

void only_keys(const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
  if (!obj.is_object()) fail(path, obj, "an object");
  std::set<std::string> allowed(keys.begin(), keys.end());
  for (const auto& [k, v] : obj.items()) {
    if (allowed.count(k)) continue;
    std::string list;
    for (const char* a : keys) list += std::string(list.empty() ? "" : ", ") + a;
    throw ScenarioError(path.empty() ? k : path + "." + k, "unknown key; expected one of " + list);
  }
}

std::string join(const std::string& path, const char* key) {
  return path.empty() ? key : path + "." + key;
}

int get_int(const json& obj, const std::string& path, const char* key, int def, int lo, int hi) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  const std::string p = join(path, key);
  const std::string want = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer() && !v.is_number_unsigned()) fail(p, v, want);
  if (v.is_number_unsigned() ? (v.get<uint64_t>() > static_cast<uint64_t>(hi) ||
                                 static_cast<int64_t>(v.get<uint64_t>()) < lo)
                              : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
    fail(p, v, want);
  return static_cast<int>(v.get<int64_t>());
}

double get_number(const json& obj, const std::string& path, const char* key, double def, double lo,
                  double hi) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  const std::string p = join(path, key);
  std::ostringstream want;
  want << "a number in [" << lo << ", " << hi << "]";
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    fail(p, v, want.str());
  return v.get<double>();
}

bool get_bool(const json& obj, const std::string& path, const char* key, bool def) {
  if (!obj.contains(key)) return def;
  if (!obj[key].is_boolean()) fail(join(path, key), obj[key], "true or false");
  return obj[key].get<bool>();
}

std::string get_string(const json& obj, const std::string& path, const char* key,
                       const std::string& def, std::initializer_list<const char*> allowed = {}) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  std::string list;
  for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
  const std::string want = allowed.size() ? "one of " + list : "a string";
  if (!v.is_string()) fail(join(path, key), v, want);
  const std::string s = v.get<std::string>();
  if (allowed.size()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || s == a;
    if (!ok) fail(join(path, key), v, want);
  }
  return s;
}

// Bandwidths: at least 1 Kbps (below, a step takes days), at most 1000 TBps (docs/formats.md,
// "Sane ranges"); `allow_zero`: 0 means "free" (device copy and reduce rates).
constexpr double kMinBandwidth = 1e3 / 8, kMaxBandwidth = 1e15;

double get_bandwidth(const json& obj, const std::string& path, const char* key, double def,
                     bool allow_zero = false) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  const std::string want = "a bandwidth with a unit (e.g. \"25Gbps\", \"12GBps\")";
  if (!v.is_string()) fail(join(path, key), v, want);
  auto b = parse_bandwidth(v.get<std::string>());
  if (!b) fail(join(path, key), v, want + (v.get<std::string>().starts_with("-") ? " >= 0" : ""));
  if (!(*b > 0) && !allow_zero) fail(join(path, key), v, "a bandwidth > 0");
  if (!std::isfinite(*b)) fail(join(path, key), v, "a finite bandwidth");
  if (*b < kMinBandwidth && !(allow_zero && *b == 0))
    fail(join(path, key), v, std::string("a bandwidth of at least 1Kbps") + (allow_zero ? " (or 0: free)" : ""));
  if (*b > kMaxBandwidth) fail(join(path, key), v, "a bandwidth of at most 1000TBps");
  return *b;
}

// A duration in [0, max_s] (`max_text` says max_s with a unit, for the message).
double get_seconds(const json& obj, const std::string& path, const char* key, double def,
                   double max_s = 1.0, const char* max_text = "1s") {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  const std::string want = "a duration with a unit (e.g. \"5us\", \"1.5ms\")";
  if (!v.is_string()) fail(join(path, key), v, want);
  auto s = parse_seconds(v.get<std::string>());
  if (!s || !std::isfinite(*s)) fail(join(path, key), v, want);
  if (*s > max_s) fail(join(path, key), v, std::string("a duration of at most ") + max_text);
  return *s;
}

void read_intra(const json& j, const std::string& path, const std::string& gpu, IntraNodeSpec* o) {
  only_keys(j, path, {"type", "bandwidth", "latency"});
  o->type = get_string(j, path, "type", o->type, {"pcie", "nvlink"});
  o->bandwidth = get_bandwidth(j, path, "bandwidth", 0);
  o->latency = get_seconds(j, path, "latency", o->latency);
  if (o->type == "nvlink" && o->bandwidth == 0) {
    auto g = workloads::find_gpu(gpu);
    if (g && g->nvlink_gbps <= 0)
      throw ScenarioError(join(path, "type"), "\"nvlink\" but GPU \"" + gpu +
                                                  "\" has no NVLink; give intra_node.bandwidth or use \"pcie\"");
  }
}

void read_network(const json& j, const std::string& path, NetworkSpec* o) {
  only_keys(j, path, {"topology", "bandwidth", "latency", "nic", "protocol", "efficiency",
                      "message_overhead", "connection_rate", "servers_per_switch", "oversubscription",
                      "torus_dims", "dragonfly", "sharp"});
  o->topology = get_string(j, path, "topology", o->topology, {"star", "fat_tree", "torus", "dragonfly"});
  o->bandwidth = get_bandwidth(j, path, "bandwidth", o->bandwidth);
  o->latency = get_seconds(j, path, "latency", o->latency);
  o->nic = get_string(j, path, "nic", o->nic, {"per_server", "per_gpu"});
  o->protocol = get_string(j, path, "protocol", o->protocol, {"roce", "infiniband", "tcp"});
  o->efficiency = get_number(j, path, "efficiency", -1, 0.01, 1.0);
  o->message_overhead = get_seconds(j, path, "message_overhead", -1);
  o->connection_rate = get_bandwidth(j, path, "connection_rate", -1, true);
  o->servers_per_switch = get_int(j, path, "servers_per_switch", o->servers_per_switch, 1, 1 << 16);
  o->oversubscription = get_number(j, path, "oversubscription", o->oversubscription, 1.0, 1024.0);
  o->torus_dims = get_string(j, path, "torus_dims", o->torus_dims);
  o->dragonfly = get_string(j, path, "dragonfly", o->dragonfly);
  o->sharp = get_bool(j, path, "sharp", o->sharp);
  if (o->sharp && o->protocol != "infiniband")
    throw ScenarioError(path + ".sharp", "SHARP is InfiniBand switches' in-network reduction; this network's protocol is " +
                                             o->protocol + " (set protocol \"infiniband\")");
}

void read_device(const json& j, const std::string& path, DeviceCostSpec* o) {
  only_keys(j, path,
            {"copy_bandwidth", "reduce_bandwidth", "copy_bandwidth_hot", "reduce_bandwidth_hot",
             "host_staged", "pcie_bandwidth", "host_reduce_bandwidth", "scatter_gather"});
  o->scatter_gather = get_bool(j, path, "scatter_gather", o->scatter_gather);
  o->copy_bandwidth = get_bandwidth(j, path, "copy_bandwidth", o->copy_bandwidth, true);
  o->reduce_bandwidth = get_bandwidth(j, path, "reduce_bandwidth", o->reduce_bandwidth, true);
  o->copy_bandwidth_hot = get_bandwidth(j, path, "copy_bandwidth_hot", o->copy_bandwidth_hot, true);
  o->reduce_bandwidth_hot = get_bandwidth(j, path, "reduce_bandwidth_hot", o->reduce_bandwidth_hot, true);
  o->host_staged = get_bool(j, path, "host_staged", o->host_staged);
  o->pcie_bandwidth = get_bandwidth(j, path, "pcie_bandwidth", o->pcie_bandwidth);
  o->host_reduce_bandwidth = get_bandwidth(j, path, "host_reduce_bandwidth", o->host_reduce_bandwidth);
}

// What-ifs: "stragglers": [{"rank", "speed"}], "degraded_links": [{"node", "gpu",
// "bandwidth_factor", "extra_latency"}].
void read_what_ifs(const json& j, ClusterSpec* c) {
  auto list = [&](const char* key) {
    const json& v = j[key];
    if (!v.is_array()) fail(std::string("cluster.") + key, v, "an array of objects");
    return v;
  };
  if (j.contains("stragglers")) {
    const json v = list("stragglers");
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string p = "cluster.stragglers[" + std::to_string(i) + "]";
      only_keys(v[i], p, {"rank", "speed"});
      if (!v[i].contains("rank")) throw ScenarioError(p + ".rank", "missing; expected a rank");
      const int r = get_int(v[i], p, "rank", 0, 0, c->gpus() - 1);
      c->gpu_speed[r] = get_number(v[i], p, "speed", 1.0, 0.01, 100.0);
    }
  }
  if (j.contains("degraded_links")) {
    const json v = list("degraded_links");
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string p = "cluster.degraded_links[" + std::to_string(i) + "]";
      only_keys(v[i], p, {"node", "gpu", "bandwidth_factor", "extra_latency"});
      if (!v[i].contains("node"))
        throw ScenarioError(p + ".node", "missing; expected a server index");
      LinkDegradation d;
      d.node = get_int(v[i], p, "node", 0, 0, c->nodes - 1);
      d.gpu = get_int(v[i], p, "gpu", -1, -1, c->gpus_per_node - 1);
      d.bandwidth_factor = get_number(v[i], p, "bandwidth_factor", 1.0, 0.001, 1000.0);
      d.extra_latency = get_seconds(v[i], p, "extra_latency", 0.0);
      c->degraded_links.push_back(d);
    }
  }
}

void read_cluster(const json& j, ScenarioPoint* o) {
  const std::string path = "cluster";
  only_keys(j, path,
            {"nodes", "gpus_per_node", "nvlink_domain_nodes", "gpu", "host_cpu", "gpu_speed_cv", "gpu_speed_seed", "intra_node", "network",
             "device", "platform_file", "stragglers", "degraded_links"});
  ClusterSpec& c = o->cluster;
  c.nodes = get_int(j, path, "nodes", c.nodes, 1, 1 << 16);
  c.gpus_per_node = get_int(j, path, "gpus_per_node", c.gpus_per_node, 1, 64);
  c.nvlink_domain_nodes = get_int(j, path, "nvlink_domain_nodes", c.nvlink_domain_nodes, 1, 64);
  c.gpu = get_string(j, path, "gpu", c.gpu);
  c.host_cpu = get_string(j, path, "host_cpu", c.host_cpu, {"intel", "amd"});
  c.gpu_speed_cv = get_number(j, path, "gpu_speed_cv", c.gpu_speed_cv, 0.0, 0.25);
  c.gpu_speed_seed = get_int(j, path, "gpu_speed_seed", static_cast<int>(c.gpu_speed_seed), 0, kMaxSeed);
  auto g = workloads::find_gpu(c.gpu);
  if (!g) throw ScenarioError("cluster.gpu", show_json(j["gpu"]) + " is not a known GPU (" + cut(g.error(), 200) + ")");
  // Device memory operations: a copy reads and writes every byte, a reduction reads two
  // operands and writes one, at the fraction of the datasheet bandwidth the GPU reaches
  // (GpuSpec::memory_efficiency: measured on Hopper, 1 where not measured).
  o->device.copy_bandwidth = g->memory_gbps * g->memory_efficiency * 1e9 / 2;
  o->device.reduce_bandwidth = g->memory_gbps * g->memory_efficiency * 1e9 / 3;
  o->device.pcie_bandwidth = g->pcie_gbps * 1e9 * 0.75;
  if (j.contains("intra_node")) read_intra(j["intra_node"], "cluster.intra_node", c.gpu, &c.intra);
  if (j.contains("network")) read_network(j["network"], "cluster.network", &c.network);
  if (c.nvlink_domain_nodes > 1 && c.intra.type != "nvlink")
    throw ScenarioError("cluster.nvlink_domain_nodes", std::to_string(c.nvlink_domain_nodes) +
                                                           " servers share an NVLink domain, but cluster.intra_node.type is \"" +
                                                           c.intra.type + "\" (expected \"nvlink\")");
  if (j.contains("device")) read_device(j["device"], "cluster.device", &o->device);
  c.platform_file = get_string(j, path, "platform_file", "");
  if (j.contains("platform_file")) {
    // Every point of a sweep names the same file, usually: it is read once (again when it
    // changed).
    std::error_code ec;
    const auto stamp = std::filesystem::last_write_time(c.platform_file, ec).time_since_epoch().count();
    const std::string key = c.platform_file + "\n" + std::to_string(ec ? -1 : stamp);
    thread_local std::string checked, problem;
    if (checked != key || c.platform_file.empty()) {
      problem = c.platform_file.empty() ? "is not a file name" : check_platform_xml(c.platform_file);
      checked = key;
    }
    if (!problem.empty()) throw ScenarioError("cluster.platform_file", show_json(c.platform_file) + " " + problem);
  }
  read_what_ifs(j, &c);
  for (size_t i = 0; i < c.degraded_links.size(); ++i)
    if (!c.platform_file.empty() ||
        ((c.network.topology == "torus" || c.network.topology == "dragonfly") && c.degraded_links[i].gpu < 0))
      throw ScenarioError("cluster.degraded_links[" + std::to_string(i) + "]",
                          "not supported with a platform_file or on a torus's or dragonfly's NIC links");
  if (c.network.topology == "dragonfly" && c.platform_file.empty()) {
    std::vector<unsigned> v;
    if (parse_dragonfly(c.network.dragonfly, &v) && v[4] < 2)  // SimGrid 3.32 crashes routing those
      throw ScenarioError("cluster.network.dragonfly",
                          show_json(c.network.dragonfly) + " has 1 router per chassis; SimGrid's dragonfly needs at least 2");
    if (!parse_dragonfly(c.network.dragonfly, &v) ||
        static_cast<unsigned long long>(v[0]) * v[2] * v[4] * v[6] != static_cast<unsigned long long>(c.nodes))
      throw ScenarioError("cluster.network.dragonfly",
                          show_json(c.network.dragonfly) +
                              " is not \"groups,links;chassis,links;routers,links;servers\" (e.g. \"4,2;4,1;2,1;2\") "
                              "whose groups x chassis x routers x servers is cluster.nodes (" +
                              std::to_string(c.nodes) + ")");
  }
  if (c.network.topology == "torus" && c.platform_file.empty()) {
    unsigned long long prod = 1;
    bool ok = !c.network.torus_dims.empty();
    size_t start = 0;
    const std::string& d = c.network.torus_dims;
    while (ok && start <= d.size()) {
      size_t x = d.find('x', start);
      std::string part = d.substr(start, x == std::string::npos ? std::string::npos : x - start);
      ok = !part.empty() && part.size() < 7 && part.find_first_not_of("0123456789") == std::string::npos &&
           std::stoul(part) > 0;
      if (ok) prod *= std::stoul(part);
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (!ok || prod != static_cast<unsigned long long>(c.nodes))
      throw ScenarioError("cluster.network.torus_dims", show_json(d) + " is not a list of dimensions like \"8x4x4\" whose product is cluster.nodes (" + std::to_string(c.nodes) + ")");
  }
}

// "a known model (resnet50, ..., or a trace .json): <why>", for a name find_model refused.
std::string known_model(const std::string& why) {
  std::string known;
  for (const auto& n : workloads::builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
  return "a known model (" + known + ", or a trace .json): " + cut(why, 200);
}

// The longest step (compute of the slowest GPU plus the optimizer) a scenario may describe.
constexpr double kMaxStepSeconds = 86400;

// workload.sharding and what goes with it: hsdp's shard group, the dtypes on the wire.
void read_sharding(const json& j, const ClusterSpec& c, WorkloadSpec* w) {
  const std::string path = "workload";
  w->sharding = *replay::parse_sharding(
      get_string(j, path, "sharding", replay::sharding_name(w->sharding), {"none", "zero1", "zero2", "fsdp", "hsdp"}));
  w->shard_size = get_int(j, path, "shard_size", w->shard_size, 1, 1 << 20);
  if (j.contains("shard_size") && w->sharding != replay::Sharding::kHsdp)
    fail("workload.shard_size", j["shard_size"], "allowed without workload.sharding \"hsdp\" (it sizes hsdp's shard groups)");
  if (w->sharding == replay::Sharding::kHsdp && w->shard_size == 0) {
    if (c.intra.type != "nvlink")
      throw ScenarioError("workload.sharding",
                          "\"hsdp\" needs a domain to shard in: an NVLink domain (cluster.intra_node.type \"nvlink\", "
                          "cluster.nvlink_domain_nodes) or workload.shard_size");
    w->shard_size = c.nvlink_domain_nodes * c.gpus_per_node;
  }
  for (const char* key : {"param_dtype", "grad_dtype"}) {
    std::string& d = std::string(key) == "param_dtype" ? w->param_dtype : w->grad_dtype;
    d = get_string(j, path, key, d, {"fp32", "bf16", "fp16", "fp8"});
    if (j.contains(key) && w->sharding == replay::Sharding::kNone)
      fail("workload." + std::string(key), j[key],
           "allowed with workload.sharding \"none\" (a sharded workload's dtypes on the wire; \"none\" sends the "
           "precision's gradients)");
  }
}

void read_workload(const json& j, const ClusterSpec& c, WorkloadSpec* w) {
  const std::string path = "workload";
  only_keys(j, path, {"models", "model", "trace", "batch_size", "steps", "warmup_steps", "optimizer_time", "max_tuning_steps",
                      "accumulation_steps", "allreduce_post_accumulation", "optimizer", "precision", "seq_len",
                      "sharding", "shard_size", "param_dtype", "grad_dtype"});
  w->models.clear();
  if (j.contains("model") && j.contains("models"))  // which one was meant?
    fail("workload.model", j["model"], "allowed beside workload.models (give one of the two)");
  if (j.contains("trace") && (j.contains("model") || j.contains("models")))
    fail("workload.trace", j["trace"], "allowed beside workload.model(s) (give one of them)");
  if (j.contains("model")) w->models.push_back(get_string(j, path, "model", ""));
  // A model trace file, e.g. one recorded by hvd.torch (HVD_RECORD_TRACE): same as "model".
  if (j.contains("trace")) w->models.push_back(get_string(j, path, "trace", ""));
  if (j.contains("models")) {
    const json& m = j["models"];
    if (!m.is_array() || m.empty() || m.size() > 64) fail("workload.models", m, "a non-empty array of at most 64 model names");
    for (size_t i = 0; i < m.size(); ++i) {
      if (!m[i].is_string()) fail("workload.models[" + std::to_string(i) + "]", m[i], "a model name");
      const std::string& name = m[i].get_ref<const std::string&>();  // a model given twice runs once
      if (std::find(w->models.begin(), w->models.end(), name) == w->models.end()) w->models.push_back(name);
    }
  }
  if (w->models.empty()) throw ScenarioError("workload.models", "missing; expected a list of model names");
  w->batch_size = get_int(j, path, "batch_size", w->batch_size, 1, 1 << 20);
  w->steps = get_int(j, path, "steps", w->steps, 1, 100000);
  w->warmup_steps = get_int(j, path, "warmup_steps", w->warmup_steps, 0, 100000);
  w->optimizer_s = get_seconds(j, path, "optimizer_time", w->optimizer_s, 3600, "3600s");
  w->max_tuning_steps = get_int(j, path, "max_tuning_steps", w->max_tuning_steps, 0, 100000);
  w->accumulation_steps = get_int(j, path, "accumulation_steps", w->accumulation_steps, 1, 4096);
  w->allreduce_post_accumulation = get_bool(j, path, "allreduce_post_accumulation", w->allreduce_post_accumulation);
  w->optimizer = *workloads::parse_optimizer(
      get_string(j, path, "optimizer", workloads::optimizer_name(w->optimizer), {"sgd", "momentum", "adam", "lamb"}));
  w->precision = *workloads::parse_precision(
      get_string(j, path, "precision", workloads::precision_name(w->precision), {"fp32", "tf32", "fp16", "bf16"}));
  // Written, a length is at least one; the model's own length is the key left out.
  w->seq_len = get_int(j, path, "seq_len", w->seq_len, j.contains("seq_len") ? 1 : 0, 1 << 20);
  read_sharding(j, c, w);
  // The slowest GPU: the slowest straggler, and cluster.gpu_speed_cv's draws (clamped at
  // 3.5 standard deviations, ClusterSpec::gpu_slowdown).
  double slowest = 1 + 3.5 * std::max(0.0, c.gpu_speed_cv);
  double min_speed = 1;
  for (const auto& [rank, speed] : c.gpu_speed) min_speed = std::min(min_speed, speed);
  slowest /= min_speed;
  for (size_t i = 0; i < w->models.size(); ++i) {
    auto t = workloads::find_model(w->models[i], w->seq_len);
    if (!t && w->seq_len > 0 && workloads::find_model(w->models[i]))
      fail("workload.seq_len", w->seq_len, "a length for every model of the workload: " + cut(t.error(), 200));
    if (!t) {
      const std::string where = j.contains("trace")   ? std::string("workload.trace")
                                : j.contains("model") ? std::string("workload.model")
                                                      : "workload.models[" + std::to_string(i) + "]";
      throw ScenarioError(where, show_json(w->models[i]) + " is not " + known_model(t.error()));
    }
    auto plan = workloads::make_step_plan(*t, c.gpu, w->batch_size, w->precision);
    if (!plan && w->precision != workloads::Precision::kFp32)
      fail("workload.precision", workloads::precision_name(w->precision), "a precision known for " + t->name +
           " on " + c.gpu + ": " + cut(plan.error(), 300));
    if (!plan) continue;  // the run says why
    const auto extra = workloads::optimizer_extra_s(w->optimizer, *plan, c.gpu);
    const double update = extra ? *extra : 0;
    const double step = plan->step_s * slowest * w->accumulation_steps + w->optimizer_s + update;
    if (!(step <= kMaxStepSeconds)) {
      std::ostringstream why;
      why << "a batch whose step takes at most a day (" << t->name << " on " << c.gpu << ": " << step
          << " s per step, slowest GPU)";
      fail("workload.batch_size", w->batch_size, why.str());
    }
  }
}

void read_runtime(const json& j, ScenarioPoint* o) {
  if (!j.is_object()) fail("runtime", j, "an object of knob: value");
  for (const auto& [k, v] : j.items()) {
    const std::string p = "runtime." + k;
    std::string text;
    if (v.is_string()) text = v.get<std::string>();
    else if (v.is_boolean()) text = v.get<bool>() ? "true" : "false";
    else if (v.is_number()) text = v.dump();
    else fail(p, v, "a knob value (string, number or boolean)");
    if (read_nccl_knob(k, v, text, o)) continue;  // gpu_operations and NCCL's variables (nccl_settings.cc)
    Status s = o->config.set(k, text);
    if (!s.ok()) {
      std::string known;
      for (const auto& [name, value] : Config().describe()) known += (known.empty() ? "" : ", ") + name;
      if (s.message().find("unknown") != std::string::npos)
        throw ScenarioError(p, "unknown runtime knob; expected one of " + known);
      throw ScenarioError(p, show_json(v) + " is not a valid value (" + cut(s.message(), 200) + ")");
    }
    if (!o->config.timeline.empty())
      throw ScenarioError(p, "hvdsim writes one timeline per run: use hvdsim --timeline-dir DIR");
    if (o->config.ranks_per_node != 0)
      throw ScenarioError(p, "emulates nodes of an MPI world on one host; a scenario's nodes are "
                             "cluster.nodes and cluster.gpus_per_node");
    o->knobs[k] = text;
  }
  Status s = o->config.validate();
  if (!s.ok()) throw ScenarioError("runtime", cut(s.message(), 200));
}

// The most points of a [bytes, value] table (bandwidth factors, cache curve).
constexpr size_t kMaxTablePoints = 1024;

// "bandwidth_factors": {"intra_node": [[bytes, factor], ...], "inter_node": [...]}.
void read_factors(const json& j, SimModelSpec* m) {
  const std::string path = "simulation.bandwidth_factors";
  only_keys(j, path, {"intra_node", "inter_node", "intra_node_cold", "inter_node_cold"});
  const char* keys[4] = {"intra_node", "inter_node", "intra_node_cold", "inter_node_cold"};
  for (int k = 0; k < 4; ++k) {
    if (!j.contains(keys[k])) continue;
    const json& v = j[keys[k]];
    const std::string p = join(path, keys[k]);
    if (!v.is_array() || v.size() > kMaxTablePoints) fail(p, v, "an array of at most 1024 [bytes, factor] pairs");
    auto& out = k < 2 ? m->bandwidth_factors[k] : m->bandwidth_factors_cold[k - 2];
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      const json& e = v[i];
      const std::string pi = p + "[" + std::to_string(i) + "]";
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() ||
          !(e[0].get<double>() >= 1) || !(e[1].get<double>() >= 1e-3) ||
          !(e[1].get<double>() <= 1e6) ||
          (i > 0 && !(e[0].get<double>() > v[i - 1][0].get<double>())))
        fail(pi, e, "a [bytes >= 1, factor in [0.001, 1e6]] pair, bytes increasing");
      out.emplace_back(e[0].get<double>(), e[1].get<double>());
    }
  }
}

void read_simulation(const json& j, ScenarioPoint* o) {
  const std::string path = "simulation";
  only_keys(j, path,
            {"network_model", "cross_traffic", "with_data", "parallel", "stack_kib",
             "device_tolerance", "wakeup_latency", "bandwidth_factors", "cache", "cache_curve",
             "train_transfers", "time_limit", "seeds"});
  if (j.contains("cache")) {
    const json& v = j["cache"];
    auto b = v.is_string() ? parse_bytes(v.get<std::string>()) : std::nullopt;
    if (!b || *b < 0 || *b > (int64_t{1} << 40))
      fail("simulation.cache", v, "a size up to 1TiB (e.g. \"16MiB\"; \"0\": no cache model)");
    o->simulation.cache_bytes = static_cast<double>(*b);
  }
  if (j.contains("cache_curve")) {
    const json& v = j["cache_curve"];
    if (!v.is_array() || v.empty() || v.size() > kMaxTablePoints)
      fail("simulation.cache_curve", v, "a non-empty array of at most 1024 [reuse distance bytes, hot fraction]");
    auto& out = o->simulation.cache_curve;
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      const json& e = v[i];
      const std::string pi = "simulation.cache_curve[" + std::to_string(i) + "]";
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() ||
          !(e[0].get<double>() >= 1) || !(e[1].get<double>() >= 0) || !(e[1].get<double>() <= 1) ||
          (i > 0 && !(e[0].get<double>() > v[i - 1][0].get<double>())))
        fail(pi, e, "a [bytes >= 1, hot fraction in [0, 1]] pair, bytes increasing");
      out.emplace_back(e[0].get<double>(), e[1].get<double>());
    }
  }
  if (j.contains("bandwidth_factors")) read_factors(j["bandwidth_factors"], &o->simulation);
  o->simulation.wakeup_latency =
      get_seconds(j, path, "wakeup_latency", o->simulation.wakeup_latency);
  o->simulation.network_model = get_string(j, path, "network_model", o->simulation.network_model,
                                           {"CM02", "LV08", "SMPI", "IB"});
  o->simulation.cross_traffic = get_bool(j, path, "cross_traffic", o->simulation.cross_traffic);
  o->with_data = get_bool(j, path, "with_data", o->with_data);
  o->parallel = get_int(j, path, "parallel", o->parallel, 1, 64);
  o->seeds = get_int(j, path, "seeds", o->seeds, 1, kMaxSeeds);
  o->simulation.stack_kib = get_int(j, path, "stack_kib", o->simulation.stack_kib, 64, 65536);
  o->simulation.device_tolerance = get_seconds(j, path, "device_tolerance", o->simulation.device_tolerance);
  o->simulation.train_transfers = get_int(j, path, "train_transfers", static_cast<int>(o->simulation.train_transfers), 0, 1 << 20);
  // The backstop against runs that would never end: SimGrid stops at this simulated time.
  o->simulation.time_limit_s = get_seconds(j, path, "time_limit", o->simulation.time_limit_s, 1e9, "1e9s");
  if (o->simulation.time_limit_s < 1) fail("simulation.time_limit", j["time_limit"], "a duration of at least 1s");
}

void read_np(const json& doc, ScenarioPoint* o) {
  const int gpus = o->cluster.gpus();
  if (!doc.contains("sweep") || !doc["sweep"].is_object() || !doc["sweep"].contains("np")) {
    o->np = {gpus};
    return;
  }
  const json& np = doc["sweep"]["np"];
  if (np.is_string() && np.get<std::string>() == "nodes") {
    // One GPU, one node, then whole nodes by powers of two up to cluster.nodes: the sweep
    // follows the pod size.
    o->np = {1};
    for (int k = 1; k < o->cluster.nodes; k *= 2)
      if (k * o->cluster.gpus_per_node > 1) o->np.push_back(k * o->cluster.gpus_per_node);
    if (gpus > 1) o->np.push_back(gpus);
    return;
  }
  if (!np.is_array() || np.empty()) fail("sweep.np", np, "a non-empty array of rank counts, or \"nodes\"");
  std::set<int> seen;
  for (size_t i = 0; i < np.size(); ++i) {
    const std::string p = "sweep.np[" + std::to_string(i) + "]";
    if (!np[i].is_number_integer() || np[i].get<int64_t>() < 1 || np[i].get<int64_t>() > (1 << 20))
      fail(p, np[i], "a positive integer");
    const int n = static_cast<int>(np[i].get<int64_t>());
    if (o->cluster.platform_file.empty() && n > gpus)
      throw ScenarioError(p, std::to_string(n) + " does not fit the cluster (" +
                                 std::to_string(o->cluster.nodes) + " nodes x " +
                                 std::to_string(o->cluster.gpus_per_node) + " GPUs = " +
                                 std::to_string(gpus) + ")");
    if (seen.insert(n).second) o->np.push_back(n);  // once each, in order
  }
}

}  // namespace

std::vector<report::Reference> read_reference(const json& v, bool named) {
  constexpr size_t kMaxReference = 1024;
  if (!v.is_array() || v.size() > kMaxReference)
    fail("reference", v, "an array of at most 1024 {\"model\", \"np\", \"scaling_efficiency\", \"source\"} objects");
  std::vector<report::Reference> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string p = "reference[" + std::to_string(i) + "]";
    only_keys(e, p, {"model", "np", "scaling_efficiency", "source"});
    for (const char* key : {"model", "np", "scaling_efficiency", "source"})
      if (!e.contains(key))
        throw ScenarioError(join(p, key), "missing; expected model, np, scaling_efficiency (a fraction: 0.9 for 90 %) "
                                          "and source");
    report::Reference r;
    r.model = get_string(e, p, "model", "");
    if (!named) {
      auto t = workloads::find_model(r.model);
      if (!t) fail(join(p, "model"), e["model"], known_model(t.error()));
      r.model = t->name;  // as the report's records name it
    }
    r.np = get_int(e, p, "np", 0, 1, 1 << 20);
    const json& eff = e["scaling_efficiency"];
    if (!eff.is_number() || !(eff.get<double>() > 0) || !(eff.get<double>() <= 1.5))
      fail(join(p, "scaling_efficiency"), eff, "a fraction in (0, 1.5] (0.9 for 90 %, as the report's scaling_efficiency)");
    r.scaling_efficiency = eff.get<double>();
    const json& src = e["source"];
    if (!src.is_string() || src.get_ref<const std::string&>().empty() || src.get_ref<const std::string&>().size() > 200)
      fail(join(p, "source"), src, "a non-empty string of at most 200 characters (where the value was published)");
    r.source = src.get<std::string>();
    for (size_t k = 0; k < out.size(); ++k)
      if (out[k].model == r.model && out[k].np == r.np)
        throw ScenarioError(p, r.model + " at np " + std::to_string(r.np) + " is given twice (also reference[" +
                                   std::to_string(k) + "]); expected one published value per model and np");
    out.push_back(std::move(r));
  }
  return out;
}

void read_point(const json& doc, ScenarioPoint* o) {
  only_keys(doc, "",
            {"$schema", "name", "description", "cluster", "workload", "runtime", "sweep",
             "simulation", "calibration", "what_if"});
  if (doc.contains("name") && !doc["name"].is_string()) fail("name", doc["name"], "a string");
  if (doc.contains("description") && !doc["description"].is_string()) fail("description", doc["description"], "a string");
  if (!doc.contains("cluster")) throw ScenarioError("cluster", "missing; expected the cluster object");
  if (!doc.contains("workload")) throw ScenarioError("workload", "missing; expected the workload object");
  read_cluster(doc["cluster"], o);
  read_workload(doc["workload"], o->cluster, &o->workload);
  if (doc.contains("runtime")) read_runtime(doc["runtime"], o);
  if (doc.contains("simulation")) read_simulation(doc["simulation"], o);
  read_np(doc, o);
  // hsdp's groups are whole: a group of shard_size ranks (fewer when the run has fewer).
  const WorkloadSpec& w = o->workload;
  for (int n : o->np)
    if (w.sharding == replay::Sharding::kHsdp && n % std::min(n, w.shard_size) != 0)
      throw ScenarioError("workload.shard_size", std::to_string(w.shard_size) + " does not divide a run of " +
                                                     std::to_string(n) + " ranks (sweep.np) into whole shard groups");
}

}  // namespace hvd::sim
