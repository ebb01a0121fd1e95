// Scenario "calibration" (a file from hvdbench --calibrate) and "what_if" runs: values land
// where the docs say, explicit values win, bad files give one line naming file and path,
// and the what-ifs (slow GPU, slow link, degraded NIC) cost what the arithmetic says.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "hvd/sim/collective_sweep.h"
#include "hvd/sim/runner.h"
#include "hvd/sim/scenario.h"

namespace hvd::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json calibration() {
  return {{"format", "hvdsim-calibration"},
          {"version", 1},
          {"np", 2},
          {"links",
           {{"intra_node",
             {{"latency_s", 2e-6},
              {"bandwidth_Bps", 8e9},
              {"bandwidth_factors", {{32768, 1.5}, {1048576, 1.0}, {16777216, 4.0}}}}},
            {"inter_node", {{"latency_s", 12e-6}, {"bandwidth_Bps", 3e9}}}}},
          {"device",
           {{"copy_bandwidth_Bps", 10e9},
            {"reduce_bandwidth_Bps", 6e9},
            {"copy_bandwidth_hot_Bps", 40e9},
            {"reduce_bandwidth_hot_Bps", 30e9}}},
          {"runtime", {{"per_call_overhead_s", 40e-6}}}};
}

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("hvd_calib_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(dir / "sub"); }
  ~TempDir() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

const char* kScenario = R"({
  "calibration": "sub/calib.json",
  "cluster": {"nodes": 2, "gpus_per_node": 2, "gpu": "P100", "device": {"scatter_gather": true}},
  "workload": {"models": ["resnet50"]},
  "sweep": {"np": [4]}
})";

Status load(const TempDir& t, const std::string& scenario, Scenario* sc,
            std::vector<std::string> sets = {}) {
  return load_scenario(t.write("s.json", scenario), sets, sc);
}

TEST(Calibration, SetsLinksDeviceAndWakeupRelativeToTheScenario) {
  TempDir t;
  t.write("sub/calib.json", calibration().dump());
  Scenario sc;
  ASSERT_TRUE(load(t, kScenario, &sc).ok());
  const ScenarioPoint& p = sc.points.at(0);
  EXPECT_NEAR(p.cluster.intra.latency, 1e-6, 1e-12);  // two hops per message
  EXPECT_NEAR(p.cluster.intra.bandwidth, 8e9, 1);
  EXPECT_NEAR(p.cluster.network.latency, 10e-6, 1e-12);  // whole path minus the intra hops
  EXPECT_NEAR(p.cluster.network.bandwidth, 3e9, 1);
  EXPECT_DOUBLE_EQ(p.cluster.network.effective_efficiency(), 1.0);
  EXPECT_DOUBLE_EQ(p.cluster.network.effective_overhead(), 0.0);
  EXPECT_NEAR(p.device.copy_bandwidth, 10e9, 1);
  EXPECT_NEAR(p.device.reduce_bandwidth, 6e9, 1);
  EXPECT_NEAR(p.device.copy_bandwidth_hot, 40e9, 1);
  EXPECT_NEAR(p.device.reduce_bandwidth_hot, 30e9, 1);
  EXPECT_TRUE(p.device.scatter_gather);
  EXPECT_NEAR(p.simulation.wakeup_latency, 20e-6, 1e-12);
  ASSERT_EQ(p.simulation.bandwidth_factors[0].size(), 3u);
  EXPECT_DOUBLE_EQ(p.simulation.bandwidth_factors[0][2].second, 4.0);
  EXPECT_TRUE(p.simulation.bandwidth_factors[1].empty());
}

// A multi-node calibration measured every paired rank at once: bandwidth_Bps is one pair's
// share. One NIC per server carried all its paired ranks' flows; a NIC per GPU carried one.
TEST(Calibration, InterNodeShareTimesPairedRanksPerServerIsTheNic) {
  TempDir t;
  json c = calibration();
  c["np"] = 8;
  c["nodes"] = 2;
  c["links"]["inter_node"]["pairs"] = 4;  // 4 ranks per server, each paired across
  t.write("sub/calib.json", c.dump());
  Scenario sc;
  ASSERT_TRUE(load(t, kScenario, &sc).ok());
  EXPECT_NEAR(sc.points.at(0).cluster.network.bandwidth, 12e9, 1);  // per_server (default)
  std::string s = kScenario;
  s.replace(s.find("\"gpu\": \"P100\""), 13, "\"gpu\": \"P100\", \"network\": {\"nic\": \"per_gpu\"}");
  Scenario g;
  ASSERT_TRUE(load(t, s, &g).ok());
  EXPECT_NEAR(g.points.at(0).cluster.network.bandwidth, 3e9, 1);
  // Files without the pair count (hand-written) keep the figure as the NIC's.
  t.write("sub/calib.json", calibration().dump());
  Scenario old;
  ASSERT_TRUE(load(t, kScenario, &old).ok());
  EXPECT_NEAR(old.points.at(0).cluster.network.bandwidth, 3e9, 1);
}

TEST(Calibration, ExplicitScenarioValuesAndSetWin) {
  TempDir t;
  t.write("sub/calib.json", calibration().dump());
  std::string s = kScenario;
  s.replace(s.find("\"gpu\": \"P100\""), 13,
            "\"gpu\": \"P100\", \"intra_node\": {\"bandwidth\": \"1GBps\"}");
  Scenario sc;
  ASSERT_TRUE(load(t, s, &sc, {"cluster.device.reduce_bandwidth=2GBps"}).ok());
  EXPECT_NEAR(sc.points[0].cluster.intra.bandwidth, 1e9, 1);
  EXPECT_NEAR(sc.points[0].device.reduce_bandwidth, 2e9, 1);
  EXPECT_NEAR(sc.points[0].device.copy_bandwidth, 10e9, 1);  // still calibrated
}

std::string error_of(const TempDir& t, const std::string& calib_text) {
  t.write("sub/calib.json", calib_text);
  Scenario sc;
  Status s = load(t, kScenario, &sc);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  return s.message();
}

// A calibration made with the caller driving its cycles: the hand-off becomes the wake-up
// latency and the rest of the overhead is added to every message (two intra hops each).
TEST(Calibration, CallerDrivenOverheadGoesIntoTheMessagesAndTheHandOffIntoWakeups) {
  TempDir t;
  json c = calibration();
  c["runtime"] = {{"per_call_overhead_s", 12e-6}, {"per_message_overhead_s", 4e-6},
                  {"hand_off_s", 3e-6}, {"caller_drives", true}};
  t.write("sub/calib.json", c.dump());
  Scenario sc;
  ASSERT_TRUE(load(t, kScenario, &sc).ok());
  const ScenarioPoint& p = sc.points.at(0);
  EXPECT_NEAR(p.simulation.wakeup_latency, 3e-6, 1e-12);
  EXPECT_NEAR(p.cluster.intra.latency, (2e-6 + 4e-6) / 2, 1e-12);
  // Across nodes the path is two intra hops plus the network: the network keeps α' − α.
  EXPECT_NEAR(p.cluster.network.latency, 10e-6, 1e-12);
  c["runtime"].erase("per_message_overhead_s");
  EXPECT_NE(error_of(t, c.dump()).find("runtime.per_message_overhead_s"), std::string::npos);
}

TEST(Calibration, BadFilesGiveOneLineNamingFileAndPath) {
  TempDir t;
  json c = calibration();
  EXPECT_NE(error_of(t, "{ not json").find("calibration: sub/calib.json: not valid JSON"),
            std::string::npos);
  c["version"] = 7;
  EXPECT_NE(error_of(t, c.dump()).find("sub/calib.json: version: 7 is not 1"), std::string::npos);
  c = calibration();
  c["links"]["intra_node"]["bandwidth_Bps"] = -5;
  EXPECT_NE(error_of(t, c.dump()).find("sub/calib.json: links.intra_node.bandwidth_Bps: -5 is not"),
            std::string::npos);
  c = calibration();
  c["links"]["intra_node"]["bandwidth_factors"][1] = {"x", 2};
  EXPECT_NE(error_of(t, c.dump()).find("sub/calib.json: links.intra_node.bandwidth_factors[1]: "),
            std::string::npos);
  c = calibration();
  c.erase("format");
  EXPECT_NE(error_of(t, c.dump()).find("format: not an hvdsim calibration file"),
            std::string::npos);
  fs::remove(t.dir / "sub/calib.json");
  Scenario sc;
  Status s = load(t, kScenario, &sc);
  EXPECT_NE(s.message().find("calibration: \"sub/calib.json\": cannot open"), std::string::npos)
      << s.message();
}

TEST(Calibration, WakeupLatencyAddsTwoHandOffsPerCallUnlessTheCallerDrives) {
  // A one-element allreduce between two ranks. With caller_drives off the caller wakes the
  // background loop and the loop wakes the caller: two hand-offs, each costing the wake-up
  // latency. With it on (the default) the blocked caller runs the cycle itself and the
  // wake-up latency does not enter the call at all.
  const char* text = R"({"cluster": {"nodes": 1, "gpus_per_node": 2,
      "device": {"copy_bandwidth": "0Bps", "reduce_bandwidth": "0Bps"}},
    "workload": {"models": ["resnet50"]}, "runtime": {"cycle_time_ms": 0}, "sweep": {"np": [2]}})";
  auto time_of = [&](std::vector<std::string> sets) {
    Scenario sc;
    EXPECT_TRUE(parse_scenario(text, "w.json", sets, &sc).ok());
    std::vector<CollectivePoint> out;
    EXPECT_TRUE(simulate_allreduce_sweep(sc.points[0], 2, {4}, 2, 10, &out).ok());
    return out.empty() ? -1.0 : out[0].seconds;
  };
  const double base_off = time_of({"runtime.caller_drives=false"});
  const double slow_off = time_of({"runtime.caller_drives=false", "simulation.wakeup_latency=25us"});
  EXPECT_NEAR(slow_off - base_off, 50e-6, 10e-6) << base_off << " -> " << slow_off;
  const double base_on = time_of({});
  const double slow_on = time_of({"simulation.wakeup_latency=25us"});
  EXPECT_NEAR(slow_on, base_on, 1e-9) << base_on << " -> " << slow_on;
  EXPECT_NEAR(base_on, base_off, 1e-9);  // the hand-offs were the only difference
}

TEST(Calibration, BandwidthFactorsSlowLargeMessages) {
  Scenario sc;
  const char* text = R"({"cluster": {"nodes": 1, "gpus_per_node": 2,
      "intra_node": {"bandwidth": "10GBps", "latency": "0us"},
      "device": {"copy_bandwidth": "0Bps", "reduce_bandwidth": "0Bps"}},
    "workload": {"models": ["resnet50"]}, "runtime": {"cycle_time_ms": 0}, "sweep": {"np": [2]}})";
  std::vector<CollectivePoint> fast, slow;
  ASSERT_TRUE(parse_scenario(text, "f.json", {}, &sc).ok());
  ASSERT_TRUE(simulate_allreduce_sweep(sc.points[0], 2, {64 << 20}, 1, 2, &fast).ok());
  ASSERT_TRUE(parse_scenario(text, "f.json",
                             {"simulation.bandwidth_factors={\"intra_node\": [[1024, 3.0]]}"}, &sc)
                  .ok());
  ASSERT_TRUE(simulate_allreduce_sweep(sc.points[0], 2, {64 << 20}, 1, 2, &slow).ok());
  EXPECT_NEAR(slow[0].seconds / fast[0].seconds, 3.0, 0.1);
}

// With the cache model, a reduction of data the rank touched recently runs at the in-cache
// rate, one of data far beyond the cache at the memory rate: a small allreduce repeated on
// the same buffers gets the in-cache speed-up on every operand, a big one only on the
// segment it has just received (the out-of-place ring receives each segment where its
// result goes and reduces it there with the input, which is far out of cache). The links
// are free here, so the device work is the whole time.
TEST(Calibration, InCacheRatesSpeedUpSmallAllreducesAndJustReceivedSegments) {
  const char* text = R"({"cluster": {"nodes": 1, "gpus_per_node": 2,
      "intra_node": {"bandwidth": "100000GBps", "latency": "0us"},
      "device": {"copy_bandwidth": "10GBps", "reduce_bandwidth": "5GBps", "scatter_gather": true}},
    "workload": {"models": ["resnet50"]}, "runtime": {"cycle_time_ms": 0},
    "simulation": {"cache": "4MiB"}, "sweep": {"np": [2]}})";
  auto time_of = [&](int64_t bytes, std::vector<std::string> sets) {
    Scenario sc;
    EXPECT_TRUE(parse_scenario(text, "hot.json", sets, &sc).ok());
    std::vector<CollectivePoint> out;
    EXPECT_TRUE(simulate_allreduce_sweep(sc.points[0], 2, {bytes}, 2, 6, &out).ok());
    return out.empty() ? 0.0 : out[0].seconds;
  };
  const std::vector<std::string> hot = {"cluster.device.reduce_bandwidth_hot=20GBps",
                                        "cluster.device.copy_bandwidth_hot=40GBps"};
  const double small_cold = time_of(256 << 10, {}), small_hot = time_of(256 << 10, hot);
  const double big_cold = time_of(int64_t{64} << 20, {}), big_hot = time_of(int64_t{64} << 20, hot);
  // Small: every reduce finds its operands in cache (4x faster rate).
  EXPECT_LT(small_hot, small_cold * 0.4) << small_cold << " -> " << small_hot;
  // Big: the buffers are 16x the cache; of each reduce's two operands the received segment
  // is hot and the input is not: half the bytes at the 4x rate, 1/2 / 4 + 1/2 = 0.625.
  EXPECT_NEAR(big_hot / big_cold, 0.625, 0.03) << big_cold << " -> " << big_hot;
}

// A hot-fraction curve instead of the all-or-nothing cache: with every reused block half
// hot, a small allreduce repeated on the same buffers takes the mean of the all-hot and the
// all-cold time (the device work is linear in the hot fraction; the links are free).
TEST(Calibration, CacheCurveBlendsHotAndColdByReuseDistance) {
  const char* text = R"({"cluster": {"nodes": 1, "gpus_per_node": 2,
      "intra_node": {"bandwidth": "100000GBps", "latency": "0us"},
      "device": {"copy_bandwidth": "10GBps", "reduce_bandwidth": "5GBps", "scatter_gather": true,
                 "reduce_bandwidth_hot": "20GBps", "copy_bandwidth_hot": "40GBps"}},
    "workload": {"models": ["resnet50"]}, "runtime": {"cycle_time_ms": 0},
    "simulation": {"cache": "4MiB"}, "sweep": {"np": [2]}})";
  auto time_of = [&](std::vector<std::string> sets) {
    Scenario sc;
    Status s = parse_scenario(text, "curve.json", sets, &sc);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<CollectivePoint> out;
    EXPECT_TRUE(simulate_allreduce_sweep(sc.points[0], 2, {256 << 10}, 4, 20, &out).ok());
    return out.empty() ? 0.0 : out[0].seconds;
  };
  const double hot = time_of({}), cold = time_of({"simulation.cache_curve=[[1, 0.0]]"});
  const double half = time_of({"simulation.cache_curve=[[1, 0.5], [1e12, 0.5]]"});
  EXPECT_LT(hot, cold * 0.4);
  EXPECT_NEAR(half, (hot + cold) / 2, 0.02 * cold) << hot << " " << half << " " << cold;
  // A curve falling from 1 to 0 between 64 KiB and 128 MiB of reuse distance lands between.
  const double falling = time_of({"simulation.cache_curve=[[65536, 1], [134217728, 0]]"});
  EXPECT_GT(falling, hot);
  EXPECT_LT(falling, cold);
  Scenario sc;
  Status s = parse_scenario(text, "curve.json", {"simulation.cache_curve=[[2048, 1], [1024, 0]]"}, &sc);
  EXPECT_NE(s.message().find("simulation.cache_curve[1]"), std::string::npos) << s.message();
  s = parse_scenario(text, "curve.json", {"simulation.cache_curve=[[2048, 1.5]]"}, &sc);
  EXPECT_NE(s.message().find("hot fraction in [0, 1]"), std::string::npos) << s.message();
}

// The calibration's cache probe becomes the curve: reuse distance 2 x pool, the hot
// fraction never rising with distance.
TEST(Calibration, CacheProbeBecomesTheHotFractionCurve) {
  TempDir t;
  json c = calibration();
  c["cache_probe"] = {{"pools", json::array({{{"pool_bytes", 1 << 20}, {"hot_fraction", 1.0}},
                                             {{"pool_bytes", 2 << 20}, {"hot_fraction", 0.8}},
                                             {{"pool_bytes", 4 << 20}, {"hot_fraction", 0.3}},
                                             {{"pool_bytes", 8 << 20}, {"hot_fraction", 0.4}}})}};
  t.write("sub/calib.json", c.dump());
  Scenario sc;
  ASSERT_TRUE(load(t, kScenario, &sc).ok());
  const auto& curve = sc.points.at(0).simulation.cache_curve;
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_DOUBLE_EQ(curve[0].first, 2.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(curve[1].second, 0.8);
  EXPECT_DOUBLE_EQ(curve[2].second, 0.3);
  EXPECT_DOUBLE_EQ(curve[3].second, 0.3);  // 0.4 was noise
}

// Runs a scenario; returns the records.
std::vector<report::RunRecord> run(const std::string& text) {
  Scenario sc;
  Status s = parse_scenario(text, "whatif.json", {}, &sc);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<report::RunRecord> recs;
  RunOptions o;
  s = run_scenario(sc, o, &recs);
  EXPECT_TRUE(s.ok()) << s.message();
  return recs;
}

const report::RunRecord* find(const std::vector<report::RunRecord>& r, const std::string& label) {
  for (const auto& x : r)
    if (x.label == label) return &x;
  ADD_FAILURE() << "no run labelled '" << label << "'";
  return nullptr;
}

// RunOutcome::steps_wall_s / steps_cpu_s (what hvdsim_bench divides by the steps): the
// cost of the measured steps only, so more than nothing and less than the whole run, with
// or without a warm-up step before them.
TEST(Runner, MeasuredStepsCostIsPartOfTheRun) {
  for (int warmup : {1, 0}) {
    const std::string text = R"({"cluster": {"nodes": 1, "gpus_per_node": 4},
        "workload": {"models": ["resnet50"], "steps": 2, "warmup_steps": )" + std::to_string(warmup) + R"(},
        "sweep": {"np": [4]}})";
    Scenario sc;
    ASSERT_TRUE(parse_scenario(text, "steps_cost.json", {}, &sc).ok());
    std::vector<report::RunRecord> recs;
    std::vector<RunOutcome> outs;
    ASSERT_TRUE(run_scenario(sc, RunOptions{}, &recs, &outs).ok());
    const RunOutcome* four = nullptr;
    for (const auto& o : outs)
      if (o.record.np == 4) four = &o;
    ASSERT_NE(four, nullptr);
    EXPECT_GT(four->steps_wall_s, 0) << "warm-up " << warmup;
    EXPECT_LT(four->steps_wall_s, four->wall_s) << "warm-up " << warmup;
    EXPECT_GT(four->steps_cpu_s, 0) << "warm-up " << warmup;
  }
}

// A training replay's phantom gradients have addresses of their own, so the cache model
// follows them: of the ring's 2(p-1) sends per tensor, all but the first send a chunk this
// rank has just reduced or received, which is in cache. Links only (free device), cold
// messages 3x the hot cost, one allreduce per tensor: with p = 4, 5 of 6 sends are hot.
TEST(Calibration, ReplayGradientsAreFollowedByTheCacheModel) {
  auto allreduce_s = [](std::vector<std::string> sets) {
    const char* text = R"({"cluster": {"nodes": 1, "gpus_per_node": 4,
        "intra_node": {"bandwidth": "4GBps", "latency": "0us"},
        "device": {"copy_bandwidth": "0Bps", "reduce_bandwidth": "0Bps", "scatter_gather": true}},
      "workload": {"models": ["resnet50"], "steps": 1, "warmup_steps": 1},
      "runtime": {"fusion_threshold": 0},
      "simulation": {"cache": "16MiB", "bandwidth_factors": {"intra_node": [[1, 1]], "intra_node_cold": [[1, 3]]}},
      "sweep": {"np": [4]}})";
    Scenario sc;
    Status s = parse_scenario(text, "replay_cache.json", sets, &sc);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<report::RunRecord> recs;
    s = run_scenario(sc, RunOptions{}, &recs);
    EXPECT_TRUE(s.ok()) << s.message();
    for (const auto& r : recs)
      if (r.np == 4 && !r.collectives.empty()) return r.collectives[0].time_s;
    ADD_FAILURE() << "no np=4 run";
    return 0.0;
  };
  const double modelled = allreduce_s({});
  const double hot = allreduce_s({"simulation.cache=\"0B\""});  // no cache model: every message hot
  const double cold = allreduce_s({"simulation.cache_curve=[[1, 0.0]]"});  // nothing stays
  ASSERT_GT(cold, 2 * hot);
  EXPECT_GT(modelled, hot);
  // 1/6 of the sends cold: hot + (cold - hot) / 6, give or take the first send's share.
  EXPECT_LT(modelled, hot + 0.35 * (cold - hot)) << hot << " " << modelled << " " << cold;
}

TEST(WhatIf, SlowGpuCostsWhatTheArithmeticSays) {
  // Compute-bound: free device, fast links. Rank 1 at 2/3 speed: every step waits for it,
  // so the step takes 1.5x and efficiency drops to ~1/1.5 of the baseline.
  auto recs = run(R"({"cluster": {"nodes": 1, "gpus_per_node": 4,
      "intra_node": {"bandwidth": "1000GBps", "latency": "0us"},
      "device": {"copy_bandwidth": "0Bps", "reduce_bandwidth": "0Bps"}},
    "workload": {"models": ["resnet50"], "steps": 1},
    "what_if": [{"name": "slow_gpu", "set": {"cluster.stragglers": [{"rank": 1, "speed": 0.6667}]}}],
    "sweep": {"np": [4]}})");
  const auto* base = find(recs, "");
  const auto* slow = find(recs, "slow_gpu");
  ASSERT_TRUE(base && slow);
  EXPECT_GT(base->scaling_efficiency, 0.97);
  EXPECT_NEAR(slow->scaling_efficiency / base->scaling_efficiency, 1 / 1.5, 0.02);
}

TEST(WhatIf, SlowLinkAndDegradedNicLowerEfficiency) {
  // Two servers, communication-bound (VGG-16 over 10 Gbit/s): halving server 1's NIC
  // roughly doubles the exposed communication; a degraded NIC (half + 200 us) more so.
  auto recs = run(R"({"cluster": {"nodes": 2, "gpus_per_node": 1,
      "network": {"bandwidth": "10Gbps", "latency": "5us", "protocol": "infiniband"}},
    "workload": {"models": ["vgg16"], "steps": 1},
    "what_if": [
      {"name": "slow_link", "set": {"cluster.degraded_links": [{"node": 1, "bandwidth_factor": 0.5}]}},
      {"name": "degraded_nic", "set": {"cluster.degraded_links":
          [{"node": 1, "bandwidth_factor": 0.5, "extra_latency": "200us"}]}}],
    "sweep": {"np": [2]}})");
  const auto* base = find(recs, "");
  const auto* link = find(recs, "slow_link");
  const auto* nic = find(recs, "degraded_nic");
  ASSERT_TRUE(base && link && nic);
  EXPECT_LT(link->scaling_efficiency, base->scaling_efficiency - 0.05);
  EXPECT_LT(nic->scaling_efficiency, link->scaling_efficiency);
  // Compute is unchanged; the extra step time is the extra (slower) communication.
  const double extra = link->step_time_s - base->step_time_s;
  EXPECT_GT(extra, 0.5 * base->exposed_comm_s);
  EXPECT_NEAR(link->compute_s, base->compute_s, 1e-3 * base->compute_s);
}

TEST(WhatIf, BadEntriesNameThePath) {
  Scenario sc;
  const std::string head = R"({"cluster": {"nodes": 2}, "workload": {"models": ["resnet50"]}, )";
  Status s = parse_scenario(head + R"("what_if": [{"name": "x"}]})", "w.json", {}, &sc);
  EXPECT_NE(s.message().find("what_if[0].set: missing"), std::string::npos) << s.message();
  s = parse_scenario(
      head + R"("what_if": [{"name": "x", "set": {"cluster.stragglers": [{"rank": 9}]}}]})",
      "w.json", {}, &sc);
  EXPECT_NE(s.message().find("cluster.stragglers[0].rank: 9 is not an integer in [0, 1]"),
            std::string::npos)
      << s.message();
  s = parse_scenario(R"({"cluster": {"nodes": 2, "degraded_links": [{"node": 0, "speed": 1}]},
                         "workload": {"models": ["resnet50"]}})",
                     "w.json", {}, &sc);
  EXPECT_NE(s.message().find("cluster.degraded_links[0].speed: unknown key"), std::string::npos)
      << s.message();
}

TEST(Calibration, ShippedScenariosLoadAndTheSchemaNamesTheNewKeys) {
  for (const char* f : {"localhost.json", "whatif_straggler.json"}) {
    Scenario sc;
    Status s = load_scenario(std::string(HVD_SOURCE_DIR) + "/scenarios/" + f, {}, &sc);
    EXPECT_TRUE(s.ok()) << f << ": " << s.message();
  }
  std::ifstream f(std::string(HVD_SOURCE_DIR) + "/scenarios/schema.json");
  const std::string schema((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* key : {"calibration", "what_if", "stragglers", "degraded_links", "scatter_gather",
                          "wakeup_latency", "bandwidth_factors", "intra_node_cold", "cache"})
    EXPECT_NE(schema.find(std::string("\"") + key + "\""), std::string::npos) << key;
}

TEST(Calibration, HvdsimExitsTwoWithOneLineOnABadFile) {
  const std::string cmd = std::string(HVDSIM_EXE) + " " + HVD_SOURCE_DIR +
                          "/scenarios/localhost.json --set calibration=missing.json 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string err;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) err += buf;
  const int st = pclose(p);
  EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("localhost.json: calibration: \"missing.json\": cannot open"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace hvd::sim
