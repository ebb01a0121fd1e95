// Scheduler: when and on which thread a runtime's background cycles run. Horovod paces
// them (a cycle every cycle_time_ms); with cycle_time_ms 0 the loop is event driven
// (enqueue wakes it), and a caller blocked in wait() may run the cycles itself while the
// loop is idle (drive_until, knob caller_drives). Either way cycles stay serial per rank,
// so the peers see the same sequence whichever thread runs them. What a cycle does is the
// runtime's (Scheduler::Work); the scheduler only owns the loop, its flags and its wake-ups.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "core/handle.h"
#include "hvd/config.h"
#include "hvd/platform.h"

namespace hvd {

/// The background loop of one runtime. Its flags are guarded by the runtime's queue mutex
/// (the work test reads the queues under the same lock).
class Scheduler final : public CycleDriver {
 public:
  /// What the loop runs.
  struct Work {
    /// Called with the queue mutex held: is anything enqueued or pending?
    std::function<bool()> has_work_locked;
    /// Runs one cycle that started at platform time `started`; false: the runtime stops.
    std::function<bool(double started)> cycle;
  };

  /// `live` is read every cycle (cycle_time_ms: autotune changes it); `queue_mu` guards
  /// the queues `work` looks at and this scheduler's flags.
  Scheduler(Platform& p, const Config& live, Mutex& queue_mu, Work work);

  /// Spawns the loop activity `name`. `caller_may_drive`: callers blocked in wait() may run
  /// cycles (caller_drives on, no autotune, no real GPU).
  void start(const std::string& name, bool caller_may_drive);
  /// Asks for shutdown (the next cycle tells the peers), then joins the loop.
  void stop();
  /// Follows a change of cycle_time_ms (0: event driven, enqueue wakes the loop).
  void set_event_driven(bool on) { event_driven_ = on; }

  /// With the queue mutex held, for enqueue: will a caller that waits on its handle run
  /// the cycle itself (so the loop need not be woken)?
  bool caller_will_drive_locked(bool caller_waits) const {
    return caller_waits && caller_may_drive_ && !driving_;
  }
  /// After an enqueue (queue mutex released): wakes an event-driven loop unless the
  /// caller will run the cycle itself.
  void enqueued(bool caller_runs);
  /// With the queue mutex held: has shutdown() been asked for?
  bool shutdown_requested_locked() const { return shutdown_requested_; }
  /// With the queue mutex held: cycles run by callers rather than the loop.
  int64_t caller_cycles_locked() const { return caller_cycles_; }

  /// Runs cycles on the calling thread until `h` is done, while no other thread runs one
  /// and the loop is event driven; returns as soon as it may not (the caller then waits
  /// for the loop as usual).
  void drive_until(HandleImpl& h) override;

 private:
  void loop();
  bool run_cycle();
  bool wait_for_cycle();
  bool cycle();
  void end_drive(bool keep_running);

  Platform& p_;
  const Config& live_;
  Mutex& mu_;
  Work work_;
  std::unique_ptr<CondVar> wake_cv_;  // event driven: enqueue wakes the loop at once
  std::unique_ptr<Activity> loop_activity_;
  bool shutdown_requested_ = false;    // guarded by mu_
  bool driving_ = false;               // guarded by mu_: a thread is running a cycle
  bool loop_done_ = false;             // guarded by mu_: a cycle ended the runtime
  bool loop_awaits_driver_ = false;    // guarded by mu_: the loop waits for driving_
  bool caller_may_drive_ = false;      // set at start
  int64_t caller_cycles_ = 0;          // guarded by mu_
  std::atomic<double> last_cycle_{0};  // when the last cycle started
  double last_cycle_end_ = 0;          // guarded by mu_: when the last cycle ended
  std::atomic<bool> event_driven_{false};
};

}  // namespace hvd
