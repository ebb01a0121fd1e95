// The per-collective bodies of the Executor (see executor.cc).
#include <algorithm>
#include <mutex>

#include "collectives/adasum.h"
#include "collectives/allgather_ring.h"
#include "collectives/allreduce_direct.h"
#include "collectives/allreduce_hierarchical.h"
#include "collectives/allreduce_rhd.h"
#include "collectives/allreduce_ring.h"
#include "collectives/allreduce_ring_pipelined.h"
#include "collectives/alltoall.h"
#include "collectives/broadcast.h"
#include "collectives/reducescatter_ring.h"
#include "core/executor.h"

namespace hvd {

namespace {

// What an allreduce algorithm gets over one contiguous buffer.
struct AllreduceCall {
  CollectiveContext& c;
  const ProcessSet& ps;  // its local and cross groups (hierarchical)
  void* buf;
  int64_t count;
  DataType dt;
  ReduceOp op;  // never Average (lowered at enqueue) nor Adasum (its own path)
  bool small;   // below rhd_threshold
};

}  // namespace

// One allreduce algorithm: the knob value that names it, its timeline activity, its body
// over one buffer and, where it has one, its body straight from the tensors' inputs into
// their outputs (scattered pieces, no fusion buffer).
struct AllreduceAlgo {
  AllreduceAlgorithm id;
  const char* activity;
  Status (*run)(const AllreduceCall&);
  Status (*pieces)(CollectiveContext&, const PieceBuffer&, const PieceBuffer&, DataType, ReduceOp);
};

namespace {

// Every allreduce algorithm, once (the native one is the backend's: "MPI_ALLREDUCE", ...).
constexpr AllreduceAlgo kAllreduceAlgos[] = {
    {AllreduceAlgorithm::kRing, "RING_ALLREDUCE",
     [](const AllreduceCall& a) { return ring_allreduce(a.c, a.buf, a.count, a.dt, a.op); },
     [](CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out, DataType dt, ReduceOp op) {
       return ring_allreduce(c, in, out, dt, op);
     }},
    {AllreduceAlgorithm::kPipelinedRing, "PIPELINED_RING_ALLREDUCE",
     [](const AllreduceCall& a) { return pipelined_ring_allreduce(a.c, a.buf, a.count, a.dt, a.op, 4, false); }, nullptr},
    {AllreduceAlgorithm::kLockstepRing, "LOCKSTEP_RING_ALLREDUCE",
     [](const AllreduceCall& a) { return pipelined_ring_allreduce(a.c, a.buf, a.count, a.dt, a.op, 4, true); }, nullptr},
    {AllreduceAlgorithm::kRhd, "RHD_ALLREDUCE",
     [](const AllreduceCall& a) { return rhd_allreduce(a.c, a.buf, a.count, a.dt, a.op); },
     [](CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out, DataType dt, ReduceOp op) {
       return rhd_allreduce(c, in, out, dt, op);
     }},
    {AllreduceAlgorithm::kDirect, "DIRECT_ALLREDUCE",
     [](const AllreduceCall& a) { return direct_allreduce(a.c, a.buf, a.count, a.dt, a.op); },
     [](CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out, DataType dt, ReduceOp op) {
       return direct_allreduce(c, in, out, dt, op);
     }},
    {AllreduceAlgorithm::kHierarchical, "HIERARCHICAL_ALLREDUCE",
     [](const AllreduceCall& a) {
       return hierarchical_allreduce(a.c, *a.ps.local, *a.ps.cross, a.buf, a.count, a.dt, a.op, a.small);
     },
     nullptr},
    {AllreduceAlgorithm::kNative, nullptr, nullptr, nullptr},
};

const AllreduceAlgo& allreduce_algo(AllreduceAlgorithm id) {
  for (const AllreduceAlgo& a : kAllreduceAlgos)
    if (a.id == id) return a;
  return kAllreduceAlgos[0];
}

}  // namespace

const AllreduceAlgo& Executor::choose_allreduce(int64_t bytes) const {
  using A = AllreduceAlgorithm;
  A alg = env_.algorithms.allreduce;
  NativeCollectives* n = native(r_.dtype);
  if (n && (alg == A::kNative || (alg == A::kAuto && n->preferred(r_.device)))) return allreduce_algo(A::kNative);
  const bool hier_ok = ps_.local && ps_.cross;  // only made for homogeneous groups
  if (hier_ok && (alg == A::kHierarchical || (alg == A::kAuto && cfg_.hierarchical_allreduce)))
    return allreduce_algo(A::kHierarchical);
  // Auto, or hierarchical / native where they are not possible.
  if (alg == A::kAuto || alg == A::kHierarchical || alg == A::kNative) alg = bytes < cfg_.rhd_threshold ? A::kRhd : A::kRing;
  return allreduce_algo(alg);
}

Status Executor::allreduce_with(void* buf, int64_t count) {
  const DataType dt = r_.dtype;
  const ReduceOp op = r_.reduce_op;
  if (op == ReduceOp::kAdasum) {  // not element-wise: its own algorithm, never native
    algorithm_ = "ADASUM_ALLREDUCE";
    return phase(algorithm_, "communication", [&] {
      CollectiveContext c = ctx(*ps_.t);
      return adasum_allreduce(c, buf, r_.counts, dt);
    });
  }
  const int64_t bytes = count * static_cast<int64_t>(dtype_size(dt));
  const AllreduceAlgo* algo = &choose_allreduce(bytes);
  if (algo->id == AllreduceAlgorithm::kNative) {
    algorithm_ = native_name("ALLREDUCE");
    Status s = phase(algorithm_, "communication", [&] { return native(dt)->allreduce(buf, count, dt, op); });
    if (s.code() != StatusCode::kInvalidArgument) return s;
    algo = &allreduce_algo(AllreduceAlgorithm::kRing);  // the backend declined (e.g. a count beyond its limits)
  }
  algorithm_ = algo->activity;
  return phase(algorithm_, "communication", [&] {
    CollectiveContext c = ctx(*ps_.t);
    return algo->run({c, ps_, buf, count, dt, op, bytes < cfg_.rhd_threshold});
  });
}

// An algorithm with a pieces body, straight from the tensors' inputs into their outputs:
// no fusion-buffer copies, no up-front input->output copy (host memory, where copies cost
// as much as the transfer).
Status Executor::allreduce_in_place_pieces(int64_t total, const AllreduceAlgo& algo) {
  const DataType dt = r_.dtype;
  const size_t es = dtype_size(dt);
  Device& d = dev();
  PieceBuffer in(es), out(es);
  ps_.fusion[kind()].reserve(static_cast<size_t>(total) * es);  // identity for joined ranks
  size_t off = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const int64_t n = r_.counts[i];
    if (entries_[i]) {
      const PendingOp& q = entries_[i]->req;
      if (r_.prescale != 1.0) {  // inputs are the caller's: scale a copy in the output
        d.copy(q.output, q.input, static_cast<size_t>(n) * es);
        d.scale(q.output, n, dt, r_.prescale);
        in.add(q.output, n);
      } else {
        in.add(q.input, n);
      }
      out.add(q.output, n);
    } else {
      void* p = offset(ps_.fusion[kind()].data(), off);
      d.fill_identity(p, n, dt, r_.reduce_op);
      in.add(p, n);
      out.add(p, n);
    }
    off += static_cast<size_t>(n) * es;
  }
  algorithm_ = algo.activity;
  HVD_RETURN_IF_ERROR(phase(algorithm_, "communication", [&] {
    CollectiveContext c = ctx(*ps_.t);
    return algo.pieces(c, in, out, dt, r_.reduce_op);
  }));
  const double post = r_.postscale;
  if (post != 1.0) out.for_each(0, total, [&](void* p, int64_t, int64_t n) { d.scale(p, n, dt, post); });
  return Status::OK();
}

Status Executor::allreduce() {
  const DataType dt = r_.dtype;
  const size_t es = dtype_size(dt);
  int64_t total = 0;
  for (int64_t c : r_.counts) total += c;
  Device& d = dev();
  if (reduced_) {  // reduced on the bit exchange: one tensor, its result to copy out
    algorithm_ = "EAGER_ALLREDUCE";
    if (entries_.size() != 1 || !entries_[0])
      return Status::Internal("eager allreduce of '" + r_.names[0] + "': not pending on this rank");
    const PendingOp& q = entries_[0]->req;
    if (total > 0) {
      d.copy(q.output, reduced_, static_cast<size_t>(total) * es);
      if (r_.postscale != 1.0) d.scale(q.output, total, dt, r_.postscale);
    }
    return Status::OK();
  }
  void* buf;
  const bool in_place = entries_.size() == 1 && entries_[0].has_value();
  const AllreduceAlgo& algo = choose_allreduce(total * static_cast<int64_t>(es));
  // Adasum needs the tensors' bounds in one buffer (and halves it, not element-wise).
  if (d.scatter_gather() && algo.pieces && r_.reduce_op != ReduceOp::kAdasum)
    return allreduce_in_place_pieces(total, algo);
  if (in_place) {  // one tensor: work directly in its output, no fusion buffer
    const PendingOp& q = entries_[0]->req;
    buf = q.output;
    d.copy(buf, q.input, static_cast<size_t>(total) * es);
  } else {
    ps_.fusion[kind()].reserve(static_cast<size_t>(total) * es);
    buf = ps_.fusion[kind()].data();
    (void)phase("MEMCPY_IN_FUSION_BUFFER", "memcpy", [&] {
      size_t off = 0;
      for (size_t i = 0; i < entries_.size(); ++i) {
        const size_t n = static_cast<size_t>(r_.counts[i]) * es;
        if (entries_[i]) d.copy(offset(buf, off), entries_[i]->req.input, n);
        else d.fill_identity(offset(buf, off), r_.counts[i], dt, r_.reduce_op);  // joined rank
        off += n;
      }
      return Status::OK();
    });
  }
  if (r_.prescale != 1.0) d.scale(buf, total, dt, r_.prescale);
  HVD_RETURN_IF_ERROR(allreduce_with(buf, total));
  if (r_.postscale != 1.0) d.scale(buf, total, dt, r_.postscale);
  if (in_place) return Status::OK();
  return phase("MEMCPY_OUT_FUSION_BUFFER", "memcpy", [&] {
    size_t off = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const size_t n = static_cast<size_t>(r_.counts[i]) * es;
      if (entries_[i]) d.copy(entries_[i]->req.output, offset(buf, off), n);
      off += n;
    }
    return Status::OK();
  });
}

Status Executor::allgather() {
  const int p = ps_.t->size();
  const int me = ps_.t->rank();
  const size_t row_bytes = static_cast<size_t>(r_.row_elems[0]) * dtype_size(r_.dtype);
  std::vector<size_t> bytes(static_cast<size_t>(p));
  size_t total = 0, mine_off = 0;
  int64_t rows = 0;
  for (int r = 0; r < p; ++r) {
    bytes[static_cast<size_t>(r)] = static_cast<size_t>(r_.first_dims[static_cast<size_t>(r)]) * row_bytes;
    if (r < me) mine_off += bytes[static_cast<size_t>(r)];
    total += bytes[static_cast<size_t>(r)];
    rows += r_.first_dims[static_cast<size_t>(r)];
  }
  Device& d = dev();
  void* out;
  if (entries_[0]) {
    HandleImpl& h = *entries_[0]->handle;
    h.output_buffer() = DeviceBuffer(&d, total);
    std::vector<int64_t> shape = entries_[0]->req.shape;
    shape[0] = rows;
    h.set_output(total, shape);
    out = h.output_buffer().data();
    d.copy(offset(out, mine_off), entries_[0]->req.input, bytes[static_cast<size_t>(me)]);
  } else {  // joined rank: relay into scratch
    ps_.fusion[kind()].reserve(total);
    out = ps_.fusion[kind()].data();
  }
  const AllgatherAlgorithm alg = env_.algorithms.allgather;
  NativeCollectives* nat = native(r_.dtype);
  if (alg == AllgatherAlgorithm::kNative && nat) {
    algorithm_ = native_name("ALLGATHER");
    return phase(algorithm_, "communication", [&] {
      return nat->allgatherv(offset(out, mine_off), out, bytes);
    });
  }
  bool contiguous = ps_.local && ps_.cross;  // only made for homogeneous groups
  for (int r = 0; contiguous && r < p; ++r)
    contiguous = ps_.t->node_of(r) == ps_.t->node_of((r / ps_.local->size()) * ps_.local->size());
  if (contiguous && (alg == AllgatherAlgorithm::kHierarchical ||
                     (alg == AllgatherAlgorithm::kAuto && cfg_.hierarchical_allgather))) {
    algorithm_ = "HIERARCHICAL_ALLGATHER";
    return phase(algorithm_, "communication", [&] {
      CollectiveContext c = ctx(*ps_.t);
      return hierarchical_allgatherv(c, *ps_.local, *ps_.cross, out, bytes);
    });
  }
  algorithm_ = "RING_ALLGATHER";
  return phase(algorithm_, "communication", [&] {
    CollectiveContext c = ctx(*ps_.t);
    return ring_allgatherv(c, out, bytes);
  });
}

Status Executor::broadcast() {
  const PendingOp& q = entries_[0]->req;
  const size_t bytes = q.bytes();
  const BroadcastAlgorithm alg = env_.algorithms.broadcast;
  NativeCollectives* nat = ps_.t->native();
  Status s;
  if (alg == BroadcastAlgorithm::kNative && nat) {
    algorithm_ = native_name("BCAST");
    s = phase(algorithm_, "communication", [&] { return nat->broadcast(q.input, bytes, r_.root); });
  } else {
    const bool pipe = alg == BroadcastAlgorithm::kPipeline ||
                      (alg == BroadcastAlgorithm::kAuto && ps_.t->size() > 2 &&
                       bytes > static_cast<size_t>(cfg_.pipeline_chunk));
    algorithm_ = pipe ? "PIPELINED_BROADCAST" : "TREE_BROADCAST";
    s = phase(algorithm_, "communication", [&] {
      CollectiveContext c = ctx(*ps_.t);
      return pipe ? pipelined_broadcast(c, q.input, bytes, r_.root)
                  : tree_broadcast(c, q.input, bytes, r_.root);
    });
  }
  if (s.ok() && q.output) dev().copy(q.output, q.input, bytes);  // null unless a distinct one of this size
  return s;
}

Status Executor::alltoall() {
  const PendingOp& q = entries_[0]->req;
  const int p = ps_.t->size();
  const size_t row_bytes = static_cast<size_t>(r_.row_elems[0]) * dtype_size(r_.dtype);
  std::vector<int64_t> send_rows = q.splits();
  if (send_rows.empty()) send_rows.assign(static_cast<size_t>(p), q.shape[0] / p);
  CollectiveContext c = ctx(*ps_.t);
  HVD_ASSIGN_OR_RETURN(const std::vector<int64_t> recv_rows, exchange_counts(c, send_rows));
  std::vector<size_t> sb(static_cast<size_t>(p)), rb(static_cast<size_t>(p));
  size_t total = 0;
  int64_t rows = 0;
  for (size_t r = 0; r < sb.size(); ++r) {
    sb[r] = static_cast<size_t>(send_rows[r]) * row_bytes;
    rb[r] = static_cast<size_t>(recv_rows[r]) * row_bytes;
    total += rb[r];
    rows += recv_rows[r];
  }
  HandleImpl& h = *entries_[0]->handle;
  h.output_buffer() = DeviceBuffer(&dev(), total);
  std::vector<int64_t> shape = q.shape;
  shape[0] = rows;
  h.set_output(total, shape);
  h.set_splits(recv_rows);
  NativeCollectives* nat = ps_.t->native();
  if (env_.algorithms.alltoall == AlltoallAlgorithm::kNative && nat) {
    algorithm_ = native_name("ALLTOALL");
    return phase(algorithm_, "communication", [&] {
      return nat->alltoallv(q.input, sb, h.output_buffer().data(), rb);
    });
  }
  algorithm_ = "PAIRWISE_ALLTOALL";
  return phase(algorithm_, "communication", [&] {
    return pairwise_alltoallv(c, q.input, sb, h.output_buffer().data(), rb);
  });
}

Status Executor::reducescatter() {
  const PendingOp& q = entries_[0]->req;
  const int p = ps_.t->size();
  const int me = ps_.t->rank();
  const DataType dt = r_.dtype;
  const size_t es = dtype_size(dt);
  const int64_t row = r_.row_elems[0];
  const ReduceOp op = r_.reduce_op;
  std::vector<int64_t> off = even_split(r_.first_dims[0], p);
  for (auto& o : off) o *= row;
  const int64_t count = off.back();
  Device& d = dev();
  ps_.fusion[kind()].reserve(static_cast<size_t>(count) * es);
  void* work = ps_.fusion[kind()].data();
  (void)phase("MEMCPY_IN_FUSION_BUFFER", "memcpy", [&] {
    d.copy(work, q.input, static_cast<size_t>(count) * es);
    return Status::OK();
  });
  if (r_.prescale != 1.0) d.scale(work, count, dt, r_.prescale);
  const int64_t mine = off[static_cast<size_t>(me) + 1] - off[static_cast<size_t>(me)];
  HandleImpl& h = *entries_[0]->handle;
  h.output_buffer() = DeviceBuffer(&d, static_cast<size_t>(mine) * es);
  std::vector<int64_t> shape = q.shape;
  shape[0] = row ? mine / row : 0;
  h.set_output(static_cast<size_t>(mine) * es, shape);
  NativeCollectives* nat = native(dt);
  Status s;
  if (env_.algorithms.reducescatter == ReducescatterAlgorithm::kNative && nat) {
    algorithm_ = native_name("REDUCESCATTER");
    std::vector<int64_t> counts;
    for (int r = 0; r < p; ++r) counts.push_back(off[static_cast<size_t>(r) + 1] - off[static_cast<size_t>(r)]);
    s = phase(algorithm_, "communication", [&] { return nat->reducescatter(work, h.output_buffer().data(), counts, dt, op); });
  } else {
    algorithm_ = "RING_REDUCESCATTER";
    s = phase(algorithm_, "communication", [&] {
      CollectiveContext c = ctx(*ps_.t);
      return ring_reducescatter(c, work, off, dt, op);
    });
    if (s.ok()) d.copy(h.output_buffer().data(), offset(work, static_cast<size_t>(off[static_cast<size_t>(me)]) * es), static_cast<size_t>(mine) * es);
  }
  HVD_RETURN_IF_ERROR(s);
  if (r_.postscale != 1.0) d.scale(h.output_buffer().data(), mine, dt, r_.postscale);
  return Status::OK();
}

// The split is collective over the world set: every rank takes part, non-members with
// color -1 (they get no group).
Status Executor::add_process_set() {
  const int me = env_.world_rank;
  const bool member = std::find(r_.ranks.begin(), r_.ranks.end(), me) != r_.ranks.end();
  std::unique_ptr<Transport> sub = ps_.t->split(member ? 0 : -1, me);
  HVD_ASSIGN_OR_RETURN(const int id, env_.sets.add(r_.ranks, member ? std::move(sub) : nullptr));
  for (auto& e : entries_)
    if (e) e->handle->set_process_set_id(id);
  return Status::OK();
}

Status Executor::remove_process_set() {
  env_.sets.remove(r_.root);
  return Status::OK();
}

}  // namespace hvd
