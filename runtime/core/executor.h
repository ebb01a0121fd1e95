// Executor: runs one negotiated response on one rank.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "core/process_sets.h"
#include "hvd/runtime_options.h"
#include "hvd/timeline.h"

namespace hvd {

struct AllreduceAlgo;

/// Exactly what an Executor reaches of its runtime.
struct ExecutorEnv {
  Platform& platform;
  const Config& config;      ///< the live knobs (autotune changes them between cycles)
  const Algorithms& algorithms;  ///< the *_algorithm knobs, parsed once at start
  Device* cpu;               ///< host device
  Device* gpu;               ///< null without a GPU
  Mutex& queue_mu;           ///< guards the sets' tables and `stats`
  RuntimeStats& stats;       ///< responses, tensors, bytes, execution time (under queue_mu)
  TimelineWriter* timeline;  ///< null: no timeline
  int world_rank;            ///< this rank in the world (the timeline's pid)
  double time_origin;        ///< platform time of the timeline's zero
  int64_t cycle;             ///< the cycle running (completed handles record it)
  ProcessSets& sets;         ///< ADD/REMOVE_PROCESS_SET register here
  double ts_us(double t) const { return (t - time_origin) * 1e6; }
};

/// Runs one response on one rank.
class Executor {
 public:
  /// `reduced`: an allreduce of one tensor already reduced on the response-cache bit
  /// exchange (the eager path); its result is copied out and postscaled.
  Executor(const ExecutorEnv& env, ProcessSet& ps, const Response& r, const void* reduced = nullptr)
      : env_(env), ps_(ps), r_(r), p_(env.platform), cfg_(env.config), reduced_(reduced) {}

  /// `now`: the platform time if the caller just read it (< 0: read it here).
  Status run(double now = -1);

  /// The bodies of the op table's rows (core/op_table.cc): one response of that op.
  Status allreduce();
  Status allgather();
  Status broadcast();
  Status alltoall();
  Status reducescatter();
  Status barrier();
  Status join();
  Status add_process_set();
  Status remove_process_set();

 private:
  /// The allreduce algorithm for `bytes` (the knob, resolved for this group and size).
  const AllreduceAlgo& choose_allreduce(int64_t bytes) const;
  Status allreduce_with(void* buf, int64_t count);
  Status allreduce_in_place_pieces(int64_t total, const AllreduceAlgo& algo);
  void take_entries();
  void complete_all(const Status& s);
  /// Runs `fn` and records it as a timeline phase called `name`.
  Status phase(std::string_view name, std::string_view cat, const std::function<Status()>& fn);
  Device& dev() const;
  int kind() const { return r_.device == DeviceKind::kGPU ? 1 : 0; }
  CollectiveContext ctx(Transport& t) {
    const double dl = cfg_.stall_shutdown_time_s > 0 ? p_.now() + cfg_.stall_shutdown_time_s : kNoDeadline;
    return CollectiveContext{t, dev(), ps_.scratch[kind()], cfg_.pipeline_chunk, dl};
  }
  NativeCollectives* native(DataType dt) const {
    NativeCollectives* n = ps_.t->native();
    return (n && n->supports(dt)) ? n : nullptr;
  }
  std::string native_name(const char* op) const { return ps_.t->native()->prefix() + "_" + op; }

  const ExecutorEnv& env_;
  ProcessSet& ps_;
  const Response& r_;
  Platform& p_;
  const Config& cfg_;
  const void* reduced_;
  std::vector<std::optional<TensorEntry>> entries_;
  std::string algorithm_;
};

}  // namespace hvd
