#include "core/handle.h"

#include <mutex>

namespace hvd {

Status HandleImpl::wait() {
  CycleDriver* driver;
  {
    std::unique_lock<Mutex> lk(*sig_->mu);
    if (done_) return status_;
    driver = sig_->driver;
  }
  if (driver) driver->drive_until(*this);
  std::unique_lock<Mutex> lk(*sig_->mu);
  while (!done_) sig_->cv->wait(*sig_->mu);
  return status_;
}

bool HandleImpl::poll() {
  std::unique_lock<Mutex> lk(*sig_->mu);
  return done_;
}

int64_t HandleImpl::cycle() const {
  std::unique_lock<Mutex> lk(*sig_->mu);
  return cycle_;
}

void HandleImpl::complete(Status s, int64_t cycle) {
  DoneCallback cb;
  {
    std::unique_lock<Mutex> lk(*sig_->mu);
    if (done_) return;
    status_ = std::move(s);
    cycle_ = cycle;
    done_ = true;
    cb = std::move(on_done_);
  }
  sig_->cv->notify_all();
  // status_ is no longer written once done_: read without the lock.
  if (cb) cb(status_, *this);
}

namespace {
// Immutable once built, so it needs no lock.
class ReadyHandle final : public OpHandle {
 public:
  explicit ReadyHandle(Status s) : s_(std::move(s)) {}
  Status wait() override { return s_; }
  bool poll() override { return true; }
  const void* output() const override { return nullptr; }
  size_t output_bytes() const override { return 0; }
  std::vector<int64_t> output_shape() const override { return {}; }
  std::vector<int64_t> received_splits() const override { return {}; }
  int last_joined_rank() const override { return -1; }

 private:
  Status s_;
};
}  // namespace

Handle finished_handle(Status s) { return std::make_shared<ReadyHandle>(std::move(s)); }

}  // namespace hvd
