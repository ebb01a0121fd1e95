// hvd::Runtime: the public face of RuntimeImpl, and the one way a world builds a rank's
// runtime from its seams (start_runtime, run_rank).
#include "hvd/runtime.h"

#include <cctype>

#include "core/runtime_impl.h"

namespace hvd {

Runtime::Runtime(RuntimeOptions opts) : impl_(std::make_unique<RuntimeImpl>(std::move(opts))) {}
Runtime::~Runtime() = default;
Status Runtime::start() { return impl_->start(); }
Status Runtime::shutdown() { return impl_->shutdown(); }
bool Runtime::running() const { return impl_->running(); }
int Runtime::rank() const { return impl_->world().rank(); }
int Runtime::size() const { return impl_->world().size(); }
int Runtime::local_rank() const { return impl_->world().local_rank(); }
int Runtime::local_size() const { return impl_->world().local_size(); }
int Runtime::cross_rank() const { return impl_->world().cross_rank(); }
int Runtime::cross_size() const { return impl_->world().cross_size(); }
Handle Runtime::enqueue(OpRequest req) { return impl_->enqueue(std::move(req)); }
const Config& Runtime::config() const { return impl_->config(); }
RuntimeStats Runtime::stats() const { return impl_->stats(); }
AutotuneState Runtime::autotune_state() const { return impl_->autotune_state(); }
bool Runtime::paced_cycles() const { return config().cycle_time_ms > 0 && !config().autotune; }
void Runtime::set_cycle_hook(std::function<void(double)> hook) { impl_->set_cycle_hook(std::move(hook)); }

namespace {
// The fields every request shares; each call below adds its own.
OpRequest request(OpType op, const std::string& name, const Tensor& in, int process_set) {
  OpRequest q;
  q.op = op;
  q.name = name;
  q.input = in;
  q.process_set = process_set;
  return q;
}

OpRequest allreduce_request(const std::string& name, const Tensor& in, const Tensor& out, ReduceOp op,
                            double prescale, double postscale, int process_set) {
  OpRequest q = request(OpType::kAllreduce, name, in, process_set);
  q.output = out;
  q.reduce_op = op;
  q.prescale = prescale;
  q.postscale = postscale;
  return q;
}
}  // namespace

Handle Runtime::allreduce_async(const std::string& name, const Tensor& in, const Tensor& out,
                                ReduceOp op, double prescale, double postscale, int process_set) {
  return enqueue(allreduce_request(name, in, out, op, prescale, postscale, process_set));
}

Status Runtime::allreduce(const std::string& name, const Tensor& in, const Tensor& out,
                          ReduceOp op, double prescale, double postscale, int process_set) {
  OpRequest q = allreduce_request(name, in, out, op, prescale, postscale, process_set);
  q.caller_waits = true;
  return enqueue(std::move(q))->wait();
}

namespace {

// The requests of one group share a group id and size; the runtime takes or refuses them whole.
std::vector<Handle> enqueue_group(RuntimeImpl& impl, std::vector<OpRequest> reqs) {
  const int gid = impl.next_group_id();
  for (OpRequest& q : reqs) {
    q.group_id = gid;
    q.group_size = static_cast<int>(reqs.size());
  }
  return impl.enqueue_group(std::move(reqs));
}

// The requests of one group share a group id and size: the coordinator answers them in the
// same cycle, as one unit (allreduce: one fused response; the others back to back). `outs`
// is null for the collectives whose results the runtime allocates.
std::vector<Handle> grouped_async(RuntimeImpl& impl, OpType op, const std::vector<std::string>& names,
                                  const std::vector<Tensor>& ins, const std::vector<Tensor>* outs,
                                  ReduceOp reduce_op, int process_set) {
  std::vector<Handle> hs;
  if (names.size() != ins.size() || (outs && names.size() != outs->size())) {
    std::string opn(optype_name(op));
    for (char& ch : opn) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string what = "grouped " + opn + ": " + std::to_string(names.size()) +
                       " names but " + std::to_string(ins.size()) + " input tensors";
    if (outs) what += " and " + std::to_string(outs->size()) + " outputs";
    hs.push_back(finished_handle(Status::InvalidArgument(what + "; the lists must have the same length")));
    return hs;
  }
  std::vector<OpRequest> reqs;
  for (size_t i = 0; i < names.size(); ++i) {
    OpRequest q = request(op, names[i], ins[i], process_set);
    if (outs) q.output = (*outs)[i];
    q.reduce_op = reduce_op;
    reqs.push_back(std::move(q));
  }
  return enqueue_group(impl, std::move(reqs));
}

// Waits for every handle; the first failure is the result.
Status wait_all(const std::vector<Handle>& hs) {
  Status first;
  for (auto& h : hs) {
    Status s = h->wait();
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace

std::vector<Handle> Runtime::enqueue_group(std::vector<OpRequest> reqs) {
  return hvd::enqueue_group(*impl_, std::move(reqs));
}

std::vector<Handle> Runtime::grouped_allreduce_async(const std::vector<std::string>& names,
                                                     const std::vector<Tensor>& ins,
                                                     const std::vector<Tensor>& outs, ReduceOp op,
                                                     int process_set) {
  return grouped_async(*impl_, OpType::kAllreduce, names, ins, &outs, op, process_set);
}

Status Runtime::grouped_allreduce(const std::vector<std::string>& names,
                                  const std::vector<Tensor>& ins, const std::vector<Tensor>& outs,
                                  ReduceOp op, int process_set) {
  return wait_all(grouped_allreduce_async(names, ins, outs, op, process_set));
}

std::vector<Handle> Runtime::grouped_allgather_async(const std::vector<std::string>& names,
                                                     const std::vector<Tensor>& ins,
                                                     int process_set) {
  return grouped_async(*impl_, OpType::kAllgather, names, ins, nullptr, ReduceOp::kSum,
                       process_set);
}

Status Runtime::grouped_allgather(const std::vector<std::string>& names,
                                  const std::vector<Tensor>& ins, std::vector<Handle>* out,
                                  int process_set) {
  std::vector<Handle> hs = grouped_allgather_async(names, ins, process_set);
  Status s = wait_all(hs);
  if (out) *out = std::move(hs);
  return s;
}

std::vector<Handle> Runtime::grouped_reducescatter_async(const std::vector<std::string>& names,
                                                         const std::vector<Tensor>& ins,
                                                         ReduceOp op, int process_set) {
  return grouped_async(*impl_, OpType::kReducescatter, names, ins, nullptr, op, process_set);
}

Status Runtime::grouped_reducescatter(const std::vector<std::string>& names,
                                      const std::vector<Tensor>& ins, std::vector<Handle>* out,
                                      ReduceOp op, int process_set) {
  std::vector<Handle> hs = grouped_reducescatter_async(names, ins, op, process_set);
  Status s = wait_all(hs);
  if (out) *out = std::move(hs);
  return s;
}

Handle Runtime::allgather_async(const std::string& name, const Tensor& in, int process_set) {
  return enqueue(request(OpType::kAllgather, name, in, process_set));
}

Handle Runtime::broadcast_async(const std::string& name, const Tensor& buf, int root,
                                int process_set) {
  OpRequest q = request(OpType::kBroadcast, name, buf, process_set);
  q.output = buf;
  q.root = root;
  return enqueue(std::move(q));
}

Status Runtime::broadcast(const std::string& name, const Tensor& buf, int root, int process_set) {
  OpRequest q = request(OpType::kBroadcast, name, buf, process_set);
  q.output = buf;
  q.root = root;
  q.caller_waits = true;
  return enqueue(std::move(q))->wait();
}

Handle Runtime::alltoall_async(const std::string& name, const Tensor& in,
                               const std::vector<int64_t>& splits, int process_set) {
  OpRequest q = request(OpType::kAlltoall, name, in, process_set);
  q.splits = splits;
  return enqueue(std::move(q));
}

Handle Runtime::reducescatter_async(const std::string& name, const Tensor& in, ReduceOp op,
                                    int process_set) {
  OpRequest q = request(OpType::kReducescatter, name, in, process_set);
  q.reduce_op = op;
  return enqueue(std::move(q));
}

Status Runtime::barrier(int process_set) {
  OpRequest q;
  q.op = OpType::kBarrier;
  q.name = "barrier";
  q.input.shape = {};
  q.process_set = process_set;
  q.caller_waits = true;
  return enqueue(std::move(q))->wait();
}

Status Runtime::join(int* last_joined_rank) {
  OpRequest q;
  q.op = OpType::kJoin;
  q.name = "join";
  q.input.shape = {};
  q.caller_waits = true;
  Handle h = enqueue(std::move(q));
  Status s = h->wait();
  if (s.ok() && last_joined_rank) *last_joined_rank = h->last_joined_rank();
  return s;
}

Status Runtime::add_process_set(const std::vector<int>& ranks, int* id) {
  return impl_->add_process_set(ranks, id);
}

Status Runtime::remove_process_set(int id) { return impl_->remove_process_set(id); }
Status Runtime::start_timeline(const std::string& path, bool mark_cycles) {
  return impl_->start_timeline(path, mark_cycles);
}
Status Runtime::stop_timeline() { return impl_->stop_timeline(); }

Status start_runtime(const RuntimeOptions& opts, std::unique_ptr<Runtime>* out) {
  auto rt = std::make_unique<Runtime>(opts);
  Status s = rt->start();
  if (s.ok()) *out = std::move(rt);
  return s;
}

Status run_rank(const RuntimeOptions& opts, const std::function<void(Runtime&)>& body) {
  Runtime rt(opts);
  HVD_RETURN_IF_ERROR(rt.start());
  body(rt);
  return rt.shutdown();
}

}  // namespace hvd
