// A simulated world: np ranks, each an S4U actor on its GPU host of a SimGrid model of
// the cluster, each with the real Platform/Transport/Device seams implemented over
// SimGrid. simulate() runs the real hvd::Runtime on every rank; simulate_ranks() hands out
// the bare seams (for algorithm-level tests).
//
// SimGrid's engine is a process-wide singleton that cannot be restarted: a process runs
// at most one simulation. run_isolated() (isolate.h) forks a child per simulation.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hvd/config.h"
#include "hvd/device.h"
#include "hvd/platform.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"
#include "hvd/sim/cluster.h"
#include "hvd/sim/nccl_model.h"
#include "hvd/status.h"
#include "hvd/timeline.h"
#include "hvd/transport.h"

namespace hvd::sim {

/// Everything one simulation is built from.
struct WorldOptions {
  ClusterSpec cluster;               ///< the machine
  SimModelSpec model;                ///< SimGrid modelling choices
  DeviceCostSpec gpu_cost;           ///< GPU memory operation costs
  int np = 1;                        ///< ranks (GPUs used, filled server by server)
  bool with_data = false;            ///< move and reduce real bytes (small runs only)
  /// GPU collectives on NCCL (nccl.enabled, runtime.gpu_operations "nccl"): the transports
  /// offer native collectives timed by the NCCL model (hvd/sim/nccl_model.h) with these
  /// settings (checked before a run by check_nccl_run, hvd/sim/scenario.h).
  NcclSettings nccl;
  Config config;                     ///< runtime knobs (simulate() only)
  TimelineWriter* timeline = nullptr;  ///< shared timeline in simulated time (may be null)
  std::ostream* log = nullptr;       ///< runtime log stream (default std::cerr)
};

/// The seams of one simulated rank (valid inside the body only): the simulated clock,
/// actors and s4u synchronisation; the world group over the modelled network; the rank's
/// host memory and its simulated GPU.
struct RankSeams : Seams {
  int rank = 0;  ///< world rank
};

/// Facts about a finished simulation.
struct WorldInfo {
  double simulated_s = 0;     ///< simulated time at the end
  int64_t actors = 0;         ///< actors created (ranks + background loops)
  std::string network_model;  ///< the SimGrid model in effect
};

/// Runs body(seams) on o.np actors without a runtime. Once per process.
Status simulate_ranks(const WorldOptions& o, const std::function<void(RankSeams&)>& body,
                      WorldInfo* info = nullptr);

/// Runs body(rt, seams) on o.np actors, each with its own started hvd::Runtime built from
/// the simulated seams and o.config; shuts every runtime down after the body. Once per
/// process. Returns the first failed start/shutdown.
Status simulate(const WorldOptions& o, const std::function<void(Runtime&, RankSeams&)>& body,
                WorldInfo* info = nullptr);

/// Checks a cluster/np combination without simulating (the errors simulate() would give).
Status check_world(const WorldOptions& o);

}  // namespace hvd::sim
