// NCCL's settings of a scenario (NcclSettings, hvd/sim/nccl_model.h): read once from its
// runtime section, with the names of the NCCL model's own tables.
#include <strings.h>

#include <optional>
#include <string>
#include <vector>

#include "hvd/sim/scenario.h"
#include "input/scenario_json.h"

namespace hvd::sim {
namespace {

using nlohmann::json;

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// NCCL_ALGO / NCCL_PROTO: "auto" (none) or a name of the model's table, in any case as NCCL
// reads them. `shown` is the value as the report shows it: "auto" or the table's spelling.
template <typename E>
std::optional<E> read_choice(const std::string& path, const json& v, const std::string& text,
                             bool (*parse)(const std::string&, E*), const std::vector<std::string>& names,
                             const char* variable, std::string* shown) {
  E e{};
  if (v.is_string() && strcasecmp(text.c_str(), "auto") == 0) {
    *shown = "auto";
    return std::nullopt;
  }
  if (!v.is_string() || !parse(text, &e))
    throw ScenarioError(path, show_json(v) + " is not one of auto, " + joined(names) + " (" + variable + ")");
  *shown = names[static_cast<size_t>(e)];
  return e;
}

// NCCL_MIN_NCHANNELS (0..64) / NCCL_MAX_NCHANNELS (1..64).
int read_channels(const std::string& path, const json& v, bool is_min) {
  const int lo = is_min ? 0 : 1;
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > 64)
    throw ScenarioError(path, show_json(v) + " is not " + std::string("an integer from ") + (is_min ? "0" : "1") +
                                  " to 64 (NCCL_" + (is_min ? "MIN" : "MAX") + "_NCHANNELS; NCCL runs at most 64 channels)");
  return v.get<int>();
}

}  // namespace

bool read_nccl_knob(const std::string& key, const json& v, const std::string& text, ScenarioPoint* o) {
  const std::string path = "runtime." + key;
  NcclSettings& s = o->nccl;
  std::string shown = text;
  if (key == "nccl_algo")  // NCCL's own variable (NCCL_ALGO), not an hvd knob
    s.algo = read_choice(path, v, text, parse_nccl_algo, nccl_algo_names(), "NCCL_ALGO", &shown);
  else if (key == "nccl_proto")  // NCCL_PROTO
    s.proto = read_choice(path, v, text, parse_nccl_proto, nccl_proto_names(), "NCCL_PROTO", &shown);
  else if (key == "nccl_min_nchannels" || key == "nccl_max_nchannels")
    (key == "nccl_min_nchannels" ? s.min_channels : s.max_channels) = read_channels(path, v, key == "nccl_min_nchannels");
  else if (key == "gpu_operations") {  // Horovod's HOROVOD_GPU_OPERATIONS: which library runs GPU collectives
    if (text != "nccl" && text != "hvd")
      throw ScenarioError(path, show_json(v) + " is not \"nccl\" (NCCL's collectives, as NCCL times them) or \"hvd\" "
                                               "(the runtime's own)");
    s.enabled = text == "nccl";
  } else {
    return false;
  }
  o->knobs[key] = shown;
  return true;
}

}  // namespace hvd::sim
