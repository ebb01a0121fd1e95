// The C table of hvd_capi.h over the process's default runtime (hvd::runtime()): what an op
// library loaded next to hvd._core calls instead of linking a runtime of its own.
#include "capi.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "hvd/hvd.h"

namespace {

// The table's numbering is the runtime's.
static_assert(static_cast<int>(hvd::DataType::kFloat64) == HVD_CAPI_FLOAT64 &&
              static_cast<int>(hvd::DataType::kBFloat16) == HVD_CAPI_BFLOAT16);
static_assert(static_cast<int>(hvd::OpType::kJoin) == HVD_CAPI_JOIN &&
              static_cast<int>(hvd::OpType::kReducescatter) == HVD_CAPI_REDUCESCATTER);
static_assert(static_cast<int>(hvd::StatusCode::kInternal) == HVD_CAPI_INTERNAL &&
              static_cast<int>(hvd::StatusCode::kMismatch) == HVD_CAPI_MISMATCH);

hvd_capi_result result_of(const hvd::Status& s, const hvd::OpHandle& h, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& splits) {
  hvd_capi_result r{};
  r.code = static_cast<int>(s.code());
  r.message = s.message().c_str();
  r.data = h.output();
  r.bytes = h.output_bytes();
  r.ndim = static_cast<int>(shape.size());
  r.shape = shape.data();
  r.nsplits = static_cast<int>(splits.size());
  r.received_splits = splits.data();
  r.last_joined_rank = h.last_joined_rank();
  return r;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The recording of capi_trace_start: one per process, as the table and its runtime are. A
// finished request finds its event by index under the same mutex; a new recording bumps the
// generation, so a request of an earlier one that finishes late touches nothing.
struct TraceRecording {
  std::mutex mu;
  std::atomic<bool> on{false};  // read without the mutex on every enqueue
  uint64_t generation = 0;
  size_t max_events = 0;
  std::vector<CapiTraceEvent> events;
};
TraceRecording& recording() {
  static TraceRecording r;
  return r;
}

// The event slot of an allreduce about to be enqueued, or -1 when none is recorded.
int64_t trace_enqueued(const hvd_capi_request& c, uint64_t* generation) {
  TraceRecording& r = recording();
  if (c.op != HVD_CAPI_ALLREDUCE || !r.on.load(std::memory_order_relaxed)) return -1;
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.on || r.events.size() >= r.max_events) return -1;
  CapiTraceEvent e;
  e.name = c.name ? c.name : "";
  e.dtype = c.dtype;
  e.shape.assign(c.shape, c.shape + c.ndim);
  e.enqueued_s = now_s();
  r.events.push_back(std::move(e));
  *generation = r.generation;
  return static_cast<int64_t>(r.events.size()) - 1;
}

void trace_done(int64_t slot, uint64_t generation) {
  if (slot < 0) return;  // not recorded: no clock read, no lock
  const double t = now_s();
  TraceRecording& r = recording();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.on && r.generation == generation && static_cast<size_t>(slot) < r.events.size())
    r.events[static_cast<size_t>(slot)].done_s = t;
}

// The runtime's request for one hvd_capi_request; its callback reports to done(ctx, i).
hvd::OpRequest request_of(const hvd_capi_request& c, hvd_capi_done done, void* ctx, int index) {
  hvd::OpRequest q;
  q.op = static_cast<hvd::OpType>(c.op);
  q.name = c.name ? c.name : "";
  const auto dt = static_cast<hvd::DataType>(c.dtype);
  std::vector<int64_t> shape(c.shape, c.shape + c.ndim);
  q.input = hvd::Tensor{const_cast<void*>(c.input), dt, shape, hvd::DeviceKind::kCPU};
  if (c.op == HVD_CAPI_BROADCAST) q.output = q.input;  // in place
  if (c.output) q.output = hvd::Tensor{c.output, dt, shape, hvd::DeviceKind::kCPU};
  q.reduce_op = static_cast<hvd::ReduceOp>(c.reduce_op);
  q.prescale = c.prescale;
  q.postscale = c.postscale;
  q.root = c.root;
  if (c.nsplits > 0) q.splits.assign(c.splits, c.splits + c.nsplits);
  q.process_set = c.process_set;
  uint64_t generation = 0;
  const int64_t slot = trace_enqueued(c, &generation);
  q.on_done = [done, ctx, index, slot, generation](const hvd::Status& s, const hvd::OpHandle& h) {
    trace_done(slot, generation);
    const std::vector<int64_t> out_shape = h.output_shape();
    const std::vector<int64_t> splits = h.received_splits();
    const hvd_capi_result r = result_of(s, h, out_shape, splits);
    done(ctx, index, &r);
  };
  return q;
}

// Refuses what the runtime's numbering does not have, before it is cast to an enum.
std::string check(const hvd_capi_request& c) {
  if (c.op < HVD_CAPI_ALLREDUCE || c.op > HVD_CAPI_JOIN) return "unknown collective " + std::to_string(c.op);
  if (c.dtype < HVD_CAPI_UINT8 || c.dtype > HVD_CAPI_FLOAT64) return "unknown dtype " + std::to_string(c.dtype);
  if (c.reduce_op < 0 || c.reduce_op > static_cast<int>(hvd::ReduceOp::kAdasum))
    return "unknown reduction " + std::to_string(c.reduce_op);
  if (c.ndim < 0 || (c.ndim > 0 && !c.shape)) return "bad shape";
  return "";
}

void refuse(hvd_capi_done done, void* ctx, int index, hvd_capi_code code, const std::string& why) {
  hvd_capi_result r{};
  r.code = code;
  r.message = why.c_str();
  r.last_joined_rank = -1;
  done(ctx, index, &r);
}

void enqueue(const hvd_capi_request* reqs, int n, hvd_capi_done done, void* ctx) {
  hvd::Runtime* rt = hvd::runtime();
  std::vector<hvd::OpRequest> qs;
  for (int i = 0; i < n; ++i) {
    const std::string bad = check(reqs[i]);
    if (!rt || !bad.empty()) {
      // The whole call is refused: every request hears why, none is queued.
      for (int j = 0; j < n; ++j)
        refuse(done, ctx, j, rt ? HVD_CAPI_INVALID_ARGUMENT : HVD_CAPI_PRECONDITION,
               rt ? bad : "hvd has not been initialized; call hvd.init() first");
      return;
    }
    qs.push_back(request_of(reqs[i], done, ctx, i));
  }
  if (n == 1) {
    rt->enqueue(std::move(qs[0]));
  } else if (n > 1) {
    rt->enqueue_group(std::move(qs));
  }
}

int initialized() { return hvd::is_initialized() ? 1 : 0; }
int rank() { return hvd::rank(); }
int size() { return hvd::size(); }
int local_rank() { return hvd::local_rank(); }
int local_size() { return hvd::local_size(); }

const hvd_capi kTable = {HVD_CAPI_VERSION, initialized, rank, size, local_rank, local_size, enqueue};

}  // namespace

const hvd_capi* hvd_capi_table() { return &kTable; }

void capi_trace_start(size_t max_events) {
  TraceRecording& r = recording();
  std::lock_guard<std::mutex> lock(r.mu);
  r.on = true;
  ++r.generation;
  r.max_events = max_events;
  r.events.clear();
}

std::vector<CapiTraceEvent> capi_trace_stop() {
  TraceRecording& r = recording();
  std::lock_guard<std::mutex> lock(r.mu);
  r.on = false;
  ++r.generation;
  std::vector<CapiTraceEvent> out;
  out.swap(r.events);
  return out;
}
