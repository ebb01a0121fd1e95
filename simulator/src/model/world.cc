// simulate() / simulate_ranks(): one SimGrid engine, the platform of the cluster, and one
// actor per rank on its GPU host running the body over the simulated seams.
#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <sstream>

#include "hvd/sim/world.h"
#include "hvd/workloads/gpu_catalog.h"
#include "model/seams.h"
#include "model/topology.h"

namespace hvd::sim {
namespace {

// Memory mappings this process may still create (vm.max_map_count minus those it has).
long mappings_left() {
  long limit = 65530, used = 0;
  std::ifstream("/proc/sys/vm/max_map_count") >> limit;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) ++used;
  return limit - used;
}

// Network-model configuration, chosen on purpose (docs/simulator.md, "Network model").
// Actor stacks: without a guard page SimGrid takes each stack from calloc(), which (under
// tcmalloc) writes the whole stack, so every actor costs its full stack_kib in RSS and the
// zeroing is a quarter of the wall time at 1,024 ranks. With a guard page it takes
// uninitialised memory (only the pages an actor touches become resident) and protects
// the page below, which splits the mapping: two mappings per actor, so guards are used
// only while `actors` (about two per rank) fit well within vm.max_map_count.
// CPU model: no simulated actor executes work on a host CPU (device and host work is
// folded into each rank's DeviceClock and slept off), so the CPU model only times sleeps.
// Its trace-integration variant (TI) does that without a max-min system: a sleep is a
// date in a heap, not a max-min variable on the host's CPU constraint (Cas01, the
// default). Sleeps end at the same dates; only the order in which two of them ending at
// the same instant are handed back may differ. TI takes single-core hosts only, which is
// what the topology builder makes; a user's platform file may declare more cores.
void configure_engine(sg4::Engine& e, const SimModelSpec& m, long actors, bool capped_flows,
                      bool single_core_hosts) {
  e.set_config("network/model:" + m.network_model);
  if (single_core_hosts) e.set_config("cpu/optim:TI");
  e.set_config(std::string("network/crosstraffic:") + (m.cross_traffic ? "1" : "0"));
  // No TCP window bound (RDMA; TCP is described by the protocol's parameters instead).
  // CM02 caps a flow at min(its rate, gamma / 2 latency), and a cap of 0 means none: with
  // gamma 0 a flow's own rate (Comm::set_rate, NetworkSpec::connection_rate) would be
  // ignored, so scenarios with a per-connection ceiling set gamma out of reach instead.
  e.set_config(capped_flows ? "network/TCP-gamma:1e30" : "network/TCP-gamma:0");
  e.set_config("contexts/stack-size:" + std::to_string(m.stack_kib));
  const bool guard = 2 * actors + 4096 < mappings_left();
  e.set_config(std::string("contexts/guard-size:") + (guard ? "1" : "0"));  // in pages
  if (const char* extra = std::getenv("HVD_SIM_SIMGRID_CFG"))  // experiments: "a:b;c:d"
    for (std::string kv : std::vector<std::string>{extra}) {
      size_t start = 0;
      while (start < kv.size()) {
        size_t end = kv.find(';', start);
        e.set_config(kv.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
      }
    }
}

std::unique_ptr<sg4::Engine> make_engine() {
  static int argc = 3;
  static char a0[] = "hvdsim", a1[] = "--log=root.thres:critical", a2[] = "--log=xbt_cfg.thres:critical";
  static char* argv[] = {a0, a1, a2, nullptr};
  return std::make_unique<sg4::Engine>(&argc, argv);
}

// The state the ranks share (SimFabric) over the first np hosts of `plat`, after the engine
// is configured (it reads SimGrid's latency and bandwidth factors).
Status make_fabric(const WorldOptions& o, const BuiltPlatform& plat, std::shared_ptr<SimFabric>* out) {
  auto fabric = std::make_shared<SimFabric>(plat.gpus, plat.node_of);
  fabric->timing_transfers = o.with_data ? 0 : o.model.train_transfers;
  fabric->latency_factor = simgrid::config::get_value<double>("network/latency-factor");
  fabric->bandwidth_factor = simgrid::config::get_value<double>("network/bandwidth-factor");
  fabric->connection_rate = o.cluster.network.effective_connection_rate();
  for (int k = 0; k < 2; ++k) {
    fabric->bandwidth_factors[k] = o.model.bandwidth_factors[k];
    fabric->bandwidth_factors_cold[k] = o.model.bandwidth_factors_cold[k];
  }
  fabric->cache_bytes = o.model.cache_bytes;
  fabric->cache_curve = o.model.cache_curve;
  // NCCL's collectives: the settings were checked with the run (check_nccl_run).
  if (o.nccl.enabled) {
    auto m = nccl_machine(o.cluster, o.np, o.nccl);
    if (!m.ok()) return m.status();
    fabric->nccl = std::make_shared<const SimNccl>(SimNccl{*m, o.nccl});
  }
  *out = std::move(fabric);
  return Status::OK();
}

}  // namespace

Status check_world(const WorldOptions& o) {
  const ClusterSpec& c = o.cluster;
  if (o.np < 1) return Status::InvalidArgument("np: " + std::to_string(o.np) + " is not a positive integer");
  if (c.platform_file.empty() && o.np > c.gpus())
    return Status::InvalidArgument("np: " + std::to_string(o.np) + " does not fit the cluster (" +
                                   std::to_string(c.nodes) + " nodes x " +
                                   std::to_string(c.gpus_per_node) + " GPUs = " +
                                   std::to_string(c.gpus()) + " GPUs)");
  const std::string& nm = o.model.network_model;
  if (nm != "CM02" && nm != "LV08" && nm != "SMPI" && nm != "Constant" && nm != "IB")
    return Status::InvalidArgument("simulation.network_model: \"" + nm +
                                   "\" is not a SimGrid network model (CM02, LV08, SMPI, IB, Constant)");
  return Status::OK();
}

Status simulate_ranks(const WorldOptions& o, const std::function<void(RankSeams&)>& body,
                      WorldInfo* info) {
  HVD_RETURN_IF_ERROR(check_world(o));
  auto engine = make_engine();
  configure_engine(*engine, o.model, 2L * o.np, o.cluster.network.effective_connection_rate() > 0,
                   o.cluster.platform_file.empty());
  BuiltPlatform plat;
  HVD_RETURN_IF_ERROR(build_platform(o.cluster, &plat));
  if (o.np > static_cast<int>(plat.gpus.size()))
    return Status::InvalidArgument("np: " + std::to_string(o.np) + " does not fit the platform (" +
                                   std::to_string(plat.gpus.size()) + " hosts)");
  plat.gpus.resize(static_cast<size_t>(o.np));
  plat.node_of.resize(static_cast<size_t>(o.np));
  std::shared_ptr<SimFabric> fabric;
  HVD_RETURN_IF_ERROR(make_fabric(o, plat, &fabric));
  DeviceCostSpec host_cost = o.gpu_cost;
  host_cost.host_staged = false;
  for (int r = 0; r < o.np; ++r) {
    sg4::Actor::create("rank" + std::to_string(r), plat.gpus[static_cast<size_t>(r)], [&, r] {
      DeviceClock clock(o.model.device_tolerance);
      auto platform = make_sim_platform(&clock, o.model.wakeup_latency);
      auto transport = make_sim_transport(fabric, r, &clock);
      CacheTouch touch;
      if (fabric->cache_bytes > 0)
        touch = [f = fabric.get(), r](IoSpan pieces) { return f->touch(r, pieces); };
      auto gpu = make_sim_device(DeviceKind::kGPU, o.gpu_cost, o.with_data, &clock, touch);
      auto cpu = make_sim_device(DeviceKind::kCPU, host_cost, o.with_data, &clock, touch);
      RankSeams seams{{platform.get(), transport.get(), cpu.get(), gpu.get()}, r};
      body(seams);
    });
  }
  // simulation.time_limit: the backstop against a run that would never end (a stall, a link
  // slower than the scenario checks foresee). A daemon sleeps until the limit: SimGrid ends
  // it with the last rank, so it changes nothing in a run that ends in time; at the limit it
  // stops every actor.
  bool timed_out = false;
  sg4::Actor::create("time_limit", plat.gpus.front(), [&] {
    sg4::this_actor::sleep_until(o.model.time_limit_s);
    timed_out = true;
    sg4::Actor::kill_all();
  })->daemonize();
  engine->run();
  if (timed_out) {
    std::ostringstream os;
    os << "simulation.time_limit: the run was stopped at " << o.model.time_limit_s
       << " s of simulated time, the limit (a stalled or absurdly slow run; raise the limit "
          "for a longer one)";
    return Status::InvalidArgument(os.str());
  }
  if (const char* st = std::getenv("HVD_SIM_STATS"); st && st[0] == '1')
    for (int t = 0; t < 8; ++t)
      if (fabric->messages[t])
        std::cerr << "hvdsim stats: tag " << t << ": " << fabric->messages[t] << " messages, "
                  << fabric->bytes[t] << " bytes\n";
  if (info) {
    info->simulated_s = sg4::Engine::get_clock();
    info->network_model = o.model.network_model;
    info->actors = o.np;
  }
  return Status::OK();
}

Status simulate(const WorldOptions& o, const std::function<void(Runtime&, RankSeams&)>& body,
                WorldInfo* info) {
  std::vector<Status> results(static_cast<size_t>(std::max(0, o.np)));
  HVD_RETURN_IF_ERROR(simulate_ranks(
      o,
      [&](RankSeams& seams) {
        // Timeline ts 0 = simulated time 0 (0 itself would mean "agree on rank 0's clock").
        const RuntimeOptions ro{seams, o.config, o.timeline, o.log,
                                std::numeric_limits<double>::denorm_min()};
        results[static_cast<size_t>(seams.rank)] = run_rank(ro, [&](Runtime& rt) { body(rt, seams); });
      },
      info));
  if (info) info->actors = 2LL * o.np;
  for (auto& r : results)
    if (!r.ok()) return r;
  return Status::OK();
}

}  // namespace hvd::sim
