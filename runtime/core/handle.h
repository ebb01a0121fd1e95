// The runtime's OpHandle: completion state of one operation, signalled through a
// condition variable shared by all handles of a runtime (one per runtime, not per op).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "hvd/platform.h"
#include "hvd/device.h"
#include "hvd/request.h"

namespace hvd {

class HandleImpl;

/// What lets a thread blocked in wait() run background cycles itself (the Scheduler).
class CycleDriver {
 public:
  virtual ~CycleDriver() = default;
  /// Runs cycles until `h` is done, or returns early when this thread may not.
  virtual void drive_until(HandleImpl& h) = 0;
};

/// Mutex + condition variable that every handle of one runtime waits on.
struct CompletionSignal {
  std::unique_ptr<Mutex> mu;   ///< guards every handle's state
  std::unique_ptr<CondVar> cv;  ///< notified when any handle completes
  /// Set while the runtime runs (guarded by mu): wait() calls it first, so the waiting
  /// thread may run background cycles itself until the handle is done (it returns early
  /// when it cannot, and wait() then blocks as usual).
  CycleDriver* driver = nullptr;
};

/// OpHandle implementation; the background loop fills it and calls complete().
class HandleImpl final : public OpHandle {
 public:
  explicit HandleImpl(std::shared_ptr<CompletionSignal> sig) : sig_(std::move(sig)) {}
  Status wait() override;
  bool poll() override;
  const void* output() const override { return out_ ? out_->buffer.data() : nullptr; }
  size_t output_bytes() const override { return out_ ? out_->bytes : 0; }
  std::vector<int64_t> output_shape() const override { return out_ ? out_->shape : std::vector<int64_t>{}; }
  std::vector<int64_t> received_splits() const override { return out_ ? out_->splits : std::vector<int64_t>{}; }
  int last_joined_rank() const override { return last_joined_; }
  int64_t cycle() const override;

  /// Marks the operation finished with `s` in background cycle `cycle`, wakes waiters,
  /// then calls the completion callback (if any) outside the lock. Only the first call counts.
  void complete(Status s, int64_t cycle = -1);
  /// Installs the completion callback; before the handle is visible to the loop.
  void set_callback(DoneCallback cb) { on_done_ = std::move(cb); }
  /// Runtime-side access to results.
  DeviceBuffer& output_buffer() { return out().buffer; }
  void set_output(size_t bytes, std::vector<int64_t> shape) {
    out().bytes = bytes;
    out().shape = std::move(shape);
  }
  void set_splits(std::vector<int64_t> s) { out().splits = std::move(s); }
  void set_last_joined(int r) { last_joined_ = r; }
  /// add_process_set: the new set's id.
  int process_set_id() const { return process_set_id_; }
  void set_process_set_id(int id) { process_set_id_ = id; }

 private:
  /// Results of the operations that allocate their output (allgather, alltoall,
  /// reducescatter): apart, so that the many allreduce handles of a step stay small.
  struct Output {
    DeviceBuffer buffer;
    size_t bytes = 0;
    std::vector<int64_t> shape;
    std::vector<int64_t> splits;
  };
  Output& out() {
    if (!out_) out_ = std::make_unique<Output>();
    return *out_;
  }
  std::shared_ptr<CompletionSignal> sig_;
  DoneCallback on_done_;  // moved out (and called) by the completing thread
  Status status_;
  std::unique_ptr<Output> out_;
  int64_t cycle_ = -1;
  int last_joined_ = -1;
  int process_set_id_ = -1;
  bool done_ = false;
};

/// A handle that is already finished with `s` (used for calls rejected up front).
Handle finished_handle(Status s);

}  // namespace hvd
