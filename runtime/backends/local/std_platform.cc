// The real-world Platform: steady_clock, std::thread, std::mutex.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "hvd/platform.h"

namespace hvd {
namespace {

class StdMutex final : public Mutex {
 public:
  void lock() override { m_.lock(); }
  void unlock() override { m_.unlock(); }
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

using Clock = std::chrono::steady_clock;

Clock::time_point to_time_point(double s) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)));
}

class StdCondVar final : public CondVar {
 public:
  void wait(Mutex& m) override {
    std::unique_lock<std::mutex> lk(static_cast<StdMutex&>(m).native(), std::adopt_lock);
    cv_.wait(lk);
    lk.release();
  }
  bool wait_until(Mutex& m, double deadline_s) override {
    std::unique_lock<std::mutex> lk(static_cast<StdMutex&>(m).native(), std::adopt_lock);
    bool ok = true;
    if (deadline_s > 1e15) {
      cv_.wait(lk);
    } else {
      ok = cv_.wait_until(lk, to_time_point(deadline_s)) == std::cv_status::no_timeout;
    }
    lk.release();
    return ok;
  }
  void notify_all() override { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

class StdActivity final : public Activity {
 public:
  explicit StdActivity(std::function<void()> fn) : th_(std::move(fn)) {}
  ~StdActivity() override {
    if (th_.joinable()) th_.join();
  }
  void join() override {
    if (th_.joinable()) th_.join();
  }

 private:
  std::thread th_;
};

class StdPlatform final : public Platform {
 public:
  double now() override {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  }
  void sleep_for(double s) override {
    if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
  }
  void compute(double s) override {
    // Emulated accelerator work: the calling thread waits, as a framework thread does
    // while its GPU kernels run; the host CPU stays free for the background loop.
    sleep_for(s);
  }
  std::unique_ptr<Mutex> make_mutex() override { return std::make_unique<StdMutex>(); }
  std::unique_ptr<CondVar> make_condvar() override { return std::make_unique<StdCondVar>(); }
  std::unique_ptr<Activity> spawn(const std::string&, std::function<void()> fn) override {
    return std::make_unique<StdActivity>(std::move(fn));
  }
  void yield() override { std::this_thread::yield(); }
};

}  // namespace

std::unique_ptr<Platform> make_std_platform() { return std::make_unique<StdPlatform>(); }

}  // namespace hvd
