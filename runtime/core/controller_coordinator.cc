// The coordinator half of the Controller: message table, agreement checks, ordering,
// groups, join, the stall inspector, and fusion of the plan it broadcasts.
#include <algorithm>
#include <sstream>

#include "core/controller.h"
#include "core/fusion.h"
#include "core/op_table.h"

namespace hvd {

namespace {

std::string ranks_str(const std::vector<int>& ranks) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < ranks.size(); ++i) os << (i ? ", " : "") << ranks[i];
  os << ']';
  return os.str();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<int64_t> tail_dims(const std::vector<int64_t>& s) {
  return s.empty() ? s : std::vector<int64_t>(s.begin() + 1, s.end());
}

}  // namespace

std::string mismatch_error(const std::vector<const TensorRequest*>& reqs, int size) {
  const TensorRequest& a = *reqs[0];
  const OpRow& row = op_row(a.op);
  const std::string opn = lower(optype_name(a.op));
  for (const TensorRequest* bp : reqs) {
    const TensorRequest& b = *bp;
    const unsigned diff = spec_diff(a, b);
    std::ostringstream os;
    auto who = [&] { os << " (tensor '" << a.name << "', rank " << a.rank << " vs rank " << b.rank << ")"; };
    if (diff & kSpecOp) {
      os << "Mismatched collective operations: one rank requested " << opn << ", but another rank requested " << lower(optype_name(b.op));
    } else if (diff & kSpecDtype) {
      os << "Mismatched data types: one rank sent " << dtype_name(a.dtype) << ", but another rank sent " << dtype_name(b.dtype);
    } else if (diff & kSpecDevice) {
      os << "Mismatched devices: one rank placed the tensor on " << (a.device == DeviceKind::kCPU ? "cpu" : "gpu") << ", but another rank on " << (b.device == DeviceKind::kCPU ? "cpu" : "gpu");
    } else if (row.shapes == ShapeRule::kSame && a.shape != b.shape) {
      os << "Mismatched " << opn << " tensor shapes: One rank sent a tensor of shape " << shape_string(a.shape) << ", but another rank sent a tensor of shape " << shape_string(b.shape);
    } else if (row.shapes == ShapeRule::kTail && (a.shape.size() != b.shape.size() || tail_dims(a.shape) != tail_dims(b.shape))) {
      os << "Mismatched " << opn << " tensor shapes: One rank sent a tensor of shape " << shape_string(a.shape) << ", but another rank sent a tensor of shape " << shape_string(b.shape) << " (only the first dimension may differ)";
    } else if (row.reduces && (diff & kSpecReduceOp)) {
      os << "Mismatched reduction operations: one rank requested " << op_name(a.stated_op()) << ", but another rank requested " << op_name(b.stated_op());
    } else if (diff & kSpecScale) {
      // An average's postscale holds its 1/size since enqueue: show what the callers gave.
      const double n = a.average ? static_cast<double>(size) : 1.0;
      os << "Mismatched scale factors: one rank gave prescale " << a.prescale << " and postscale " << a.postscale * n << ", but another rank gave " << b.prescale << " and " << b.postscale * n;
    } else if (const std::string own = row.mismatch ? row.mismatch(a, b, diff) : std::string(); !own.empty()) {
      os << own;
    } else if (a.group_size != b.group_size) {
      os << "Mismatched grouped " << opn << ": one rank grouped " << a.group_size << " tensors, but another rank " << b.group_size;
    } else {
      continue;
    }
    who();
    return os.str();
  }
  return "";
}

std::vector<uint8_t> Controller::coordinate(const Gathered& lists) {
  bool shutdown = false;
  bool join_changed = false;
  std::vector<std::string> ready;
  std::vector<Slot> hint;  // by position in a rank's list
  for (int r = 0; r < t_.size(); ++r) {
    Reader rd(lists.data(r), lists.length(r));
    shutdown = (rd.u8() != 0) || shutdown;
    const int64_t n = rd.i64();
    for (int64_t i = 0; i < n && !rd.failed(); ++i) {
      RequestView req = read_request_view(rd);
      req.rank = r;
      if (req.spec.op == OpType::kJoin) {
        join_changed = joined_.insert(r).second || join_changed;
        last_joined_ = r;
      } else {
        if (static_cast<size_t>(i) >= hint.size()) hint.push_back(table_.end());
        admit(req, r, &hint[static_cast<size_t>(i)], &ready);
      }
    }
  }
  if (join_changed) {  // tensors may now be complete without the joined ranks
    for (const std::string& name : arrival_)
      if (complete(table_[name]) && std::find(ready.begin(), ready.end(), name) == ready.end())
        ready.push_back(name);
  }
  std::vector<Response> plan;
  for (const std::string& name : ready) {
    Pending& pend = table_[name];
    int gid = -1, gsize = 0;
    for (int r = 0; r < t_.size(); ++r) {
      if (const TensorRequest* o = pend.of(r)) {
        gid = o->group_id;
        gsize = o->group_size;
        break;
      }
    }
    Response resp = build_response(name, pend);
    table_.erase(name);  // (arrival_ drops the ready names in one pass below)
    if (gid < 0) {
      plan.push_back(std::move(resp));
      continue;
    }
    auto& members = groups_[gid];
    members.push_back(std::move(resp));
    if (static_cast<int>(members.size()) < gsize) continue;
    // A group fails as a whole: one member's error (a mismatch) is every member's.
    auto failed = std::find_if(members.begin(), members.end(), [](const Response& m) { return !m.error.empty(); });
    if (failed != members.end()) {
      for (Response& m : members) {
        if (m.error.empty()) {
          m.error = "grouped " + lower(optype_name(m.op)) + ": another tensor of the group failed: " + failed->error;
          m.error_code = failed->error_code;
        }
        plan.push_back(std::move(m));
      }
      groups_.erase(gid);
      continue;
    }
    if (!op_row(members[0].op).fuses) {
      // Allgather, reducescatter: negotiated as one unit, executed back to back.
      for (Response& m : members) plan.push_back(std::move(m));
      groups_.erase(gid);
      continue;
    }
    // A group is negotiated as one unit and executes as few allreduces as its members allow:
    // one per run of members that can share a buffer (same dtype, op, scale factors, device),
    // in the group's order. A buffer holds one element type, so a float64 member never rides
    // in a float32 one.
    std::vector<Response> units;
    for (Response& m : members) {
      if (!units.empty() && fusable(units.back(), m)) {
        units.back().names.push_back(m.names[0]);
        units.back().counts.push_back(m.counts[0]);
      } else {
        units.push_back(std::move(m));
      }
    }
    groups_.erase(gid);
    for (Response& u : units) plan.push_back(std::move(u));
  }
  // One pass, not a search per ready tensor (a cycle of 200,000 was quadratic).
  if (!ready.empty()) std::erase_if(arrival_, [this](const std::string& n) { return table_.find(n) == table_.end(); });
  check_stalls(&plan);
  if (!joined_.empty() && static_cast<int>(joined_.size()) == t_.size()) {
    Response j;
    j.op = OpType::kJoin;
    j.names = {"join"};
    j.last_joined_rank = last_joined_;
    plan.push_back(std::move(j));
    joined_.clear();
  }
  plan = fuse_responses(std::move(plan), cfg_.fusion_threshold);
  Writer w;
  w.u8(shutdown ? 1 : 0);
  w.i64(static_cast<int64_t>(plan.size()));
  for (const auto& r : plan) write_response(w, r);
  return std::move(w.bytes());
}

void Controller::admit(const RequestView& req, int rank, Slot* hint, std::vector<std::string>* ready) {
  Slot it = *hint;
  if (it == table_.end() || it->first != req.name) {
    it = table_.find(req.name);
    if (it == table_.end()) {
      it = table_.emplace(std::string(req.name), Pending{}).first;
      Pending& fresh = it->second;
      fresh.by_rank.assign(static_cast<size_t>(t_.size()), -1);
      fresh.first_seen = p_.now();
      arrival_.push_back(it->first);
    }
    *hint = it;
  }
  Pending& p = it->second;
  size_t v = 0;
  while (v < p.variants.size() && !req.same_as(p.variants[v])) ++v;
  if (v == p.variants.size()) p.variants.push_back(req.materialize());
  int32_t& slot = p.by_rank[static_cast<size_t>(rank)];
  if (slot < 0) ++p.present;
  slot = static_cast<int32_t>(v);
  if (complete(p)) ready->push_back(it->first);
}

// Every rank submitted or joined (joined ranks rarely submit: counted one by one).
bool Controller::complete(const Pending& p) const {
  int covered = p.present;
  for (int r : joined_)
    if (!p.of(r)) ++covered;
  return covered >= t_.size();
}

Response Controller::build_response(const std::string& name, Pending& p) {
  // The requests in rank order, each with its rank (only when they differ: otherwise the
  // agreement check has nothing to find).
  std::vector<TensorRequest> copies;
  std::vector<const TensorRequest*> reqs;
  for (int r = 0; r < t_.size() && (copies.empty() || p.variants.size() > 1); ++r)
    if (const TensorRequest* o = p.of(r)) {
      copies.push_back(*o);
      copies.back().rank = r;
    }
  for (const TensorRequest& q : copies) reqs.push_back(&q);
  const TensorRequest& a = *reqs[0];
  Response r;
  static_cast<OpSpec&>(r) = a;
  r.names = {name};
  r.joined.assign(joined_.begin(), joined_.end());
  r.error = p.variants.size() > 1 ? mismatch_error(reqs, t_.size()) : std::string();
  // As in Horovod, only an allreduce completes while ranks have joined (they contribute
  // the identity); any other collective fails on the ranks that submitted it, which then
  // go on to join (an allgather answered without the joined ranks' rows would differ from
  // what the same call gives without join).
  if (r.error.empty() && !r.joined.empty() && !op_row(a.op).while_joined) {
    r.error = std::string(optype_name(a.op)) + " of tensor '" + name +
              "' is not supported while ranks have joined (only allreduce is, as in Horovod)";
  }
  if (!r.error.empty()) {
    r.error_code = static_cast<uint8_t>(StatusCode::kMismatch);
    return r;
  }
  op_row(a.op).result_shape(&r, a, t_.size(), [&p](int k) { return p.of(k); });
  return r;
}

// Horovod's stall inspector: name the ranks that have not submitted a tensor others are
// waiting on; after the shutdown time, fail it everywhere instead of waiting forever.
void Controller::check_stalls(std::vector<Response>* plan) {
  if (cfg_.stall_check_disable) return;
  const double now = p_.now();
  std::map<int, std::vector<std::string>> missing;  // rank -> tensors
  std::vector<std::string> expired;
  for (const std::string& name : arrival_) {
    Pending& p = table_[name];
    const double age = now - p.first_seen;
    if (cfg_.stall_shutdown_time_s > 0 && age > cfg_.stall_shutdown_time_s) {
      expired.push_back(name);
      continue;
    }
    if (age < cfg_.stall_check_time_s || now - p.last_warned < cfg_.stall_check_time_s) continue;
    p.last_warned = now;
    for (int r = 0; r < t_.size(); ++r)
      if (!p.of(r) && !joined_.count(r)) missing[r].push_back(name);
  }
  if (!missing.empty()) {
    std::ostringstream os;
    os << "One or more tensors were submitted by a subset of ranks and have waited for the "
          "remaining ranks for more than "
       << cfg_.stall_check_time_s << " s. Missing ranks:";
    for (const auto& [rank, names] : missing) {
      os << ' ' << rank << ": [";
      for (size_t i = 0; i < names.size() && i < 10; ++i) os << (i ? ", " : "") << names[i];
      os << (names.size() > 10 ? ", ...]" : "]");
    }
    HVD_LOG(log_, kWarning, os.str());
  }
  for (const std::string& name : expired) {
    Pending& p = table_[name];
    std::vector<int> have, lack;
    for (int r = 0; r < t_.size(); ++r) (p.of(r) ? have : lack).push_back(r);
    Response e;
    e.names = {name};
    for (int r = 0; r < t_.size(); ++r)
      if (const TensorRequest* o = p.of(r)) e.op = o->op;
    std::ostringstream limit;
    limit << cfg_.stall_shutdown_time_s;
    e.error = "Stalled: tensor '" + name + "' was submitted by ranks " + ranks_str(have) +
              " but not by ranks " + ranks_str(lack) + " within " + limit.str() +
              " s (HVD_STALL_SHUTDOWN_TIME_SECONDS); the operation was cancelled";
    e.error_code = static_cast<uint8_t>(StatusCode::kTimeout);
    HVD_LOG(log_, kError, e.error);
    plan->push_back(std::move(e));
    table_.erase(name);
  }
  if (!expired.empty()) std::erase_if(arrival_, [this](const std::string& n) { return table_.find(n) == table_.end(); });
}

}  // namespace hvd
