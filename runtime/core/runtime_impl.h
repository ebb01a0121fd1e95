// Internals of hvd::Runtime: the tensor queue, process sets, the background loop and the
// executor of negotiated responses. Everything reaches the outside world only through
// the Platform, Transport and Device it was built with.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectives/collective.h"
#include "core/autotune.h"
#include "core/controller.h"
#include "core/handle.h"
#include "core/logging.h"
#include "hvd/runtime.h"
#include "hvd/timeline.h"

namespace hvd {

/// A tensor submitted on this rank and not yet finished.
struct TensorEntry {
  OpRequest req;                        ///< what the caller asked for
  std::shared_ptr<HandleImpl> handle;   ///< where the outcome goes
  double enqueued_at = 0;               ///< platform time of enqueue
};

/// One process set as seen by a member rank.
struct ProcessSet {
  int id = 0;                                   ///< 0 = the world
  std::unique_ptr<Transport> owned;             ///< the set's group (null for the world)
  Transport* t = nullptr;                       ///< the set's group
  std::unique_ptr<Transport> local, cross;      ///< node / cross-node groups (hierarchical)
  std::unique_ptr<Controller> controller;       ///< negotiation state
  std::unordered_map<std::string, TensorEntry> table;  ///< pending tensors (guarded by queue mutex)
  std::vector<TensorRequest> incoming;                ///< not yet announced (guarded by queue mutex)
  DeviceBuffer fusion[2];                       ///< fusion buffer per DeviceKind
  DeviceBuffer scratch[2];                      ///< receive staging per DeviceKind
};

/// The runtime behind hvd::Runtime.
class RuntimeImpl {
 public:
  explicit RuntimeImpl(RuntimeOptions opts);
  ~RuntimeImpl();
  Status start();
  Status shutdown();
  bool running() const { return running_; }
  Handle enqueue(OpRequest req);
  Status add_process_set(const std::vector<int>& ranks, int* id);
  Status remove_process_set(int id);
  Transport& world() const { return *opts_.transport; }
  const Config& config() const { return start_config_; }
  RuntimeStats stats() const;
  AutotuneState autotune_state() const;
  std::shared_ptr<CompletionSignal> signal() const { return signal_; }
  int next_group_id() { return group_counter_++; }
  /// Runs background cycles on the calling thread until `h` is done, while no other
  /// thread runs one and the loop is event driven (the caller_drives knob); returns as
  /// soon as it may not (the caller then waits for the loop as usual).
  void drive_until(HandleImpl& h);

 private:
  friend class Executor;
  Status validate(const OpRequest& req) const;
  Status init_process_set(ProcessSet& ps);
  void loop();
  bool run_cycle();
  bool cycle_body();
  void end_drive(bool keep_running);
  bool wait_for_cycle();
  bool has_work_locked() const;
  void fail_all(const Status& s);
  void drop_removed_sets();
  Status perform(ProcessSet& ps, const Response& r);
  double ts_us(double t) const { return (t - opts_.time_origin) * 1e6; }
  // Autotune (runtime/core/autotune_runtime.cc).
  void start_autotune();
  void autotune_end_of_cycle(const std::optional<Tunables>& received, int64_t bytes);
  void apply_tunables(const Tunables& t);

  RuntimeOptions opts_;     // opts_.config: the live knobs (the loop applies autotune changes)
  Config start_config_;     // the knobs as started (what config() returns)
  Logger log_;
  std::shared_ptr<CompletionSignal> signal_;
  std::unique_ptr<Mutex> queue_mu_;
  std::unique_ptr<CondVar> wake_cv_;  // cycle_time 0: enqueue wakes the loop at once
  std::unique_ptr<TimelineWriter> own_timeline_;
  TimelineWriter* timeline_ = nullptr;
  std::map<int, std::unique_ptr<ProcessSet>> sets_;   // only sets this rank belongs to
  std::vector<int> set_sizes_;                       // every set's size, by id (not its
                                                     // members: O(np) per rank); 0: removed
  std::vector<std::unique_ptr<ProcessSet>> removed_sets_;  // removed this cycle, dropped at
                                                           // its end (the cycle walks the sets)
  std::unique_ptr<Activity> loop_activity_;
  bool running_ = false;
  bool shutdown_requested_ = false;  // guarded by queue mutex
  bool stopped_ = false;             // guarded by queue mutex
  Status failure_;                   // guarded by queue mutex
  int group_counter_ = 0;
  int process_set_counter_ = 0;
  int add_set_calls_ = 0;
  std::atomic<double> last_cycle_{0};
  double last_cycle_end_ = 0;        // guarded by queue mutex: when the last cycle ended
  bool driving_ = false;             // guarded by queue mutex: a thread is running a cycle
  bool loop_done_ = false;
  bool loop_awaits_driver_ = false;  // guarded by queue mutex: the loop waits for driving_           // guarded by queue mutex: a cycle ended the runtime
  bool caller_may_drive_ = false;    // set at start: caller_drives on, no autotune, no real GPU
  RuntimeStats stats_;               // guarded by queue mutex
  int64_t cycle_index_ = 0;          // loop thread: the current cycle, from 1
  std::atomic<bool> event_driven_{false};  // cycle_time_ms == 0: enqueue wakes the loop
  std::unique_ptr<ParameterManager> tuner_;  // rank 0 with autotune on
  bool awaiting_tunables_ = false;   // rank 0: announced, not yet applied
  AutotuneState tuned_;              // guarded by queue mutex
};

}  // namespace hvd
