// Platform seam: time and concurrency. The core never touches std::thread, std::mutex or a
// clock directly; it asks its Platform. Real runs use std::chrono/std::thread
// (StdPlatform); simulated runs use SimGrid actors and the simulated clock.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace hvd {

/// A lock usable with std::unique_lock / std::lock_guard (BasicLockable).
class Mutex {
 public:
  virtual ~Mutex() = default;
  /// Blocks until the lock is held.
  virtual void lock() = 0;
  /// Releases the lock.
  virtual void unlock() = 0;
};

/// A condition variable tied to a Platform Mutex.
class CondVar {
 public:
  virtual ~CondVar() = default;
  /// Atomically releases `m`, waits for a notification, re-acquires `m`.
  virtual void wait(Mutex& m) = 0;
  /// As wait(), but gives up at platform time `deadline_s`; false on time-out.
  virtual bool wait_until(Mutex& m, double deadline_s) = 0;
  /// Wakes every waiter.
  virtual void notify_all() = 0;
};

/// A started background activity (a thread, or a simulated actor).
class Activity {
 public:
  virtual ~Activity() = default;
  /// Waits until the activity's function has returned.
  virtual void join() = 0;
};

/// Time and concurrency for one rank.
class Platform {
 public:
  virtual ~Platform() = default;
  /// Seconds since an arbitrary, fixed origin (simulated seconds in simulations).
  virtual double now() = 0;
  /// The time every thread agrees on: now() without this thread's pending device work (a
  /// simulated platform lets a thread's device work run ahead of the shared clock; a real
  /// one has a single clock).
  virtual double shared_now() { return now(); }
  /// Suspends the caller for `seconds`.
  virtual void sleep_for(double seconds) = 0;
  /// Occupies the caller's processor for `seconds` of emulated work (e.g. GPU compute).
  virtual void compute(double seconds) { sleep_for(seconds); }
  /// A new mutex.
  virtual std::unique_ptr<Mutex> make_mutex() = 0;
  /// A new condition variable.
  virtual std::unique_ptr<CondVar> make_condvar() = 0;
  /// Starts `fn` as a concurrent activity named `name`.
  virtual std::unique_ptr<Activity> spawn(const std::string& name, std::function<void()> fn) = 0;
  /// Lets other activities run (a hint; may do nothing).
  virtual void yield() {}
};

/// The real-world platform: steady_clock, std::thread, std::mutex.
std::unique_ptr<Platform> make_std_platform();

}  // namespace hvd
