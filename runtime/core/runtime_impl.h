// Internals of hvd::Runtime: the tensor queue and the cycle's work; the loop is the
// Scheduler's (scheduler.h), the sets ProcessSets' (process_sets.h), execution the
// Executor's (executor.h). Everything reaches the outside world only through the Platform,
// Transport and Device it was built with.
#pragma once

#include <atomic>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/autotune.h"
#include "core/handle.h"
#include "core/logging.h"
#include "core/process_sets.h"
#include "core/scheduler.h"
#include "hvd/request.h"
#include "hvd/runtime_options.h"
#include "hvd/timeline.h"

namespace hvd {

/// The negotiation request of a submitted operation on rank `rank` of its set (enqueue.cc).
TensorRequest to_message(const std::string& name, const PendingOp& q, int rank);

/// The runtime behind hvd::Runtime: start-up agreement, the enqueue funnel, and what one
/// background cycle does (negotiate, execute, fail). When cycles run is the Scheduler's;
/// the process sets are ProcessSets'; a response runs in an Executor.
class RuntimeImpl {
 public:
  explicit RuntimeImpl(RuntimeOptions opts);
  ~RuntimeImpl();
  Status start();
  Status shutdown();
  bool running() const { return running_; }
  Handle enqueue(OpRequest req);
  /// A group's requests, all queued or all refused (enqueue.cc).
  std::vector<Handle> enqueue_group(std::vector<OpRequest> reqs);
  Status add_process_set(const std::vector<int>& ranks, int* id);
  Status remove_process_set(int id);
  Status start_timeline(const std::string& path, bool mark_cycles);
  Status stop_timeline();
  Transport& world() const { return *opts_.transport; }
  const Config& config() const { return start_config_; }
  RuntimeStats stats() const;
  AutotuneState autotune_state() const;
  void set_cycle_hook(std::function<void(double)> hook);
  int next_group_id() { return group_counter_++; }

 private:
  /// enqueue()'s body: a request it queues takes *cb into its handle (*cb is then empty).
  Handle submit(OpRequest req, DoneCallback* cb);
  Status validate(const OpRequest& req) const;
  bool has_work_locked() const;
  bool cycle_body(double started);
  void fail_all(const Status& s);
  void drop_removed_sets();
  /// `now`: the platform time if the caller just read it (< 0: read it).
  Status perform(ProcessSet& ps, const Response& r, const void* reduced = nullptr, double now = -1);
  double ts_us(double t) const { return (t - opts_.time_origin) * 1e6; }
  // Autotune (runtime/core/autotune_runtime.cc).
  void start_autotune();
  void autotune_end_of_cycle(const std::optional<Tunables>& received, int64_t bytes);
  void apply_tunables(const Tunables& t);

  RuntimeOptions opts_;     // opts_.config: the live knobs (the loop applies autotune changes)
  Config start_config_;     // the knobs as started (what config() returns)
  Algorithms algorithms_;   // the *_algorithm knobs, parsed at start
  Logger log_;
  std::shared_ptr<CompletionSignal> signal_;
  std::unique_ptr<Mutex> queue_mu_;
  std::unique_ptr<Scheduler> scheduler_;  // the background loop (made at start)
  std::unique_ptr<ProcessSets> sets_;     // made at start
  // The timeline: opts_.timeline (a writer the world shares), else this rank's own file,
  // which start_timeline()/stop_timeline() replace at run time. The cycle thread reads
  // live_timeline_ (under the queue mutex) whenever it takes requests and works with that
  // snapshot, so a writer being replaced lives on until the cycle thread lets go of it.
  std::shared_ptr<TimelineWriter> live_timeline_;   // guarded by queue mutex
  bool live_mark_cycles_ = false;                   // guarded by queue mutex
  std::shared_ptr<TimelineWriter> cycle_timeline_;  // cycle thread: the snapshot in use
  TimelineWriter* timeline_ = nullptr;              // cycle thread: what it writes to
  bool mark_cycles_ = false;                        // cycle thread
  void snapshot_timeline_locked();
  bool running_ = false;
  bool stopped_ = false;             // guarded by queue mutex: a cycle ended the runtime
  Status failure_;                   // guarded by queue mutex
  std::atomic<int> group_counter_{0};  // enqueuing threads (TF kernels) may race
  int add_set_calls_ = 0;
  RuntimeStats stats_;       // guarded by queue mutex (caller_cycles: the scheduler's)
  int64_t cycle_index_ = 0;  // cycle thread: the current cycle, from 1
  std::unique_ptr<ParameterManager> tuner_;  // rank 0 with autotune on
  bool awaiting_tunables_ = false;   // rank 0: announced, not yet applied
  AutotuneState tuned_;              // guarded by queue mutex
  std::function<void(double)> cycle_hook_;  // guarded by hook_mu_ (Runtime::set_cycle_hook)
  std::unique_ptr<Mutex> hook_mu_;          // held while the hook runs and while it is set
  std::atomic<bool> hook_set_{false};       // a hook is set: the cycle takes hook_mu_
  // cycle_body's lists, reused (only the thread running the cycle touches them).
  std::vector<ProcessSet*> cycle_sets_;
  std::vector<RequestRef> cycle_incoming_;
};

}  // namespace hvd
