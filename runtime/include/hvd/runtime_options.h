// What a runtime is built from (RuntimeOptions) and what it reports (RuntimeStats,
// AutotuneState): plain data, below the facade (hvd/runtime.h) and the core alike.
#pragma once

#include <cstdint>
#include <ostream>

#include "hvd/config.h"
#include "hvd/seams.h"

namespace hvd {

class TimelineWriter;

/// Counters a runtime keeps (for benchmarks and autotune).
struct RuntimeStats {
  int64_t cycles = 0;              ///< background loop iterations
  int64_t caller_cycles = 0;       ///< of those, run by a caller blocked in wait() (caller_drives)
  int64_t cache_hits = 0;          ///< tensors negotiated through the response cache
  int64_t cache_misses = 0;        ///< tensors negotiated through the coordinator
  int64_t eager_tensors = 0;       ///< of the cache hits, allreduces reduced on the bit exchange
  int64_t responses = 0;           ///< responses executed (after fusion)
  int64_t tensors = 0;             ///< tensors completed
  int64_t bytes_allreduced = 0;    ///< payload bytes of completed allreduces
  double negotiation_s = 0;        ///< time spent in negotiation
  double execution_s = 0;          ///< time spent executing collectives
};

/// What the autotuner (HOROVOD_AUTOTUNE) has set: the values every rank runs with now.
/// Changes take effect on all ranks at the end of the same background cycle.
struct AutotuneState {
  bool enabled = false;                 ///< the autotune knob is on
  bool done = false;                    ///< the final setting is in effect
  int64_t done_cycle = -1;              ///< cycle at whose end the final setting took effect
  int64_t changes = 0;                  ///< settings applied so far
  int samples = 0;                      ///< samples scored (rank 0; 0 elsewhere)
  double best_score = 0;                ///< best bytes allreduced per second (rank 0)
  int64_t fusion_threshold = 0;         ///< bytes
  double cycle_time_ms = 0;             ///< background loop period
  bool cache_enabled = false;           ///< response cache in use
  bool hierarchical_allreduce = false;  ///< hierarchical allreduce in use
  bool hierarchical_allgather = false;  ///< hierarchical allgather in use
};

/// Everything a Runtime is built from: the rank's seams (borrowed, they must outlive it)
/// and how it runs. Every world builds it alike: RuntimeOptions{seams, config, ...}.
struct RuntimeOptions : Seams {
  Config config;                          ///< knobs
  TimelineWriter* timeline = nullptr;     ///< shared writer; null: open config.timeline
  std::ostream* log = nullptr;            ///< log stream (default std::cerr)
  double time_origin = 0;                 ///< platform time of timeline ts = 0
};

}  // namespace hvd
