// Executes negotiated responses: fusion-buffer copies, scaling, the chosen algorithm,
// timeline phases and completion of the handles.
#include <algorithm>
#include <mutex>

#include "core/executor.h"
#include "core/op_table.h"

namespace hvd {

Device& Executor::dev() const {
  return *(kind() == 1 ? env_.gpu : env_.cpu);
}

Status Executor::phase(std::string_view name, std::string_view cat,
                       const std::function<Status()>& fn) {
  const double t0 = p_.now();
  Status s = fn();
  if (env_.timeline)
    env_.timeline->complete(env_.world_rank, kLaneCollective, name, cat, env_.ts_us(t0),
                            (p_.now() - t0) * 1e6);
  return s;
}

void Executor::take_entries() {
  std::unique_lock<Mutex> lk(env_.queue_mu);
  entries_.reserve(r_.names.size());
  for (const std::string& n : r_.names) {
    auto it = ps_.table.find(n);
    // Not submitted here (a joined rank), or submitted but not announced yet (a stall
    // error for a tensor this rank has only just submitted): nothing to take.
    if (it == ps_.table.end() || !it->second.announced) {
      entries_.emplace_back();
      continue;
    }
    entries_.emplace_back(std::move(it->second));
    ps_.table.erase(it);
  }
}

void Executor::complete_all(const Status& s) {
  for (auto& e : entries_)
    if (e) e->handle->complete(s, env_.cycle);
}

Status Executor::barrier() { return Status::OK(); }  // negotiation brought every rank here

Status Executor::join() {
  for (auto& e : entries_)
    if (e) e->handle->set_last_joined(r_.last_joined_rank);
  return Status::OK();
}

Status Executor::run(double now) {
  take_entries();
  if (!r_.error.empty()) {
    complete_all(Status(static_cast<StatusCode>(r_.error_code), r_.error));
    return Status::OK();
  }
  const double t0 = now >= 0 ? now : p_.now();
  if (env_.timeline) {
    double first = t0;
    for (auto& e : entries_)
      if (e) first = std::min(first, e->enqueued_at);
    std::string neg = "NEGOTIATE_" + std::string(optype_name(r_.op));
    env_.timeline->complete(env_.world_rank, kLaneNegotiation, neg, "negotiation",
                            env_.ts_us(first), (t0 - first) * 1e6,
                            "\"tensors\":" + std::to_string(r_.names.size()));
  }
  Status s = (this->*op_row(r_.op).execute)();
  // A data transfer of the world set timed out: name the rank really gone (the peer may be
  // a live rank that was itself waiting for a dead one), before the handles hear of it.
  if (s.code() == StatusCode::kTimeout && s.peer() >= 0 && ps_.id == 0 && ps_.controller)
    s = ps_.controller->name_gone(s, s.peer());
  if (r_.device == DeviceKind::kGPU && env_.gpu) {
    // Device work is asynchronous: the results must be there before handles complete.
    env_.gpu->synchronize();
    Status e = env_.gpu->last_error();
    if (s.ok() && !e.ok()) s = e;
  }
  const double t1 = p_.now();
  int64_t bytes = 0;
  for (auto& e : entries_)
    if (e) bytes += static_cast<int64_t>(e->req.bytes());
  if (env_.timeline) {
    std::string args = "\"tensors\":" + std::to_string(r_.names.size()) +
                       ",\"bytes\":" + std::to_string(bytes) + ",\"algorithm\":\"" + algorithm_ +
                       "\",\"process_set\":" + std::to_string(ps_.id) + ",\"names\":\"";
    for (size_t i = 0; i < r_.names.size() && i < 10; ++i)
    {
      if (i) args += ',';
      args += json_escape(r_.names[i]);
    }
    args += r_.names.size() > 10 ? ",...\"" : "\"";
    env_.timeline->complete(env_.world_rank, kLaneCollective, optype_name(r_.op), "communication",
                            env_.ts_us(t0), (t1 - t0) * 1e6, args);
  }
  {
    std::unique_lock<Mutex> lk(env_.queue_mu);
    env_.stats.responses += 1;
    env_.stats.execution_s += t1 - t0;
    for (auto& e : entries_) env_.stats.tensors += e ? 1 : 0;
    if (r_.op == OpType::kAllreduce) env_.stats.bytes_allreduced += bytes;
  }
  complete_all(s);
  return s;
}

}  // namespace hvd
