// Scheduler: the background loop, its pacing, and callers that run cycles themselves.
#include "core/scheduler.h"

#include <mutex>

namespace hvd {

Scheduler::Scheduler(Platform& p, const Config& live, Mutex& queue_mu, Work work)
    : p_(p), live_(live), mu_(queue_mu), work_(std::move(work)), wake_cv_(p.make_condvar()) {}

void Scheduler::start(const std::string& name, bool caller_may_drive) {
  shutdown_requested_ = false;
  driving_ = false;
  loop_done_ = false;
  caller_may_drive_ = caller_may_drive;
  last_cycle_ = p_.now();
  last_cycle_end_ = last_cycle_.load();
  loop_activity_ = p_.spawn(name, [this] { loop(); });
}

void Scheduler::stop() {
  {
    std::unique_lock<Mutex> lk(mu_);
    shutdown_requested_ = true;
  }
  wake_cv_->notify_all();
  loop_activity_->join();
  loop_activity_.reset();
}

void Scheduler::enqueued(bool caller_runs) {
  // A blocking call that will run the cycle itself (drive_until) need not wake the loop.
  if (event_driven_.load(std::memory_order_relaxed) && !caller_runs) wake_cv_->notify_all();
}

void Scheduler::loop() {
  while (run_cycle()) {
  }
}

// Horovod's pacing: a cycle starts cycle_time after the previous one. With cycle_time 0
// the loop is event driven instead: it waits until something is enqueued (or 10 ms pass,
// so idle ranks still answer their peers' negotiation rounds). Returns true when the cycle
// must run (paced mode, idle time-out), false when it woke for work: a caller may have run
// that cycle meanwhile (drive_until), so run_cycle looks again.
bool Scheduler::wait_for_cycle() {
  if (live_.cycle_time_ms > 0) {
    const double wait = last_cycle_.load() + live_.cycle_time_ms * 1e-3 - p_.now();
    if (wait > 0) p_.sleep_for(wait);
    return true;
  }
  // The idle period counts from the last cycle anyone ran: while a caller drives cycles
  // (drive_until) the loop has no reason to start one of its own.
  std::unique_lock<Mutex> lk(mu_);
  while (!work_.has_work_locked() && !shutdown_requested_) {
    const double idle_deadline = last_cycle_end_ + 0.01;
    if (!wake_cv_->wait_until(mu_, idle_deadline) && p_.now() >= last_cycle_end_ + 0.01)
      return true;
  }
  return false;
}

// The loop's turn: wait for the cycle, then for any caller that is running one (see
// drive_until), then run it unless that caller already took all the work.
bool Scheduler::run_cycle() {
  const bool must_run = wait_for_cycle();
  {
    std::unique_lock<Mutex> lk(mu_);
    while (driving_) {
      loop_awaits_driver_ = true;
      wake_cv_->wait(mu_);
    }
    loop_awaits_driver_ = false;
    if (loop_done_) return false;
    // Nothing to do: woken for work a caller already took, or idle, but a caller's cycle
    // ended less than the idle period ago.
    if (event_driven_.load(std::memory_order_relaxed) && !work_.has_work_locked() &&
        !shutdown_requested_ && (!must_run || p_.now() < last_cycle_end_ + 0.01))
      return true;
    driving_ = true;
  }
  const bool keep = cycle();
  end_drive(keep);
  return keep;
}

bool Scheduler::cycle() {
  last_cycle_ = p_.now();
  return work_.cycle(last_cycle_.load());
}

void Scheduler::end_drive(bool keep_running) {
  bool wake;
  {
    std::unique_lock<Mutex> lk(mu_);
    driving_ = false;
    last_cycle_end_ = p_.now();
    if (!keep_running) loop_done_ = true;
    // Wake the loop only when it waits for this cycle to end, or has work a caller left it
    // (a wake per call would cost a thread switch, the very thing driving saves).
    wake = loop_awaits_driver_ || !keep_running || work_.has_work_locked();
  }
  if (wake) wake_cv_->notify_all();
}

// A caller blocked in wait() runs the cycles itself while the loop is idle: in the event
// driven mode this saves two thread hand-offs per blocking call (caller -> loop -> caller),
// which on a busy host cost more than the negotiation. Cycles stay serial on a rank (the
// driving_ flag), so the peers see the same sequence whichever thread runs them. (A cycle
// that fails the runtime ends with loop_done_ set, so a stopped runtime is never driven.)
void Scheduler::drive_until(HandleImpl& h) {
  while (!h.poll()) {
    {
      std::unique_lock<Mutex> lk(mu_);
      if (!caller_may_drive_ || driving_ || loop_done_ || shutdown_requested_ ||
          !event_driven_.load(std::memory_order_relaxed))
        return;
      driving_ = true;
      ++caller_cycles_;
    }
    const bool keep = cycle();
    end_drive(keep);
    if (!keep) return;
  }
}

}  // namespace hvd
