#include "hvd/sim/collective_sweep.h"

#include <algorithm>
#include <sstream>

#include "hvd/sim/isolate.h"
#include "hvd/sim/world.h"

namespace hvd::sim {

Status simulate_allreduce_sweep(const ScenarioPoint& pt, int np, const std::vector<int64_t>& sizes,
                                int warmup, int iters, std::vector<CollectivePoint>* out) {
  std::string result;
  HVD_RETURN_IF_ERROR(run_isolated(
      [&](std::string* res) {
        WorldOptions wo;
        wo.cluster = pt.cluster;
        wo.model = pt.simulation;
        wo.gpu_cost = pt.device;
        wo.np = np;
        wo.config = pt.config;
        wo.config.timeline.clear();
        std::vector<double> worst(sizes.size(), 0.0);
        std::vector<Status> st(static_cast<size_t>(np));
        HVD_RETURN_IF_ERROR(simulate(wo, [&](Runtime& rt, RankSeams& seams) {
          for (size_t i = 0; i < sizes.size() && st[static_cast<size_t>(seams.rank)].ok(); ++i) {
            const int64_t count = std::max<int64_t>(1, sizes[i] / 4);
            const size_t bytes = static_cast<size_t>(count) * 4;
            void* in = seams.gpu->allocate(bytes);
            void* outp = seams.gpu->allocate(bytes);
            const Tensor a{in, DataType::kFloat32, {count}, DeviceKind::kGPU};
            const Tensor b{outp, DataType::kFloat32, {count}, DeviceKind::kGPU};
            const std::string name = "sweep." + std::to_string(bytes);
            Status r;
            for (int k = 0; k < warmup && r.ok(); ++k) r = rt.allreduce(name, a, b, ReduceOp::kSum);
            if (r.ok()) r = rt.barrier();
            const double t0 = seams.platform->now();
            for (int k = 0; k < iters && r.ok(); ++k) r = rt.allreduce(name, a, b, ReduceOp::kSum);
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
    p.bytes = std::max<int64_t>(1, b / 4) * 4;
    is >> p.seconds;
    out->push_back(p);
  }
  return Status::OK();
}

}  // namespace hvd::sim
