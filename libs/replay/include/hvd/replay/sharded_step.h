// Sharded data parallelism (ZeRO stages 1-2, FSDP full shard, HSDP): what a step of each
// mode communicates, per FSDP unit (one layer of the plan), and its replay on the runtime.
// The collectives are the runtime's own allgather / reducescatter / allreduce requests, so a
// simulated run prices them as every other request: NCCL's model where the job runs NCCL,
// the runtime's algorithms over the simulated network otherwise. docs/models.md, "Sharding".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hvd/status.h"
#include "hvd/types.h"
#include "hvd/workloads/step_plan.h"

namespace hvd::replay {

/// How parameters, gradients and optimizer state are spread over the ranks.
enum class Sharding : uint8_t {
  kNone,   ///< DDP: every rank holds everything; one allreduce of the gradients
  kZero1,  ///< optimizer state sharded: gradients reduce-scattered once a step, parameters allgathered after the update
  kZero2,  ///< + gradients sharded: reduce-scattered every micro-batch as backward makes them
  kFsdp,   ///< + parameters sharded (ZeRO-3, FSDP FULL_SHARD): allgathered before each unit's forward and backward
  kHsdp,   ///< FSDP inside a shard group (a node or NVLink domain), replicas allreduce the gradient shards
};

/// "none", "zero1", "zero2", "fsdp", "hsdp"; nullopt for anything else.
std::optional<Sharding> parse_sharding(std::string_view name);
/// The name parse_sharding takes.
const char* sharding_name(Sharding s);

/// A sharded job's choices.
struct ShardingOptions {
  Sharding mode = Sharding::kNone;              ///< how the state is spread
  int shard_size = 0;                           ///< ranks of one shard group (consecutive ranks); 0: all ranks
  DataType param_dtype = DataType::kFloat32;    ///< parameters as allgathered
  DataType grad_dtype = DataType::kFloat32;     ///< gradients as reduce-scattered and allreduced
};

/// One FSDP unit: a layer of the plan with its parameters (layers without any run in it).
struct ShardUnit {
  std::string name;      ///< layer name
  int64_t elements = 0;  ///< parameters of the unit
  double fwd_s = 0;      ///< forward compute
  double bwd_s = 0;      ///< backward compute
};

/// The plan's layers as units, forward order; a plan without layers is one unit.
std::vector<ShardUnit> shard_units(const workloads::StepPlan& plan);

/// What one rank's step submits: calls and bytes per kind, bytes as nccl-tests sizes a call
/// (allgather and reducescatter: the whole gathered buffer; allreduce: the buffer).
struct ShardTraffic {
  int64_t allgather_calls = 0, allgather_bytes = 0;          ///< parameters gathered
  int64_t reducescatter_calls = 0, reducescatter_bytes = 0;  ///< gradients reduce-scattered
  int64_t allreduce_calls = 0, allreduce_bytes = 0;          ///< gradients (shards under hsdp) allreduced
};

/// The analytic count for `world` ranks and `accumulation_steps` micro-batches a step: each
/// unit's flat parameter padded to a multiple of the shard group, as FSDP pads it.
ShardTraffic shard_traffic(const std::vector<ShardUnit>& units, const ShardingOptions& o, int world,
                           int accumulation_steps);

/// The shard group size the options give on `world` ranks, or an error naming why not.
Status resolve_shard_size(const ShardingOptions& o, int world, int* shard_size);

}  // namespace hvd::replay
