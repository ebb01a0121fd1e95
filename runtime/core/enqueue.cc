// RuntimeImpl's enqueue funnel: every operation of every caller comes through here. It
// validates the request (shapes, scale factors, roots, splits, process set membership,
// duplicate pending names), creates the handle and appends the request to the process
// set's incoming list for the next cycle. Errors found here fail only that call.
#include <cctype>
#include <cmath>
#include <mutex>
#include <set>

#include "core/op_table.h"
#include "core/runtime_impl.h"

namespace hvd {

// A simulation holds every rank's pending gradients at once: keep the entry small.
static_assert(sizeof(void*) != 8 || sizeof(PendingOp) <= 88, "PendingOp grew past 88 bytes");

PendingOp::PendingOp(OpRequest&& q)
    : input(q.input.data),
      output(q.output.data),
      shape(std::move(q.input.shape)),
      prescale(q.prescale),
      postscale(q.postscale),
      root(q.root),
      group_id(q.group_id),
      group_size(q.group_size),
      op(q.op),
      dtype(q.input.dtype),
      reduce_op(q.reduce_op),
      device(q.input.device),
      average(q.average) {
  // A broadcast copies its result into an output only of the input's size.
  if (op == OpType::kBroadcast && (output == input || q.output.bytes() != bytes())) output = nullptr;
  if (!q.splits.empty() || !q.set_ranks.empty())
    rare = std::make_unique<Rare>(Rare{std::move(q.splits), std::move(q.set_ranks)});
}

const std::vector<int64_t>& PendingOp::splits() const {
  static const std::vector<int64_t> none;
  return rare ? rare->splits : none;
}

const std::vector<int>& PendingOp::set_ranks() const {
  static const std::vector<int> none;
  return rare ? rare->set_ranks : none;
}

TensorRequest to_message(const std::string& name, const PendingOp& q, int rank) {
  TensorRequest m;
  m.rank = rank;
  static_cast<OpSpec&>(m) = q.spec();
  m.group_id = q.group_id;
  m.group_size = q.group_size;
  m.name = name;
  m.shape = q.shape;
  m.ranks = q.set_ranks();
  return m;
}

OpType RequestRef::op() const {
  return req->op;
}

TensorRequest RequestRef::materialize() const {
  return to_message(*name, *req, rank);
}

void RequestRef::write(Writer& w) const {
  const PendingOp& q = *req;
  w.i32(rank);
  write_spec(w, q.spec());
  w.i32(q.group_id);
  w.i32(q.group_size);
  w.str(*name);
  w.i64s(q.shape);
  w.i32s(q.set_ranks());
}

// Average is Sum with the results divided by the set's size: lowered here, once, so that
// negotiation, fusion and every algorithm see a sum and a postscale (as NCCL lowers ncclAvg
// when a collective is enqueued). OpRequest::average keeps what the caller asked for.
static void lower_average(OpRequest* q, int set_size) {
  if (q->reduce_op != ReduceOp::kAverage || !op_row(q->op).reduces) return;
  q->reduce_op = ReduceOp::kSum;
  q->postscale = q->postscale / set_size;
  q->average = true;
}

Handle RuntimeImpl::enqueue(OpRequest req) {
  DoneCallback cb = std::move(req.on_done);
  req.on_done = nullptr;
  Handle h = submit(std::move(req), &cb);
  // Refused up front: the callback never reached a handle; it hears the outcome here.
  if (cb) cb(h->wait(), *h);
  return h;
}

Handle RuntimeImpl::submit(OpRequest req, DoneCallback* cb) {
  if (!running_)
    return finished_handle(Status::Precondition("hvd runtime is not running (call init/start first)"));
  Status s = validate(req);
  if (!s.ok()) return finished_handle(s);
  std::unique_lock<Mutex> lk(*queue_mu_);
  if (stopped_) return finished_handle(failure_.ok() ? Status::Aborted("runtime stopped") : failure_);
  ProcessSet* found = sets_->find_locked(req.process_set);
  if (!found) {
    const bool exists = sets_->size_of(req.process_set) > 0;
    return finished_handle(Status::InvalidArgument(
        exists ? "rank " + std::to_string(world().rank()) + " is not a member of process set " + std::to_string(req.process_set)
               : "process set " + std::to_string(req.process_set) + " does not exist"));
  }
  ProcessSet& ps = *found;
  lower_average(&req, ps.t->size());
  // The name moves into the key (try_emplace leaves it in place when the key exists).
  auto [slot, fresh] = ps.table.try_emplace(std::move(req.name));
  if (!fresh)
    return finished_handle(Status::InvalidArgument(
        "a tensor named '" + req.name + "' is already pending on this rank; names must be unique "
        "until the operation completes"));
  auto h = std::make_shared<HandleImpl>(signal_);
  if (*cb) {
    h->set_callback(std::move(*cb));
    *cb = nullptr;
  }
  const bool caller_runs = scheduler_->caller_will_drive_locked(req.caller_waits);
  const double at = req.ready_at >= 0 ? req.ready_at : opts_.platform->now();
  slot->second = TensorEntry{PendingOp(std::move(req)), h, at};  // the key holds the name: one copy
  ps.incoming.push_back(&*slot);
  lk.unlock();
  scheduler_->enqueued(caller_runs);
  return h;
}

// A group goes in whole or not at all: a member refused here while the others were queued
// would leave them waiting for a partner that never comes, on every rank (a hang). So every
// member is checked first (validate, names unique in the group and not already pending,
// the set this rank's); one refusal refuses them all, each handle saying why.
std::vector<Handle> RuntimeImpl::enqueue_group(std::vector<OpRequest> reqs) {
  std::vector<Handle> hs;
  auto refuse = [&](size_t bad, const Status& s) {
    std::string opn = reqs.empty() ? "" : std::string(optype_name(reqs[0].op));
    for (char& ch : opn) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (size_t i = 0; i < reqs.size(); ++i) {
      hs.push_back(finished_handle(
          i == bad ? s : Status(s.code(), "grouped " + opn + ": another tensor of the group ('" + reqs[bad].name +
                                              "') was refused: " + s.message())));
      // A member's completion callback hears the refusal too (a TensorFlow kernel waits on it).
      if (reqs[i].on_done) reqs[i].on_done(hs.back()->wait(), *hs.back());
    }
    return hs;
  };
  if (!running_) return refuse(0, Status::Precondition("hvd runtime is not running (call init/start first)"));
  std::set<std::string> names;
  for (size_t i = 0; i < reqs.size(); ++i) {
    Status s = validate(reqs[i]);
    if (!s.ok()) return refuse(i, s);
    if (!names.insert(reqs[i].name).second)
      return refuse(i, Status::InvalidArgument("a tensor named '" + reqs[i].name +
                                               "' is twice in one group; names must be unique"));
  }
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    for (size_t i = 0; i < reqs.size(); ++i) {
      ProcessSet* found = sets_->find_locked(reqs[i].process_set);
      if (found && found->table.count(reqs[i].name))
        return refuse(i, Status::InvalidArgument("a tensor named '" + reqs[i].name +
                                                 "' is already pending on this rank; names must be unique "
                                                 "until the operation completes"));
    }
  }
  // (enqueue refuses what the checks above cannot see coming: a stopped runtime, a set this
  // rank is not in; every member alike.)
  for (OpRequest& q : reqs) hs.push_back(enqueue(std::move(q)));
  return hs;
}

Status RuntimeImpl::add_process_set(const std::vector<int>& ranks, int* id) {
  OpRequest q;
  q.op = OpType::kAddProcessSet;
  q.name = "process_set." + std::to_string(add_set_calls_++);
  q.set_ranks = ranks;
  q.input.shape = {};
  Handle h = enqueue(std::move(q));
  Status s = h->wait();
  if (s.ok() && id) *id = static_cast<HandleImpl&>(*h).process_set_id();
  return s;
}

Status RuntimeImpl::remove_process_set(int id) {
  OpRequest q;
  q.op = OpType::kRemoveProcessSet;
  q.name = "process_set." + std::to_string(add_set_calls_++);
  q.root = id;
  q.input.shape = {};
  q.caller_waits = true;
  return enqueue(std::move(q))->wait();
}

Status RuntimeImpl::validate(const OpRequest& q) const {
  // The prefix of every message, built only when there is an error to report.
  auto what = [&q] { return std::string(optype_name(q.op)) + " '" + q.name + "': "; };
  if (q.name.empty()) return Status::InvalidArgument(std::string(optype_name(q.op)) + ": tensor name is empty");
  for (int64_t d : q.input.shape)
    if (d < 0) return Status::InvalidArgument(what() + "negative dimension in shape " + shape_string(q.input.shape));
  Device* dev = q.input.device == DeviceKind::kGPU ? opts_.gpu : opts_.cpu;
  if (!dev) return Status::InvalidArgument(what() + "tensor is on the GPU but this runtime has no GPU device");
  const OpRow& row = op_row(q.op);
  if (row.moves_data && !q.input.data && q.input.count() > 0 && !dev->allows_phantom())
    return Status::InvalidArgument(what() + "input tensor has no storage");
  if (!std::isfinite(q.prescale) || !std::isfinite(q.postscale))
    return Status::InvalidArgument(what() + "scale factors must be finite");
  // -1: no such set; 0: a removed one. Either fails here, before the checks that divide by
  // the set's size (an alltoall's first dimension).
  const int size = sets_->size_of(q.process_set);
  if (size <= 0) return Status::InvalidArgument("process set " + std::to_string(q.process_set) + " does not exist");
  if (!row.validate) return Status::OK();
  return row.validate(q, OpCheckEnv{size, world().size(), dev->allows_phantom(), *sets_});
}

}  // namespace hvd
