// NCCL's settings of a scenario (NcclSettings, hvd/sim/nccl_model.h): read once from its
// runtime section, with the names of the NCCL model's own tables, and checked against the
// run before it is simulated.
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

// NCCL's variables act on NCCL's collectives only: a job whose GPU collectives are the
// runtime's own would ignore them, so they are refused rather than silently dropped.
Status refuse_unused(const ScenarioPoint& pt) {
  const NcclSettings& s = pt.nccl;
  const char* set = s.algo                       ? "runtime.nccl_algo"
                    : s.proto                    ? "runtime.nccl_proto"
                    : s.min_channels != 0        ? "runtime.nccl_min_nchannels"
                    : s.max_channels != 64       ? "runtime.nccl_max_nchannels"
                    : pt.cluster.network.sharp   ? "cluster.network.sharp"
                                                 : nullptr;
  if (!set) return Status::OK();
  return Status::InvalidArgument(std::string(set) +
                                 ": applies to NCCL's collectives (runtime.gpu_operations \"nccl\"); this scenario's GPU "
                                 "collectives are the runtime's own (gpu_operations \"hvd\")");
}

// NCCL runs the GPU allreduce (Horovod's HOROVOD_GPU_OPERATIONS=NCCL): a knob that would
// hand it to the runtime's own algorithms, or one the NCCL path never reads, contradicts it.
Status refuse_own_allreduce(const Config& config) {
  const std::string& alg = config.allreduce_algorithm;
  if (alg != "auto" && alg != "native")
    return Status::InvalidArgument("runtime.allreduce_algorithm: \"" + alg +
                                   "\" is the runtime's own allreduce, which would replace NCCL's (runtime.gpu_operations "
                                   "\"nccl\"); NCCL's algorithm is runtime.nccl_algo, or set gpu_operations \"hvd\"");
  if (config.hierarchical_allreduce)
    return Status::InvalidArgument("runtime.hierarchical_allreduce: not with NCCL's allreduce (runtime.gpu_operations "
                                   "\"nccl\"): NCCL's ring and tree already run inside the node over NVLink and across "
                                   "nodes over the NICs (runtime.nccl_algo); Horovod's NCCL-then-MPI split is not modelled");
  return Status::OK();
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

Status check_nccl_run(const ScenarioPoint& pt, int np) {
  if (!pt.nccl.enabled) return refuse_unused(pt);
  HVD_RETURN_IF_ERROR(refuse_own_allreduce(pt.config));
  auto m = nccl_machine(pt.cluster, np, pt.nccl);
  if (!m.ok()) return m.status();
  // As NCCL does ("no algorithm/protocol available"): an NCCL_ALGO / NCCL_PROTO that cannot
  // run the job's allreduce on this machine is an error, not a silent fallback.
  if (np > 1 && !nccl_call(*m, NcclColl::kAllreduce, 1 << 20, pt.nccl).ok)
    return Status::InvalidArgument("runtime.nccl_algo: " + std::string(pt.nccl.algo_name()) +
                                   (pt.nccl.proto ? " with runtime.nccl_proto " + std::string(pt.nccl.proto_name()) : std::string()) +
                                   " cannot run allreduce on " + std::to_string(m->nodes) + " node(s) of " +
                                   std::to_string(m->ranks_per_node) + " GPUs (np " + std::to_string(np) + ")");
  return Status::OK();
}

}  // namespace hvd::sim
