// Platform over SimGrid: the simulated clock, S4U actors for background activities and
// S4U mutexes / condition variables. Every wait blocks in simulated time only.
#include <algorithm>
#include <mutex>

#include "model/seams.h"

namespace hvd::sim {
namespace {

// SimGrid actors are cooperative: one runs until it makes a simcall, so a test-and-set
// of a plain flag is atomic among them. The runtime's mutexes are almost never contended
// in a simulation (a critical section makes no simcall), so an uncontended lock() or
// unlock() costs no simcall at all -- each S4U mutex operation would be one, a context
// switch to the engine, hundreds of thousands per simulated step at 512 ranks. A
// contended lock() blocks on an S4U condition variable.
class SimMutex final : public Mutex {
 public:
  void lock() override {
    if (!locked_) {
      locked_ = true;
      return;
    }
    std::unique_lock<sg4::Mutex> lk(*inner_);
    ++waiting_;
    while (locked_) freed_->wait(lk);
    --waiting_;
    locked_ = true;
  }
  void unlock() override {
    locked_ = false;
    if (waiting_) {
      std::unique_lock<sg4::Mutex> lk(*inner_);
      freed_->notify_one();
    }
  }

 private:
  bool locked_ = false;
  int waiting_ = 0;  // actors blocked in lock() (guarded by inner_)
  sg4::MutexPtr inner_ = sg4::Mutex::create();
  sg4::ConditionVariablePtr freed_ = sg4::ConditionVariable::create();
};

// Waiting releases the (cooperative) runtime mutex only once the waiter holds mu_, and a
// notifier takes mu_ before notifying, so no notification falls between the two; a
// notifier with nobody waiting makes no simcall.
class SimCondVar final : public CondVar {
 public:
  explicit SimCondVar(double wakeup) : wakeup_(wakeup) {}
  void wait(Mutex& m) override { wait_until(m, 1e300); }
  bool wait_until(Mutex& m, double deadline_s) override {
    bool ok = true;
    {
      std::unique_lock<sg4::Mutex> lk(*mu_);
      ++waiters_;
      m.unlock();
      if (deadline_s > 1e15) cv_->wait(lk);
      else ok = cv_->wait_until(lk, deadline_s) == std::cv_status::no_timeout;
      --waiters_;
    }
    m.lock();
    if (ok) woken(m);
    return ok;
  }
  void notify_all() override {
    if (!waiters_) return;
    std::unique_lock<sg4::Mutex> lk(*mu_);
    cv_->notify_all();
  }

 private:
  // A notified thread runs again only after the OS wakes it (simulation.wakeup_latency):
  // the mutex is free meanwhile, as it is for a thread that is not yet scheduled.
  void woken(Mutex& m) {
    if (!(wakeup_ > 0)) return;
    m.unlock();
    sg4::this_actor::sleep_for(wakeup_);
    m.lock();
  }
  double wakeup_;
  int waiters_ = 0;  // guarded by mu_
  sg4::MutexPtr mu_ = sg4::Mutex::create();
  sg4::ConditionVariablePtr cv_ = sg4::ConditionVariable::create();
};

class SimActivity final : public Activity {
 public:
  explicit SimActivity(sg4::ActorPtr a) : actor_(std::move(a)) {}
  ~SimActivity() override { join(); }
  void join() override {
    if (actor_) actor_->join();
    actor_ = nullptr;
  }

 private:
  sg4::ActorPtr actor_;
};

class SimPlatform final : public Platform {
 public:
  SimPlatform(DeviceClock* clock, double wakeup) : clock_(clock), wakeup_(wakeup) {}
  double now() override { return clock_->now(); }
  double shared_now() override { return sg4::Engine::get_clock(); }
  void sleep_for(double s) override { clock_->sleep_after(s); }
  void compute(double s) override {
    // GPU kernels: the framework thread waits; the host CPU (other actors) runs on.
    clock_->sleep_after(s);
  }
  std::unique_ptr<Mutex> make_mutex() override { return std::make_unique<SimMutex>(); }
  std::unique_ptr<CondVar> make_condvar() override { return std::make_unique<SimCondVar>(wakeup_); }
  std::unique_ptr<Activity> spawn(const std::string& name, std::function<void()> fn) override {
    return std::make_unique<SimActivity>(
        sg4::Actor::create(name, sg4::this_actor::get_host(), std::move(fn)));
  }
  void yield() override { sg4::this_actor::yield(); }

 private:
  DeviceClock* clock_;
  double wakeup_;
};

}  // namespace

void DeviceClock::charge(double seconds) {
  if (!(seconds > 0)) return;
  if (!owner_) owner_ = sg4::Actor::self();
  if (tolerance_ <= 0 || !mine()) {
    sg4::this_actor::sleep_for(seconds);
    return;
  }
  ready_at_ = std::max(ready_at_, sg4::Engine::get_clock()) + seconds;
}

void DeviceClock::hold_until(double t) {
  if (!(t > sg4::Engine::get_clock())) return;
  if (!owner_) owner_ = sg4::Actor::self();
  if (tolerance_ <= 0 || !mine()) {
    sg4::this_actor::sleep_until(t);
    return;
  }
  ready_at_ = std::max(ready_at_, t);
}

double DeviceClock::now() const {
  const double t = sg4::Engine::get_clock();
  return ready_at_ > t && mine() ? ready_at_ : t;
}

void DeviceClock::before_post() {
  if (ready_at_ <= 0) return;
  const double lag = ready_at_ - sg4::Engine::get_clock();
  if (lag > tolerance_ && mine()) sg4::this_actor::sleep_for(lag);
}

void DeviceClock::sleep_after(double seconds) {
  const double t = sg4::Engine::get_clock();
  const double until = (ready_at_ > t && mine() ? ready_at_ : t) + std::max(0.0, seconds);
  if (until > t) sg4::this_actor::sleep_until(until);
}

std::unique_ptr<Platform> make_sim_platform(DeviceClock* clock, double wakeup_latency) {
  return std::make_unique<SimPlatform>(clock, wakeup_latency);
}

}  // namespace hvd::sim
