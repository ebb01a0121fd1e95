#include "elastic_reset_mode.h"

#include <cstdio>
#include <iostream>

#include "hvd/sim/collective_sweep.h"
#include "hvd/sim/runner.h"
#include "hvd/workloads/model_registry.h"

namespace hvd::sim {
namespace {

// One reset of `model`: the parts, seconds.
struct Reset {
  int64_t state_bytes = 0;
  double step_s = 0, rendezvous_s = 0, broadcast_s = 0, lost_s = 0;
};

// The training step at np (a simulation of its own, in a child).
Status step_time(const ScenarioPoint& pt, const std::string& model, int np, double* out) {
  Scenario one;
  one.points = {pt};
  one.points[0].workload.models = {model};
  one.points[0].np = {np};
  std::vector<report::RunRecord> records;
  RunOptions quiet;
  HVD_RETURN_IF_ERROR(run_scenario(one, quiet, &records));
  for (const auto& r : records)
    if (r.np == np) *out = r.step_time_s;
  return Status::OK();
}

// The rendezvous of hvdrun's driver over the network (hvd/tcp.h): each rank reads the new
// generation, writes its address and reads the others' (three round trips to the server on
// rank 0's host), then connects to every lower rank, one TCP handshake (a round trip) after
// the other: the last rank's np - 2 connections close the meeting.
double rendezvous_s(const ClusterSpec& c, int ranks) {
  const double rtt = 2 * c.network.latency;
  return (3 + std::max(0, ranks - 2)) * rtt;
}

Status cost(const ScenarioPoint& pt, const std::string& model, int np, const ResetArgs& a, double slots, Reset* out) {
  auto trace = workloads::find_model(model, pt.workload.seq_len);
  if (!trace) return Status::InvalidArgument(trace.error());
  // Float32 parameters (master weights under mixed precision too) and the optimizer's slots.
  out->state_bytes = static_cast<int64_t>(static_cast<double>(trace->total_elements()) * 4 * (1 + slots));
  HVD_RETURN_IF_ERROR(step_time(pt, model, np, &out->step_s));
  const int after = np - 1;
  out->rendezvous_s = rendezvous_s(pt.cluster, after);
  if (after > 1) {
    std::vector<CollectivePoint> b;
    HVD_RETURN_IF_ERROR(simulate_collective_sweep(pt, after, NcclColl::kBroadcast, {out->state_bytes}, 0, 1, &b));
    out->broadcast_s = b.empty() ? 0 : b[0].seconds;
  }
  // A loss is as likely at any point of a commit interval: half of it is redone, on average.
  out->lost_s = 0.5 * a.commit_every * out->step_s;
  return Status::OK();
}

}  // namespace

int run_elastic_reset(const Scenario& sc, const ResetArgs& a) {
  ScenarioPoint pt = sc.points.front();
  const int np = a.np > 0 ? a.np : pt.np.back();
  if (np < 2) {
    std::cerr << "hvdsim: --elastic-reset: needs at least 2 ranks to lose one (--np " << np << ")\n";
    return 2;
  }
  if (pt.cluster.platform_file.empty() && np > pt.cluster.gpus()) {
    std::cerr << "hvdsim: --elastic-reset: --np " << np << " does not fit the cluster (" << pt.cluster.gpus()
              << " GPUs)\n";
    return 2;
  }
  // The state holds the optimizer's own tensors unless --optimizer-slots says otherwise (an
  // optimizer outside the four, 8-bit moments...).
  const bool given = a.optimizer_slots >= 0;
  const double slots = given ? a.optimizer_slots : workloads::optimizer_state_tensors(pt.workload.optimizer);
  std::printf("# hvdsim --elastic-reset %s: one worker of %d lost; %d ranks meet again and take the state from rank 0\n",
              sc.name.c_str(), np, np - 1);
  std::printf("# state = parameters x 4 B x (1 + %g optimizer slots, %s%s); commit every %d step(s); detection %.3f s\n",
              slots, given ? "--optimizer-slots" : "workload.optimizer ",
              given ? "" : workloads::optimizer_name(pt.workload.optimizer), a.commit_every, a.detect_s);
  std::printf("%-12s %6s %10s %9s %9s %11s %11s %9s %9s\n", "model", "np", "state_MB", "step_s", "detect_s",
              "rendezv_s", "broadcast_s", "redo_s", "total_s");
  for (const std::string& model : pt.workload.models) {
    Reset r;
    if (Status s = cost(pt, model, np, a, slots, &r); !s.ok()) {
      std::cerr << "hvdsim: " << model << ": " << s.message() << "\n";
      return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
    const double total = a.detect_s + r.rendezvous_s + r.broadcast_s + r.lost_s;
    std::printf("%-12s %6d %10.1f %9.4f %9.4f %11.6f %11.4f %9.4f %9.4f\n", model.c_str(), np,
                static_cast<double>(r.state_bytes) / 1e6, r.step_s, a.detect_s, r.rendezvous_s, r.broadcast_s,
                r.lost_s, total);
  }
  return 0;
}

}  // namespace hvd::sim
