// The process sets of one runtime and the one place they are registered: the world at
// start, then the ADD_PROCESS_SET / REMOVE_PROCESS_SET responses, which every rank runs
// in the same cycle and order, so set ids agree without communication.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/controller.h"
#include "core/handle.h"
#include "core/logging.h"
#include "hvd/device.h"
#include "hvd/request.h"
#include "hvd/transport.h"

namespace hvd {

/// What the runtime keeps of a caller's OpRequest from enqueue to completion: what
/// negotiation announces (RequestRef) and execution reads. enqueue() validated the rest.
/// 88 bytes where an OpRequest takes about 230: a simulation holds every rank's pending
/// gradients at once (1.3 million at 4,096 ranks of ResNet-101).
struct PendingOp {
  /// The list-valued fields few operations have.
  struct Rare {
    std::vector<int64_t> splits;  ///< alltoall: rows sent to each peer
    std::vector<int> set_ranks;   ///< add_process_set: the members
  };
  void* input = nullptr;       ///< OpRequest::input.data
  void* output = nullptr;      ///< OpRequest::output.data; broadcast: null unless it holds the input's bytes
  std::vector<int64_t> shape;  ///< OpRequest::input.shape
  double prescale = 1.0;
  double postscale = 1.0;
  int32_t root = 0;
  int32_t group_id = -1;
  int32_t group_size = 0;
  OpType op = OpType::kAllreduce;
  DataType dtype = DataType::kFloat32;
  ReduceOp reduce_op = ReduceOp::kAverage;
  DeviceKind device = DeviceKind::kCPU;
  bool average = false;        ///< OpSpec::average: reduce_op and postscale are lowered
  std::unique_ptr<Rare> rare;  ///< null when both lists are empty

  PendingOp() = default;
  /// Takes what it keeps out of `q` (its shape and lists are moved).
  explicit PendingOp(OpRequest&& q);
  /// Input bytes.
  size_t bytes() const { return static_cast<size_t>(num_elements(shape)) * dtype_size(dtype); }
  /// The request's spec, as its TensorRequest would carry it.
  OpSpec spec() const { return OpSpec{op, dtype, reduce_op, device, root, prescale, postscale, average}; }
  const std::vector<int64_t>& splits() const;
  const std::vector<int>& set_ranks() const;
};

/// A tensor submitted on this rank and not yet finished.
struct TensorEntry {
  PendingOp req;                       ///< what the caller asked for (its name: the table key)
  std::shared_ptr<HandleImpl> handle;  ///< where the outcome goes
  double enqueued_at = 0;              ///< platform time of enqueue
  bool announced = false;              ///< taken from `incoming` into a negotiation
};

/// One process set as seen by a member rank.
struct ProcessSet {
  int id = 0;                                          ///< 0 = the world
  std::unique_ptr<Transport> owned;                    ///< the set's group (null for the world)
  Transport* t = nullptr;                              ///< the set's group
  std::unique_ptr<Transport> local, cross;             ///< node / cross-node groups (hierarchical)
  std::unique_ptr<Controller> controller;              ///< negotiation state
  std::unordered_map<std::string, TensorEntry> table;  ///< pending tensors (guarded by queue mutex)
  /// Table entries not yet announced, in submission order (guarded by queue mutex). Their
  /// requests are built when a cycle takes them: a pending tensor is held once, in the
  /// table (unordered_map nodes do not move).
  std::vector<std::pair<const std::string, TensorEntry>*> incoming;
  DeviceBuffer fusion[2];               ///< fusion buffer per DeviceKind
  DeviceBuffer scratch[2];              ///< receive staging per DeviceKind
};

/// Every process set this rank knows: the ones it belongs to, and the size of every set
/// (by id; not its members: O(np) per rank). Membership changes under the runtime's queue
/// mutex; only the thread running the cycle changes it.
class ProcessSets {
 public:
  /// Sets are built with the live knobs `config`, `log`, and the devices (gpu may be null).
  ProcessSets(Platform& p, const Config& config, const Logger& log, Device* cpu, Device* gpu,
              Mutex& queue_mu);

  /// At start: the world set (id 0) over `t`.
  Status add_world(Transport& t);
  /// ADD_PROCESS_SET of `ranks`: returns the new set's id; a member passes the set's group
  /// `sub` (split by the caller, collectively), a non-member null.
  StatusOr<int> add(const std::vector<int32_t>& ranks, std::unique_ptr<Transport> sub);
  /// REMOVE_PROCESS_SET: from now on `id` does not exist; a member keeps the set until
  /// take_removed() (the cycle still walks it).
  void remove(int id);
  /// The sets removed since the last call.
  std::vector<std::unique_ptr<ProcessSet>> take_removed_locked();

  /// Autotune: the cache switch of sets created from now on (nullopt: the knobs').
  void follow_cache_switch(std::optional<bool> on);
  /// Autotune: switches the response cache of every set, and of sets created later.
  void set_cache_enabled(bool on);

  /// Size of set `id`: 0 once removed, -1 when no set ever had that id. (Read without the
  /// lock by enqueue's validation; only the cycle thread changes sizes.)
  int size_of(int id) const;
  /// The member set `id`, or null (queue mutex held).
  ProcessSet* find_locked(int id);
  /// The sets this rank belongs to, by id (queue mutex held, or the cycle thread).
  const std::map<int, std::unique_ptr<ProcessSet>>& members() const { return sets_; }
  /// The world set.
  ProcessSet& world() { return *sets_.at(0); }

 private:
  Status init(ProcessSet& ps);

  Platform& p_;
  const Config& config_;
  const Logger& log_;
  Device* cpu_;
  Device* gpu_;
  Mutex& mu_;
  std::map<int, std::unique_ptr<ProcessSet>> sets_;   // only sets this rank belongs to
  std::vector<int> sizes_;                            // every set's size, by id; 0: removed
  std::vector<std::unique_ptr<ProcessSet>> removed_;  // removed this cycle (guarded by mu_)
  std::optional<bool> cache_switch_;                  // guarded by mu_
};

}  // namespace hvd
