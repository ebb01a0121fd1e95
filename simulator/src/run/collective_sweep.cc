#include "hvd/sim/collective_sweep.h"

#include <algorithm>
#include <sstream>

#include "hvd/sim/isolate.h"
#include "hvd/sim/runner.h"
#include "hvd/sim/world.h"

namespace hvd::sim {

int64_t sweep_count(NcclColl coll, int64_t bytes, int np, int element_bytes) {
  const int64_t count = std::max<int64_t>(1, bytes / std::max(1, element_bytes));
  if (coll == NcclColl::kAllreduce || coll == NcclColl::kBroadcast) return count;
  return std::max<int64_t>(np, count / np * np);
}

namespace {

// One call of `coll` over `count` elements of `dt` (nccl-tests' size) on this rank.
Status one_call(Runtime& rt, NcclColl coll, const std::string& name, void* in, void* out, int64_t count, int np,
                DataType dt, ReduceOp op) {
  const Tensor all{in, dt, {count}, DeviceKind::kGPU};
  switch (coll) {
    case NcclColl::kAllreduce:
      return rt.allreduce(name, all, Tensor{out, dt, {count}, DeviceKind::kGPU}, op);
    case NcclColl::kBroadcast:
      return rt.broadcast(name, all, 0);
    case NcclColl::kAllgather:  // each rank brings its share of the gathered buffer
      return rt.allgather_async(name, Tensor{in, dt, {count / np}, DeviceKind::kGPU})->wait();
    case NcclColl::kReducescatter:
      return rt.reducescatter_async(name, all, op)->wait();
    case NcclColl::kAlltoall:
      return rt.alltoall_async(name, all, {})->wait();
  }
  return Status::InvalidArgument("unknown collective");
}

}  // namespace

Status simulate_collective_sweep(const ScenarioPoint& pt, int np, NcclColl coll, const std::vector<int64_t>& sizes,
                                 int warmup, int iters, std::vector<CollectivePoint>* out, DataType dtype, ReduceOp op) {
  const int esize = static_cast<int>(dtype_size(dtype));
  std::string result;
  HVD_RETURN_IF_ERROR(run_isolated(
      [&](std::string* res) {
        WorldOptions wo = world_options(pt, np);
        if (wo.nccl.enabled) {
          HVD_RETURN_IF_ERROR(check_nccl_run(pt, np));
        } else {  // NCCL's variables are the raw column's; the runtime's own collectives run here
          wo.nccl = NcclSettings{};
          wo.cluster.network.sharp = false;  // NCCL's CollNet: the runtime's own collectives never use it
        }
        std::vector<double> worst(sizes.size(), 0.0);
        std::vector<Status> st(static_cast<size_t>(np));
        HVD_RETURN_IF_ERROR(simulate(wo, [&](Runtime& rt, RankSeams& seams) {
          for (size_t i = 0; i < sizes.size() && st[static_cast<size_t>(seams.rank)].ok(); ++i) {
            const int64_t count = sweep_count(coll, sizes[i], np, esize);
            const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(esize);
            void* in = seams.gpu->allocate(bytes);
            void* outp = seams.gpu->allocate(bytes);
            const std::string name = "sweep." + std::to_string(bytes);
            Status r;
            for (int k = 0; k < warmup && r.ok(); ++k) r = one_call(rt, coll, name, in, outp, count, np, dtype, op);
            if (r.ok()) r = rt.barrier();
            const double t0 = seams.platform->now();
            for (int k = 0; k < iters && r.ok(); ++k) r = one_call(rt, coll, name, in, outp, count, np, dtype, op);
            const double t = (seams.platform->now() - t0) / iters;
            worst[i] = std::max(worst[i], t);
            st[static_cast<size_t>(seams.rank)] = r;
            seams.gpu->release(in);
            seams.gpu->release(outp);
          }
        }));
        for (const Status& x : st)
          if (!x.ok()) return x;
        std::ostringstream os;
        os.precision(17);
        for (double t : worst) os << t << " ";
        *res = os.str();
        return Status::OK();
      },
      &result));
  std::istringstream is(result);
  out->clear();
  for (int64_t b : sizes) {
    CollectivePoint p;
    p.bytes = sweep_count(coll, b, np, esize) * esize;
    is >> p.seconds;
    out->push_back(p);
  }
  return Status::OK();
}

Status simulate_allreduce_sweep(const ScenarioPoint& pt, int np, const std::vector<int64_t>& sizes, int warmup,
                                int iters, std::vector<CollectivePoint>* out) {
  return simulate_collective_sweep(pt, np, NcclColl::kAllreduce, sizes, warmup, iters, out);
}

}  // namespace hvd::sim
