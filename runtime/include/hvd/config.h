// Runtime knobs. Each is declared once in HVD_KNOBS below: field, environment variable
// suffix (read as HVD_<SUFFIX>, else HOROVOD_<SUFFIX>), type, default, one-line doc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hvd/status.h"

namespace hvd {

// clang-format off
#define HVD_KNOBS(X) \
  X(fusion_threshold, "FUSION_THRESHOLD", int64_t, 128LL << 20, "tensor fusion buffer size in bytes (0 disables fusion)") \
  X(cycle_time_ms, "CYCLE_TIME", double, 1.0, "background loop cycle time in ms (0: start a cycle as soon as work is enqueued)") \
  X(caller_drives, "CALLER_DRIVES", bool, true, "cycle_time 0: a caller blocked in wait() runs the cycle itself when the loop is idle (no thread hand-off)") \
  X(cache_capacity, "CACHE_CAPACITY", int64_t, 1024, "response cache entries (0 disables the cache)") \
  X(hierarchical_allreduce, "HIERARCHICAL_ALLREDUCE", bool, false, "allreduce inside nodes, then across nodes") \
  X(hierarchical_allgather, "HIERARCHICAL_ALLGATHER", bool, false, "allgather inside nodes, then across nodes") \
  X(allreduce_algorithm, "ALLREDUCE_ALGORITHM", std::string, "auto", "auto|ring|pipelined_ring|lockstep_ring|rhd|direct|hierarchical|native") \
  X(rhd_threshold, "RHD_THRESHOLD", int64_t, 64LL << 10, "auto: recursive halving-doubling below this many bytes") \
  X(eager_allreduce_bytes, "EAGER_ALLREDUCE_BYTES", int64_t, 4096, "cached CPU allreduces of at most this many bytes per cycle ride on the response-cache bit exchange, reduced there (0 disables)") \
  X(allgather_algorithm, "ALLGATHER_ALGORITHM", std::string, "auto", "auto|ring|hierarchical|native") \
  X(broadcast_algorithm, "BROADCAST_ALGORITHM", std::string, "auto", "auto|tree|pipeline|native") \
  X(alltoall_algorithm, "ALLTOALL_ALGORITHM", std::string, "auto", "auto|pairwise|native") \
  X(reducescatter_algorithm, "REDUCESCATTER_ALGORITHM", std::string, "auto", "auto|ring|native") \
  X(pipeline_chunk, "PIPELINE_CHUNK", int64_t, 1LL << 20, "segment size in bytes of pipelined ring/broadcast steps") \
  X(timeline, "TIMELINE", std::string, "", "timeline file (Chrome trace JSON); empty disables") \
  X(timeline_mark_cycles, "TIMELINE_MARK_CYCLES", bool, false, "record CYCLE_START marks") \
  X(stall_check_disable, "STALL_CHECK_DISABLE", bool, false, "turn the stall inspector off") \
  X(stall_check_time_s, "STALL_CHECK_TIME_SECONDS", double, 60.0, "warn about tensors pending longer than this") \
  X(stall_shutdown_time_s, "STALL_SHUTDOWN_TIME_SECONDS", double, 0.0, "fail stalled operations after this (0: never)") \
  X(autotune, "AUTOTUNE", bool, false, "tune fusion threshold, cycle time, then cache/hierarchical on/off online (rank 0 decides)") \
  X(autotune_log, "AUTOTUNE_LOG", std::string, "", "CSV log of autotune samples (written by rank 0)") \
  X(autotune_warmup_samples, "AUTOTUNE_WARMUP_SAMPLES", int64_t, 3, "autotune: samples discarded at start") \
  X(autotune_steps_per_sample, "AUTOTUNE_STEPS_PER_SAMPLE", int64_t, 10, "autotune: cycles with allreduce work per sample") \
  X(autotune_bayes_opt_max_samples, "AUTOTUNE_BAYES_OPT_MAX_SAMPLES", int64_t, 20, "autotune: Bayesian samples of fusion threshold x cycle time") \
  X(autotune_gaussian_process_noise, "AUTOTUNE_GAUSSIAN_PROCESS_NOISE", double, 0.8, "autotune: Gaussian-process noise (scores standardised)") \
  X(ranks_per_node, "RANKS_PER_NODE", int64_t, 0, "MPI: every k consecutive ranks of a host count as one node (0: the hosts); emulates a multi-node layout on one host") \
  X(log_level, "LOG_LEVEL", std::string, "warning", "trace|debug|info|warning|error (any case; fatal = error)")
// clang-format on

/// The *_algorithm knobs as the core compares them (Config::algorithms() parses the names).
enum class AllreduceAlgorithm : uint8_t {
  kAuto,
  kRing,
  kPipelinedRing,
  kLockstepRing,
  kRhd,
  kDirect,
  kHierarchical,
  kNative
};
enum class AllgatherAlgorithm : uint8_t { kAuto, kRing, kHierarchical, kNative };
enum class BroadcastAlgorithm : uint8_t { kAuto, kTree, kPipeline, kNative };
enum class AlltoallAlgorithm : uint8_t { kAuto, kPairwise, kNative };
enum class ReducescatterAlgorithm : uint8_t { kAuto, kRing, kNative };

/// Every collective's algorithm knob, parsed.
struct Algorithms {
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::kAuto;
  AllgatherAlgorithm allgather = AllgatherAlgorithm::kAuto;
  BroadcastAlgorithm broadcast = BroadcastAlgorithm::kAuto;
  AlltoallAlgorithm alltoall = AlltoallAlgorithm::kAuto;
  ReducescatterAlgorithm reducescatter = ReducescatterAlgorithm::kAuto;
};

/// The effective knob values of one runtime.
struct Config {
#define HVD_DECLARE_FIELD(field, env, type, def, doc) type field = def;
  HVD_KNOBS(HVD_DECLARE_FIELD)
#undef HVD_DECLARE_FIELD

  /// Reads every knob from `getenv` (HVD_ first, then HOROVOD_), starting from defaults.
  static Status from_env(Config* out, const std::function<const char*(const char*)>& getenv);
  /// Reads the process environment.
  static Status from_process_env(Config* out);
  /// Sets one knob by field or env name ("fusion_threshold", "HVD_FUSION_THRESHOLD",
  /// "HOROVOD_FUSION_THRESHOLD"); values accept units ("64MiB", "5ms" for times in ms).
  Status set(const std::string& name, const std::string& value);
  /// Every knob as "field=value" lines (for the start-up log).
  std::vector<std::pair<std::string, std::string>> describe() const;
  /// The doc of knob `field` (as HVD_KNOBS declares it; "" for no such knob; a literal): command
  /// lines show it as the flag's help, so the two cannot drift apart.
  static const char* knob_doc(const std::string& field);
  /// Checks ranges and enum values.
  Status validate() const;
  /// The *_algorithm knobs as enums; an unknown name fails with validate()'s message.
  StatusOr<Algorithms> algorithms() const;
};

/// Log levels in increasing severity.
enum class LogLevel { kTrace, kDebug, kInfo, kWarning, kError };
/// Parses a log level name; false if unknown.
bool parse_log_level(const std::string& s, LogLevel* out);

}  // namespace hvd
