// The simulated seams on their own: clock, sleeps, condition-variable time-outs, actors,
// messages (timing and payload), split, and a runtime start/shutdown.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <cstring>

#include "hvd/replay/training_step.h"
#include "hvd/sim/isolate.h"
#include "hvd/sim/world.h"
#include <xbt/config.hpp>

namespace hvd::sim {
namespace {

WorldOptions star(int nodes, int gpus_per_node, double bw = 1e9, double lat = 10e-6) {
  WorldOptions o;
  o.cluster.nodes = nodes;
  o.cluster.gpus_per_node = gpus_per_node;
  o.cluster.network.bandwidth = bw;
  o.cluster.network.latency = lat;
  o.cluster.network.nic = "per_gpu";
  o.cluster.network.efficiency = 1.0;
  o.cluster.network.message_overhead = 0;
  o.np = nodes * gpus_per_node;
  return o;
}

// Runs `fn` in a child; the child returns its text; EXPECT on the text in the parent.
std::string isolated(const std::function<std::string()>& fn) {
  std::string out;
  Status s = run_isolated(
      [&](std::string* r) {
        *r = fn();
        return Status::OK();
      },
      &out);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

// Two ranks on two nodes (1 GB/s, 10 us) moving real data, in a child: `body` appends to
// the text the parent checks (or the run's error replaces it).
std::string two_ranks_with_data(const std::function<void(RankSeams&, std::string&)>& body) {
  return isolated([&] {
    std::string r;
    WorldOptions o = star(2, 1, 1e9, 10e-6);
    o.with_data = true;
    Status s = simulate_ranks(o, [&](RankSeams& k) { body(k, r); });
    return s.ok() ? r : s.to_string();
  });
}

TEST(SimSeams, PlatformClockSleepAndCondVarTimeout) {
  std::string out = isolated([] {
    std::string r;
    WorldOptions o = star(1, 1);
    Status s = simulate_ranks(o, [&](RankSeams& k) {
      Platform& p = *k.platform;
      const double t0 = p.now();
      p.sleep_for(0.25);
      r += std::to_string(p.now() - t0) + ";";
      auto m = p.make_mutex();
      auto cv = p.make_condvar();
      m->lock();
      bool woke = cv->wait_until(*m, p.now() + 1.5);
      m->unlock();
      r += std::string(woke ? "woke" : "timeout") + ";" + std::to_string(p.now()) + ";";
      int flag = 0;
      auto act = p.spawn("child", [&] {
        p.sleep_for(1.0);
        std::lock_guard<Mutex> lk(*m);
        flag = 1;
        cv->notify_all();
      });
      {
        std::unique_lock<Mutex> lk(*m);
        while (!flag) cv->wait(*m);
      }
      act->join();
      r += std::to_string(p.now());
    });
    if (!s.ok()) return s.to_string();
    return r;
  });
  EXPECT_EQ(out, "0.250000;timeout;1.750000;2.750000");
}

TEST(SimSeams, MessageTimeAndPayload) {
  std::string out = two_ranks_with_data([](RankSeams& k, std::string& r) {
    Transport& t = *k.transport;
    std::vector<char> buf(1000000, static_cast<char>(k.rank + 1));
    if (k.rank == 0) {
    Status st = send(t, 1, buf.data(), buf.size(), kTagData);
    (void)st;
    } else {
    std::vector<char> in(buf.size(), 0);
    Status st = recv(t, 0, in.data(), in.size(), kTagData);
    r = st.to_string() + ";" + std::to_string(k.platform->now()) + ";" +
        std::to_string(int(in[0])) + std::to_string(int(in.back()));
    }
  });
  // alpha + n / B = 10 us + 1 ms
  EXPECT_EQ(out, "OK;0.001010;11");
}

// MPI's eager protocol: a small send completes at once and its bytes are buffered (the
// sender may reuse its buffer), a large one completes only when the receiver has it. The
// receiver posts 2 s late; either way the flow starts then and takes alpha + n / B.
TEST(SimSeams, SmallSendsAreEagerLargeOnesRendezvous) {
  std::string out = two_ranks_with_data([](RankSeams& k, std::string& r) {
    Transport& t = *k.transport;
    Platform& p = *k.platform;
    if (k.rank == 0) {
    std::vector<char> small(1000, 7), large(1000000, 9);
    Status a = t.isend(1, small.data(), small.size(), kTagData)->wait(kNoDeadline);
    const double small_done = p.now();
    std::fill(small.begin(), small.end(), 0);  // buffered: the receiver still gets 7s
    Status b = t.isend(1, large.data(), large.size(), kTagData)->wait(kNoDeadline);
    r += a.to_string() + b.to_string() + ";" + std::to_string(small_done) + ";" +
         std::to_string(p.now()) + ";";
    } else {
    p.sleep_for(2);
    std::vector<char> small(1000, 0), large(1000000, 0);
    Status a = recv(t, 0, small.data(), small.size(), kTagData);
    const double small_in = p.now();
    Status b = recv(t, 0, large.data(), large.size(), kTagData);
    r += a.to_string() + b.to_string() + ";" + std::to_string(small_in) + ";" +
         std::to_string(int(small[0])) + std::to_string(int(small.back())) +
         std::to_string(int(large[0])) + ";";
    }
  });
  // Rank 1 finishes first (simulated time order of the appends is not guaranteed, so
  // check both parts).
  EXPECT_NE(out.find("OKOK;0.000000;"), std::string::npos) << out;      // small: done at once
  EXPECT_NE(out.find("OKOK;2.000011;779;"), std::string::npos) << out;  // 10 us + 1 us
  EXPECT_NE(out.find(";2.001021;"), std::string::npos) << out;  // large: 2 s + 11 us + 1.01 ms
}

TEST(SimSeams, TimedWaitDoesNotKillTheMessage) {
  std::string out = isolated([] {
    std::string r;
    WorldOptions o = star(2, 1);
    Status s = simulate_ranks(o, [&](RankSeams& k) {
      Transport& t = *k.transport;
      int64_t v = 42;
      if (k.rank == 0) {
        k.platform->sleep_for(3);
        Status st = send(t, 1, &v, 8, kTagControl);
        (void)st;
      } else {
        v = 0;
        auto req = t.irecv(0, &v, 8, kTagControl);
        Status a = req->wait(k.platform->now() + 1);
        Status b = req->wait(k.platform->now() + 10);
        r = a.to_string().substr(0, 7) + ";" + b.to_string() + ";" + std::to_string(v);
      }
    });
    if (!s.ok()) return s.to_string();
    return r;
  });
  EXPECT_EQ(out, "Timeout;OK;42");
}

// recv_until (the control plane's receive, one engine call: Transport::blocking()): a message already on its way
// arrives as from irecv + wait; one that misses the deadline leaves a posted receive behind
// that gets it later, with the same bytes and the same arrival time as a plain receive.
TEST(SimSeams, RecvUntilTimesOutAndTheReceiveStaysPosted) {
  std::string out = two_ranks_with_data([](RankSeams& k, std::string& r) {
    Transport& t = *k.transport;
    int64_t v = 0;
    if (k.rank == 0) {
      v = 7;
      (void)send(t, 1, &v, 8, kTagControl);  // at t = 0
      k.platform->sleep_for(3);
      v = 42;
      (void)send(t, 1, &v, 8, kTagControl);  // at t = 3
    } else {
      std::unique_ptr<Request> pending;
      const IoPiece into{&v, 8};
      Status a = recv_until(t, 0, RecvInto{IoSpan(&into, 1)}, kTagControl, k.platform->now() + 1, &pending);
      r += a.to_string() + ";" + std::to_string(v) + ";" + std::to_string(pending != nullptr) + ";";
      Status b = recv_until(t, 0, RecvInto{IoSpan(&into, 1)}, kTagControl, k.platform->now() + 1, &pending);
      r += b.to_string().substr(0, 7) + ";" + std::to_string(pending != nullptr) + ";";
      Status c = pending ? pending->wait(kNoDeadline) : Status::Internal("no pending receive");
      // The second message left at 3 s: 10 us of latency and 8 bytes at 1 GB/s later.
      r += c.to_string() + ";" + std::to_string(v) + ";" + std::to_string(std::fabs(k.platform->now() - 3.000010008) < 1e-9);
    }
  });
  EXPECT_EQ(out, "OK;7;0;Timeout;1;OK;42;1");
}

// A sized receive's sink: the message lands in `got`, sized to it.
struct VectorSink final : SizedSink {
  std::vector<uint8_t> got;
  void* room(size_t n) override {
    got.resize(n);
    return got.data();
  }
};

// A message received by size (RecvInto::sink) is one transfer of exactly its size: a
// receive posted after the send starts the flow then, one posted first gets it when it is
// sent, a large one goes by rendezvous, and a receive that times out stays posted.
TEST(SimSeams, SizedMessagesAreOneTransferOfTheirSize) {
  std::string out = two_ranks_with_data([](RankSeams& k, std::string& r) {
    Transport& t = *k.transport;
    std::vector<uint8_t> a(5000), b(20000);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 3);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 5 + 1);
    if (k.rank == 0) {
      (void)t.isend(1, a.data(), a.size(), kTagControl)->wait(kNoDeadline);  // at t = 0
      k.platform->sleep_for(3);
      (void)t.isend(1, b.data(), b.size(), kTagControl)->wait(kNoDeadline);  // at t = 3
    } else {
      VectorSink first, second;
      k.platform->sleep_for(0.5);
      std::unique_ptr<Request> pending;
      Status x = recv_until(t, 0, RecvInto{{}, &first}, kTagControl, k.platform->now() + 1, &pending);
      // Posted at 0.5 s, after the send: 10 us of latency and 5000 bytes at 1 GB/s.
      r += x.to_string() + ";" + std::to_string(first.got == a) + ";" +
           std::to_string(std::fabs(k.platform->now() - 0.500015) < 1e-9) + ";";
      Status y = recv_until(t, 0, RecvInto{{}, &second}, kTagControl, k.platform->now() + 1, &pending);
      r += y.to_string().substr(0, 7) + ";" + std::to_string(pending != nullptr) + ";";
      Status z = pending ? pending->wait(kNoDeadline) : Status::Internal("no pending receive");
      r += z.to_string() + ";" + std::to_string(second.got == b) + ";" +
           std::to_string(std::fabs(k.platform->now() - 3.00003) < 1e-9);
    }
  });
  EXPECT_EQ(out, "OK;1;1;Timeout;1;OK;1;1");
}

// A sized message sent in pieces (isendv: the control plane's gather forwards its
// children's blobs so) is the same transfer as the contiguous one: one flow of the total
// size, the pieces' bytes in order, whether the receive comes later (eager, buffered), was
// posted first, or the message is large (rendezvous).
TEST(SimSeams, SizedMessageFromPiecesIsOneTransferOfTheirTotalSize) {
  std::string out = two_ranks_with_data([](RankSeams& k, std::string& r) {
    Transport& t = *k.transport;
    std::vector<uint8_t> a(3000), b(2000), c(20000);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 3);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 5 + 1);
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<uint8_t>(i * 11 + 2);
    const std::vector<IoPiece> small = {{a.data(), a.size()}, {nullptr, 0}, {b.data(), b.size()}};
    const std::vector<IoPiece> large = {{b.data(), b.size()}, {c.data(), c.size()}, {a.data(), a.size()}};
    if (k.rank == 0) {
      (void)t.isendv(1, small, kTagControl)->wait(kNoDeadline);  // at t = 0, before its receive
      k.platform->sleep_for(3);
      (void)t.isendv(1, small, kTagControl)->wait(kNoDeadline);  // at t = 3, after its receive
      k.platform->sleep_for(3);
      (void)t.isendv(1, large, kTagControl)->wait(kNoDeadline);  // at t = 6
    } else {
      VectorSink first, second, third;
      std::vector<uint8_t> ab = a, bca = b;
      ab.insert(ab.end(), b.begin(), b.end());
      bca.insert(bca.end(), c.begin(), c.end());
      bca.insert(bca.end(), a.begin(), a.end());
      k.platform->sleep_for(0.5);
      std::unique_ptr<Request> pending;
      Status x = recv_until(t, 0, RecvInto{{}, &first}, kTagControl, kNoDeadline, &pending);
      // Posted at 0.5 s, after the send: 10 us of latency and 5000 bytes at 1 GB/s.
      r += x.to_string() + ";" + std::to_string(first.got == ab) + ";" +
           std::to_string(std::fabs(k.platform->now() - 0.500015) < 1e-9) + ";";
      Status y = recv_until(t, 0, RecvInto{{}, &second}, kTagControl, kNoDeadline, &pending);  // posted first
      r += y.to_string() + ";" + std::to_string(second.got == ab) + ";" +
           std::to_string(std::fabs(k.platform->now() - 3.000015) < 1e-9) + ";";
      k.platform->sleep_for(3.5);  // the large one waits for its receive, posted at 6.500015 s
      Status z = recv_until(t, 0, RecvInto{{}, &third}, kTagControl, kNoDeadline, &pending);
      r += z.to_string() + ";" + std::to_string(third.got == bca) + ";" +
           std::to_string(std::fabs(k.platform->now() - 6.50005) < 1e-9);
    }
  });
  EXPECT_EQ(out, "OK;1;1;OK;1;1;OK;1;1");
}

// The layout of the simulated transport (one table per group, built once by the fabric and
// shared) is what GroupLayout::of computes from node_of: world and split groups, on a
// homogeneous and on an uneven placement.
TEST(SimSeams, GroupLayoutMatchesTheTransportDefaults) {
  for (int uneven = 0; uneven < 2; ++uneven) {
    std::string out = isolated([uneven] {
      std::string bad;
      WorldOptions o = star(3, 4);
      o.np = uneven ? 10 : 12;  // 10: the last server holds 2 of its 4
      Status s = simulate_ranks(o, [&](RankSeams& k) {
        auto odd = k.transport->split(k.rank % 2, -k.rank);  // reversed order, two groups
        for (Transport* t : {k.transport, odd.get()}) {
          const int got[5] = {t->local_rank(), t->local_size(), t->cross_rank(), t->cross_size(), t->homogeneous()};
          const GroupLayout l = GroupLayout::of(*t);
          const size_t me = static_cast<size_t>(t->rank());
          const int want[5] = {l.local_rank[me], l.local_size[me], l.cross_rank[me], l.cross_size, l.homogeneous};
          for (int i = 0; i < 5; ++i)
            if (got[i] != want[i]) bad += "rank " + std::to_string(k.rank) + " query " + std::to_string(i) + "; ";
        }
      });
      return s.ok() ? (bad.empty() ? std::string("same") : bad) : s.to_string();
    });
    EXPECT_EQ(out, "same") << "uneven=" << uneven;
  }
}

// A replayed step under paced cycles: submitting each gradient from the cycle hook (one
// sleep per backward pass) and waking at every ready time give the same simulation -- the
// same cycles see the same requests (same negotiated cycles, step and exposed times).
TEST(SimSeams, CycleHookSubmissionsMatchWakingPerLayer) {
  auto run = [](bool per_layer) {
    return isolated([per_layer] {
      WorldOptions o = star(2, 4, 10e9 / 8, 5e-6);
      o.config.cycle_time_ms = 5;
      o.config.fusion_threshold = 4 << 20;
      workloads::StepPlan plan;
      plan.batch = 32;
      plan.fwd_s = 0.010;
      plan.bwd_s = 0.040;
      for (int i = 0; i < 40; ++i) {  // some share a ready time, some fall on no cycle edge
        workloads::TensorReady t;
        t.name = "grad." + std::to_string(i);
        t.dtype = "float32";
        t.elements = 1000 + 60000 * (i % 7);
        t.bytes = 4 * t.elements;
        t.ready_s = 0.001 * (i - i % 3) + 1e-7 * i;
        plan.tensors.push_back(t);
      }
      std::string r;
      Status s = simulate(o, [&](Runtime& rt, RankSeams& k) {
        replay::ReplayOptions ro;
        ro.warmup_steps = 1;
        ro.steps = 2;
        ro.phantom = true;
        ro.device = DeviceKind::kGPU;
        ro.memory = k.gpu;
        ro.wake_per_layer = per_layer;
        replay::ReplayResult res;
        Status st = replay::replay_training(rt, *k.platform, plan, ro, &res);
        if (k.rank != 5) return;
        char b[256];
        for (const auto& x : res.steps) {
          std::snprintf(b, sizeof b, "%.9f/%.9f/%lld;", x.step_s, x.exposed_comm_s, static_cast<long long>(x.last_cycle));
          r += b;
        }
        const RuntimeStats rs = rt.stats();
        r += st.to_string() + ";cycles " + std::to_string(rs.cycles) + ";misses " + std::to_string(rs.cache_misses);
      });
      return s.ok() ? r : s.to_string();
    });
  };
  const std::string hook = run(false), per_layer = run(true);
  EXPECT_EQ(hook, per_layer);
  EXPECT_NE(hook.find(";OK;"), std::string::npos) << hook;
  EXPECT_EQ(hook.find("/0.000000000/"), std::string::npos) << "no exposed communication to tell them apart: " << hook;
}

// Timing-only trains are an optional part of the transport: offered (with
// simulation.train_transfers) only where no bytes move, also on split groups.
TEST(SimSeams, TimingTrainsOnlyInPhantomWorlds) {
  auto probe = [](bool with_data, int64_t transfers) {
    return isolated([=] {
      std::string r;
      WorldOptions o = star(2, 1);
      o.with_data = with_data;
      o.model.train_transfers = transfers;
      Status s = simulate_ranks(o, [&](RankSeams& k) {
        auto sub = k.transport->split(0, k.rank);
        if (k.rank != 0) return;
        for (Transport* t : {k.transport, sub.get()}) {
          r += t->timing() ? "trains" : "none";
          r += ";";
        }
      });
      return s.ok() ? r : s.to_string();
    });
  };
  EXPECT_EQ(probe(false, 6), "trains;trains;");
  EXPECT_EQ(probe(false, 0), "none;none;");  // train_transfers 0: every message on its own
  EXPECT_EQ(probe(true, 6), "none;none;");   // real bytes
}

TEST(SimSeams, RuntimeStartsAndShutsDown) {
  std::string out = isolated([] {
    WorldOptions o = star(2, 2);
    o.config.cycle_time_ms = 5;
    std::vector<double> ends(4);
    Status s = simulate(o, [&](Runtime& rt, RankSeams& k) {
      Tensor x;
      x.dtype = DataType::kFloat32;
      x.shape = {1 << 20};
      x.device = DeviceKind::kGPU;
      Status st = rt.allreduce("x", x, x);
      ends[static_cast<size_t>(k.rank)] = st.ok() ? k.platform->now() : -1;
    });
    std::string r = s.to_string();
    for (double e : ends) r.append(";").append(std::to_string(e > 0));
    return r;
  });
  EXPECT_EQ(out, "OK;1;1;1;1");
}

}  // namespace
}  // namespace hvd::sim

namespace hvd::sim {
namespace {

// Every topology builder gives a world in which the runtime runs an allreduce; the
// platform-XML path takes its GPUs and servers from the file.
// Every rank allreduces, then runs `then` with the result; rank 0's answer is returned.
using AfterAllreduce = std::function<std::string(Runtime&, RankSeams&, const Status&)>;
std::string allreduce_then(const WorldOptions& base, const AfterAllreduce& then) {
  return isolated([base, then] {
    std::string r;
    Status s = simulate(base, [&](Runtime& rt, RankSeams& k) {
      Tensor x;
      x.shape = {1 << 18};
      x.device = DeviceKind::kGPU;
      Status st = rt.allreduce("x", x, x);
      std::string mine = then(rt, k, st);
      if (k.rank == 0) r = mine;
    });
    return s.ok() ? r : s.to_string();
  });
}

std::string allreduce_on(const WorldOptions& base) {
  return allreduce_then(base, [](Runtime& rt, RankSeams& k, const Status& st) {
    return st.to_string() + ";" + std::to_string(rt.cross_size()) + ";" + std::to_string(k.platform->now() > 0);
  });
}

// A SimGrid platform file in the test's temp dir: `zone` is the body of its one Full zone.
// Returns its path, or "" when it cannot be written.
std::string write_platform(const std::string& name, const char* zone) {
  const std::string xml = ::testing::TempDir() + name;
  FILE* f = std::fopen(xml.c_str(), "w");
  if (!f) return "";
  std::fprintf(f,
               "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Full\">%s\n  </zone>\n</platform>\n",
               zone);
  std::fclose(f);
  return xml;
}

TEST(SimTopology, StarFatTreeTorusNvlinkAndPlatformFile) {
  WorldOptions o = star(4, 2);
  o.cluster.network.nic = "per_server";
  o.cluster.network.efficiency = -1;
  o.cluster.network.message_overhead = -1;
  EXPECT_EQ(allreduce_on(o), "OK;4;1");
  o.cluster.network.topology = "fat_tree";
  o.cluster.network.servers_per_switch = 2;
  o.cluster.network.oversubscription = 2;
  EXPECT_EQ(allreduce_on(o), "OK;4;1");
  o.cluster.network.topology = "torus";
  o.cluster.network.torus_dims = "2x2";
  EXPECT_EQ(allreduce_on(o), "OK;4;1");
  o.cluster.network.topology = "dragonfly";
  o.cluster.network.dragonfly = "2,1;1,1;2,1;1";
  EXPECT_EQ(allreduce_on(o), "OK;4;1");
  o.cluster.network.topology = "star";
  o.cluster.gpu = "H100";
  o.cluster.intra.type = "nvlink";
  o.config.hierarchical_allreduce = true;
  EXPECT_EQ(allreduce_on(o), "OK;4;1");
  WorldOptions x;
  x.cluster.platform_file = write_platform("hvdsim_platform.xml", R"(
    <cluster id="a" prefix="a-" suffix="" radical="0-1" speed="1Gf" bw="10GBps" lat="1us" bb_bw="100GBps" bb_lat="0us"/>
    <cluster id="b" prefix="b-" suffix="" radical="0-1" speed="1Gf" bw="10GBps" lat="1us" bb_bw="100GBps" bb_lat="0us"/>
    <link id="ab" bandwidth="3GBps" latency="5us"/>
    <zoneRoute src="a" dst="b" gw_src="a-a_router" gw_dst="b-b_router"><link_ctn id="ab"/></zoneRoute>)");
  ASSERT_FALSE(x.cluster.platform_file.empty());
  x.np = 4;
  EXPECT_EQ(allreduce_on(x), "OK;2;1");
}

}  // namespace
}  // namespace hvd::sim

namespace hvd::sim {
namespace {

// The CPU model only times sleeps: built platforms (single-core hosts) take its
// trace-integration variant; a platform file with multi-core hosts keeps the default,
// which TI would refuse, and both time a rank's device work the same.
std::string cpu_model_and_end(const WorldOptions& base) {
  return allreduce_then(base, [](Runtime&, RankSeams& k, const Status& st) {
    k.platform->compute(0.25);
    return st.to_string() + ";" + simgrid::config::get_value<std::string>("cpu/optim") + ";" +
           std::to_string(k.platform->now() > 0.25);
  });
}

TEST(SimTopology, SleepsUseTheCpuModelTheHostsAllow) {
  EXPECT_EQ(cpu_model_and_end(star(2, 2)), "OK;TI;1");
  WorldOptions x;
  x.cluster.platform_file = write_platform("hvdsim_platform_multicore.xml", R"(
    <cluster id="a" prefix="a-" suffix="" radical="0-3" speed="1Gf" core="4" bw="10GBps" lat="1us" bb_bw="100GBps" bb_lat="0us"/>)");
  ASSERT_FALSE(x.cluster.platform_file.empty());
  x.np = 4;
  EXPECT_EQ(cpu_model_and_end(x), "OK;Lazy;1");
}

}  // namespace
}  // namespace hvd::sim
