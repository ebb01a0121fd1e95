// Scenario files for hvdsim (docs/simulator.md, scenarios/schema.json): the cluster, the
// workload, runtime knobs (the names of Config fields / HVD_* variables), the sweep and
// simulation choices. Units are strings ("25Gbps", "12GBps", "5us", "64MiB"). Every error
// names the file, the JSON path, the value and what was expected.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hvd/config.h"
#include "hvd/replay/sharded_step.h"
#include "hvd/report/report.h"
#include "hvd/sim/cluster.h"
#include "hvd/sim/nccl_model.h"
#include "hvd/status.h"
#include "hvd/workloads/optimizer.h"
#include "hvd/workloads/precision.h"

namespace hvd::sim {

/// What to train.
struct WorkloadSpec {
  std::vector<std::string> models;  ///< model registry names or trace files
  int batch_size = 64;              ///< per-GPU batch
  int steps = 3;                    ///< measured steps
  int warmup_steps = 1;             ///< steps before measuring
  double optimizer_s = 0;           ///< optimizer update per step (seconds)
  int accumulation_steps = 1;       ///< micro-batches per allreduce (backward_passes_per_step)
  bool allreduce_post_accumulation = false;  ///< allreduce after the K-th backward pass, not during it
  workloads::Optimizer optimizer = workloads::Optimizer::kSgd;  ///< update rule (its memory traffic beyond SGD's)
  workloads::Precision precision = workloads::Precision::kFp32;  ///< compute and gradient bytes
  int seq_len = 0;                  ///< transformer sequence length (0: the model's own; written, it must be >= 1)
  replay::Sharding sharding = replay::Sharding::kNone;  ///< how state is spread (docs/models.md, "Sharding")
  int shard_size = 0;               ///< hsdp: ranks of a shard group (0: the cluster's NVLink domain)
  std::string param_dtype;          ///< parameters on the wire ("fp32", "bf16", "fp16", "fp8"; "": the precision's)
  std::string grad_dtype;           ///< gradients on the wire (same names; "": the precision's)
  int max_tuning_steps = 200;       ///< runtime.autotune: unmeasured steps allowed for tuning
};

/// One point of the sweep, fully resolved.
struct ScenarioPoint {
  ClusterSpec cluster;             ///< the machine
  DeviceCostSpec device;           ///< GPU memory operation costs
  SimModelSpec simulation;         ///< SimGrid modelling choices
  WorkloadSpec workload;           ///< what to train
  Config config;                   ///< runtime knobs (defaults + scenario "runtime")
  std::map<std::string, std::string> knobs;  ///< the knobs the scenario set, as written
  NcclSettings nccl;               ///< runtime.gpu_operations and NCCL's variables (runtime.nccl_*)
  std::vector<int> np;             ///< ranks to simulate
  bool with_data = false;          ///< real bytes
  int parallel = 2;                ///< simulations run at once
  int seeds = 1;                   ///< draws of the random parameters (simulation.seeds,
                                   ///< hvdsim --seeds): GPU-speed seeds cluster.gpu_speed_seed
                                   ///< + 0 .. seeds-1, reported as mean and [min-max]
  std::string label;               ///< "fusion_threshold=32MiB" ("" when not swept)
  std::string what_if;             ///< name of the what-if this point applies ("" = baseline)
};

/// A loaded scenario: its points (one unless swept) in sweep order.
struct Scenario {
  std::string source;               ///< file name (for messages and the report)
  std::string name;                 ///< "name" field
  std::vector<ScenarioPoint> points;  ///< cartesian product of the non-np sweep axes
  std::vector<report::Reference> reference;  ///< published efficiencies ("reference")
};

/// Parses scenario `text` (from `source`), applying `overrides` ("path=value", the value
/// JSON or a bare string) first. Errors are kInvalidArgument with one line:
/// "<source>: <json path>: <value> is not <what was expected>".
Status parse_scenario(const std::string& text, const std::string& source,
                      const std::vector<std::string>& overrides, Scenario* out);

/// Reads and parses a scenario file.
Status load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                     Scenario* out);

/// The NCCL checks of a run of `np` ranks of `pt`, before it is simulated (a training run's,
/// and the runtime column of a collective sweep on NCCL). NCCL's variables and
/// cluster.network.sharp act on NCCL's collectives only, so without runtime.gpu_operations
/// "nccl" they are refused rather than ignored; with it, so are the runtime's own allreduce
/// choices (runtime.allreduce_algorithm other than auto or native,
/// runtime.hierarchical_allreduce), a cluster the NCCL model does not price (nccl_machine),
/// and, as NCCL refuses it ("no algorithm/protocol available"), an NCCL_ALGO / NCCL_PROTO
/// that cannot run the job's allreduce on its machine. kInvalidArgument, one line.
Status check_nccl_run(const ScenarioPoint& pt, int np);

/// Loads the platform XML `file` in a child process (SimGrid aborts on what it cannot use)
/// and checks that it has `np` hosts and a route between every two ranks' hosts (all pairs
/// up to 256 ranks, else each rank with rank 0 and its ring neighbours). A SimGrid abort
/// becomes the error: kInvalidArgument, one line. For hvdsim, before its runs.
Status check_platform_file(const std::string& file, int np);

}  // namespace hvd::sim
