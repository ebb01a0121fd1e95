#include "hvd/config.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/units.h"

namespace hvd {
namespace {

Status parse_value(const std::string& field, const std::string& text, int64_t* out) {
  auto v = parse_bytes(text);
  if (!v) return Status::InvalidArgument(field + ": '" + text + "' is not a byte count");
  *out = *v;
  return Status::OK();
}

Status parse_value(const std::string& field, const std::string& text, double* out) {
  auto v = parse_milliseconds_or_number(text, field.ends_with("_ms"));
  if (!v) return Status::InvalidArgument(field + ": '" + text + "' is not a number");
  *out = *v;
  return Status::OK();
}

Status parse_value(const std::string& field, const std::string& text, bool* out) {
  auto v = parse_bool(text);
  if (!v) return Status::InvalidArgument(field + ": '" + text + "' is not a boolean (0/1/true/false)");
  *out = *v;
  return Status::OK();
}

Status parse_value(const std::string&, const std::string& text, std::string* out) {
  *out = text;
  return Status::OK();
}

std::string show(int64_t v) { return std::to_string(v); }
std::string show(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
std::string show(bool v) { return v ? "true" : "false"; }
std::string show(const std::string& v) { return v.empty() ? "\"\"" : v; }

// One table per algorithm knob: its names, in the order its error message lists them.
template <typename E>
struct Named {
  const char* name;
  E value;
};
constexpr Named<AllreduceAlgorithm> kAllreduceAlgorithms[] = {
    {"auto", AllreduceAlgorithm::kAuto},
    {"ring", AllreduceAlgorithm::kRing},
    {"pipelined_ring", AllreduceAlgorithm::kPipelinedRing},
    {"lockstep_ring", AllreduceAlgorithm::kLockstepRing},
    {"rhd", AllreduceAlgorithm::kRhd},
    {"direct", AllreduceAlgorithm::kDirect},
    {"hierarchical", AllreduceAlgorithm::kHierarchical},
    {"native", AllreduceAlgorithm::kNative}};
constexpr Named<AllgatherAlgorithm> kAllgatherAlgorithms[] = {
    {"auto", AllgatherAlgorithm::kAuto},
    {"ring", AllgatherAlgorithm::kRing},
    {"hierarchical", AllgatherAlgorithm::kHierarchical},
    {"native", AllgatherAlgorithm::kNative}};
constexpr Named<BroadcastAlgorithm> kBroadcastAlgorithms[] = {
    {"auto", BroadcastAlgorithm::kAuto},
    {"tree", BroadcastAlgorithm::kTree},
    {"pipeline", BroadcastAlgorithm::kPipeline},
    {"native", BroadcastAlgorithm::kNative}};
constexpr Named<AlltoallAlgorithm> kAlltoallAlgorithms[] = {
    {"auto", AlltoallAlgorithm::kAuto},
    {"pairwise", AlltoallAlgorithm::kPairwise},
    {"native", AlltoallAlgorithm::kNative}};
constexpr Named<ReducescatterAlgorithm> kReducescatterAlgorithms[] = {
    {"auto", ReducescatterAlgorithm::kAuto},
    {"ring", ReducescatterAlgorithm::kRing},
    {"native", ReducescatterAlgorithm::kNative}};

// `value` of knob `knob` looked up in `table`; unknown: "<knob> '<value>' is not one of a|b|c".
template <typename E, size_t N>
StatusOr<E> parse_algorithm(const char* knob, const std::string& value,
                            const Named<E> (&table)[N]) {
  std::string names;
  for (const auto& [name, e] : table) {
    if (value == name) return e;
    if (!names.empty()) names += '|';
    names += name;
  }
  return Status::InvalidArgument(std::string(knob) + " '" + value + "' is not one of " + names);
}

}  // namespace

Status Config::from_env(Config* out, const std::function<const char*(const char*)>& getenv) {
  Config c;
#define HVD_READ_ENV(field, env, type, def, doc)                               \
  {                                                                           \
    const char* v = getenv("HVD_" env);                                       \
    const char* which = "HVD_" env;                                           \
    if (!v) {                                                                 \
      v = getenv("HOROVOD_" env);                                             \
      which = "HOROVOD_" env;                                                 \
    }                                                                         \
    if (v) {                                                                  \
      Status s = parse_value(#field, v, &c.field);                            \
      if (!s.ok()) return Status::InvalidArgument(std::string(which) + "=" + v + ": " + s.message()); \
    }                                                                         \
  }
  HVD_KNOBS(HVD_READ_ENV)
#undef HVD_READ_ENV
  HVD_RETURN_IF_ERROR(c.validate());
  *out = c;
  return Status::OK();
}

Status Config::from_process_env(Config* out) {
  return from_env(out, [](const char* n) { return std::getenv(n); });
}

Status Config::set(const std::string& name, const std::string& value) {
#define HVD_SET_ONE(field, env, type, def, doc)                         \
  if (name == #field || name == "HVD_" env || name == "HOROVOD_" env) { \
    Config next = *this;                                                \
    HVD_RETURN_IF_ERROR(parse_value(#field, value, &next.field));       \
    HVD_RETURN_IF_ERROR(next.validate());                               \
    *this = next;                                                       \
    return Status::OK();                                                \
  }
  HVD_KNOBS(HVD_SET_ONE)
#undef HVD_SET_ONE
  return Status::InvalidArgument("unknown knob '" + name + "'");
}

std::vector<std::pair<std::string, std::string>> Config::describe() const {
  std::vector<std::pair<std::string, std::string>> out;
#define HVD_DESCRIBE(field, env, type, def, doc) out.emplace_back(#field, show(field));
  HVD_KNOBS(HVD_DESCRIBE)
#undef HVD_DESCRIBE
  return out;
}

const char* Config::knob_doc(const std::string& field) {
#define HVD_DOC(f, env, type, def, doc) \
  if (field == #f) return doc;
  HVD_KNOBS(HVD_DOC)
#undef HVD_DOC
  return "";
}

Status Config::validate() const {
  if (fusion_threshold < 0) return Status::InvalidArgument("fusion_threshold must be >= 0");
  if (!(cycle_time_ms >= 0) || !std::isfinite(cycle_time_ms))
    return Status::InvalidArgument("cycle_time_ms must be a finite number >= 0");
  if (cache_capacity < 0) return Status::InvalidArgument("cache_capacity must be >= 0");
  if (rhd_threshold < 0) return Status::InvalidArgument("rhd_threshold must be >= 0");
  if (eager_allreduce_bytes < 0) return Status::InvalidArgument("eager_allreduce_bytes must be >= 0");
  if (pipeline_chunk <= 0) return Status::InvalidArgument("pipeline_chunk must be > 0");
  if (ranks_per_node < 0) return Status::InvalidArgument("ranks_per_node must be >= 0");
  if (stall_check_time_s <= 0) return Status::InvalidArgument("stall_check_time_s must be > 0");
  if (stall_shutdown_time_s < 0) return Status::InvalidArgument("stall_shutdown_time_s must be >= 0");
  if (autotune_warmup_samples < 0) return Status::InvalidArgument("autotune_warmup_samples must be >= 0");
  if (autotune_steps_per_sample < 1) return Status::InvalidArgument("autotune_steps_per_sample must be >= 1");
  if (autotune_bayes_opt_max_samples < 1)
    return Status::InvalidArgument("autotune_bayes_opt_max_samples must be >= 1");
  if (!(autotune_gaussian_process_noise > 0) || !std::isfinite(autotune_gaussian_process_noise))
    return Status::InvalidArgument("autotune_gaussian_process_noise must be a finite number > 0");
  HVD_RETURN_IF_ERROR(algorithms().status());
  LogLevel l;
  if (!parse_log_level(log_level, &l))
    return Status::InvalidArgument("log_level '" + log_level +
                                   "' is not one of trace|debug|info|warning|error");
  return Status::OK();
}

StatusOr<Algorithms> Config::algorithms() const {
  Algorithms a;
  HVD_ASSIGN_OR_RETURN(a.allreduce, parse_algorithm("allreduce_algorithm", allreduce_algorithm,
                                                    kAllreduceAlgorithms));
  HVD_ASSIGN_OR_RETURN(a.allgather, parse_algorithm("allgather_algorithm", allgather_algorithm,
                                                    kAllgatherAlgorithms));
  HVD_ASSIGN_OR_RETURN(a.broadcast, parse_algorithm("broadcast_algorithm", broadcast_algorithm,
                                                    kBroadcastAlgorithms));
  HVD_ASSIGN_OR_RETURN(
      a.alltoall, parse_algorithm("alltoall_algorithm", alltoall_algorithm, kAlltoallAlgorithms));
  HVD_ASSIGN_OR_RETURN(a.reducescatter,
                       parse_algorithm("reducescatter_algorithm", reducescatter_algorithm,
                                       kReducescatterAlgorithms));
  return a;
}

bool parse_log_level(const std::string& text, LogLevel* out) {
  // Any case, as Horovod reads HOROVOD_LOG_LEVEL (horovodrun --log-level takes INFO, ...);
  // fatal is Horovod's level above error, which here is error.
  static const std::pair<const char*, LogLevel> kLevels[] = {
      {"trace", LogLevel::kTrace},     {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
      {"warning", LogLevel::kWarning}, {"warn", LogLevel::kWarning}, {"error", LogLevel::kError},
      {"fatal", LogLevel::kError}};
  std::string s = text;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [n, l] : kLevels) {
    if (s == n) {
      *out = l;
      return true;
    }
  }
  return false;
}

}  // namespace hvd
