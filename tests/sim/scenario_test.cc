// Scenario loading: defaults, units, overrides, sweeps, and one clear error (JSON path,
// value, what was expected) for every kind of bad input; hvdsim exits 2 on them.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

#include "hvd/sim/scenario.h"
#include "run_hvdsim.h"

namespace hvd::sim {
namespace {

const char* kBase = R"({
  "cluster": {"nodes": 4, "gpus_per_node": 2, "gpu": "V100",
              "network": {"bandwidth": "100Gbps", "latency": "2us", "protocol": "tcp"}},
  "workload": {"models": ["resnet50"], "batch_size": 32},
  "runtime": {"fusion_threshold": "32MiB", "HOROVOD_CYCLE_TIME": "2ms"},
  "sweep": {"np": [1, 2, 8]}
})";

Status parse(const std::string& text, Scenario* sc, std::vector<std::string> sets = {}) {
  return parse_scenario(text, "s.json", sets, sc);
}

std::string error_of(const std::string& text, std::vector<std::string> sets = {}) {
  Scenario sc;
  Status s = parse(text, &sc, sets);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "one line";
  return s.message();
}

TEST(Scenario, ReadsUnitsKnobsAndDefaults) {
  Scenario sc;
  ASSERT_TRUE(parse(kBase, &sc).ok());
  ASSERT_EQ(sc.points.size(), 1u);
  const ScenarioPoint& p = sc.points[0];
  EXPECT_EQ(p.cluster.gpus(), 8);
  EXPECT_DOUBLE_EQ(p.cluster.network.bandwidth, 100e9 / 8);
  EXPECT_DOUBLE_EQ(p.cluster.network.latency, 2e-6);
  EXPECT_EQ(p.config.fusion_threshold, 32 << 20);
  EXPECT_DOUBLE_EQ(p.config.cycle_time_ms, 2.0);
  EXPECT_EQ(p.np, (std::vector<int>{1, 2, 8}));
  EXPECT_EQ(p.workload.models, std::vector<std::string>{"resnet50"});
  EXPECT_EQ(p.workload.batch_size, 32);
  EXPECT_GT(p.device.copy_bandwidth, 0);
  EXPECT_DOUBLE_EQ(p.cluster.network.effective_efficiency(), 0.94);  // tcp defaults
  EXPECT_DOUBLE_EQ(p.cluster.network.effective_overhead(), 30e-6);
  EXPECT_DOUBLE_EQ(p.cluster.network.effective_connection_rate(), 16e9 / 8);
  EXPECT_EQ(p.label, "");
}

// The device model follows the GPU: a copy moves every byte twice through memory, a
// reduction three times, at the catalogue's measured memory efficiency (Hopper 0.87, from
// an H200; unmeasured generations their datasheet figure).
TEST(Scenario, DeviceRatesFollowTheGpusMeasuredMemoryBandwidth) {
  for (auto [gpu, gbps, eff] : {std::tuple{"P100", 732.0, 1.0}, std::tuple{"H100", 3350.0, 0.87},
                                std::tuple{"H200", 4800.0, 0.87}}) {
    Scenario sc;
    ASSERT_TRUE(parse(kBase, &sc, {std::string("cluster.gpu=") + gpu}).ok()) << gpu;
    EXPECT_DOUBLE_EQ(sc.points[0].device.copy_bandwidth, gbps * eff * 1e9 / 2) << gpu;
    EXPECT_DOUBLE_EQ(sc.points[0].device.reduce_bandwidth, gbps * eff * 1e9 / 3) << gpu;
  }
}

TEST(Scenario, SetOverridesAnyPath) {
  Scenario sc;
  ASSERT_TRUE(parse(kBase, &sc, {"cluster.network.bandwidth=40Gbps", "runtime.fusion_threshold=1MiB",
                                 "sweep.np=[4]", "cluster.device.host_staged=true"}).ok());
  EXPECT_DOUBLE_EQ(sc.points[0].cluster.network.bandwidth, 40e9 / 8);
  EXPECT_EQ(sc.points[0].config.fusion_threshold, 1 << 20);
  EXPECT_EQ(sc.points[0].np, std::vector<int>{4});
  EXPECT_TRUE(sc.points[0].device.host_staged);
}

TEST(Scenario, SweepsKnobsAndPathsAsACartesianProduct) {
  Scenario sc;
  ASSERT_TRUE(parse(kBase, &sc, {R"(sweep.fusion_threshold=["16MiB","64MiB"])",
                                 R"(sweep.cluster.network.bandwidth=["10Gbps","25Gbps","100Gbps"])"}).ok());
  ASSERT_EQ(sc.points.size(), 6u);
  EXPECT_EQ(sc.points[0].label, "cluster.network.bandwidth=10Gbps,fusion_threshold=16MiB");
  EXPECT_EQ(sc.points[1].label, "cluster.network.bandwidth=10Gbps,fusion_threshold=64MiB");
  EXPECT_EQ(sc.points[5].config.fusion_threshold, 64 << 20);
  EXPECT_DOUBLE_EQ(sc.points[5].cluster.network.bandwidth, 100e9 / 8);
}

struct Bad {
  std::vector<std::string> sets;
  std::string expected;  // substring of the message
};

class ScenarioErrors : public ::testing::TestWithParam<Bad> {};

TEST_P(ScenarioErrors, NameThePathTheValueAndWhatWasExpected) {
  const std::string msg = error_of(kBase, GetParam().sets);
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("s.json: ", 0), 0u) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScenarioErrors,
    ::testing::Values(
        Bad{{"cluster.nodes=\"four\""}, "cluster.nodes: \"four\" is not an integer in [1, 65536]"},
        Bad{{"cluster.nodes=0"}, "cluster.nodes: 0 is not an integer"},
        Bad{{"cluster.network.bandwidth=25"}, "cluster.network.bandwidth: 25 is not a bandwidth with a unit"},
        Bad{{"cluster.network.bandwidth=-25Gbps"}, "cluster.network.bandwidth: \"-25Gbps\" is not a bandwidth with a unit (e.g. \"25Gbps\", \"12GBps\") >= 0"},
        Bad{{"cluster.network.bandwidth=0Gbps"}, "cluster.network.bandwidth: \"0Gbps\" is not a bandwidth > 0"},
        Bad{{"cluster.network.latency=5parsecs"}, "cluster.network.latency: \"5parsecs\" is not a duration"},
        Bad{{"cluster.network.bandwith=25Gbps"}, "cluster.network.bandwith: unknown key; expected one of topology, bandwidth"},
        Bad{{"cluster.network.topology=ring"}, "cluster.network.topology: \"ring\" is not one of star, fat_tree, torus, dragonfly"},
        Bad{{"cluster.gpu=K80"}, "cluster.gpu: \"K80\" is not a known GPU"},
        Bad{{"sweep.np=[1,16]"}, "sweep.np[1]: 16 does not fit the cluster (4 nodes x 2 GPUs = 8)"},
        Bad{{"sweep.np=[0]"}, "sweep.np[0]: 0 is not a positive integer"},
        Bad{{"workload.models=[\"resnet9000\"]"}, "workload.models[0]: \"resnet9000\" is not a known model"},
        Bad{{"workload.batch_size=-1"}, "workload.batch_size: -1 is not an integer"},
        Bad{{"runtime.fusion_treshold=1"}, "runtime.fusion_treshold: unknown runtime knob; expected one of fusion_threshold"},
        Bad{{"runtime.fusion_threshold=lots"}, "runtime.fusion_threshold: \"lots\" is not a valid value"},
        Bad{{"runtime.timeline=/tmp/t.json"}, "runtime.timeline: hvdsim writes one timeline per run: use hvdsim --timeline-dir DIR"},
        Bad{{"runtime.ranks_per_node=2"}, "runtime.ranks_per_node: emulates nodes of an MPI world on one host; a scenario's nodes are cluster.nodes"},
        Bad{{"runtime.allreduce_algorithm=magic"}, "runtime.allreduce_algorithm: \"magic\" is not a valid value (allreduce_algorithm 'magic' is not one of auto|ring|pipelined_ring"},
        Bad{{"sweep.warp_factor=[1]"}, "sweep.warp_factor: unknown sweep axis"},
        Bad{{"sweep.fusion_threshold=[]"}, "sweep.fusion_threshold: [] is not a non-empty array"},
        Bad{{"sweep.fusion_threshold=[\"1MiB\",\"x\"]"}, "(sweep point fusion_threshold=x)"},
        Bad{{"extra=1"}, "extra: unknown key; expected one of $schema, name"},
        Bad{{"cluster.network.efficiency=1.5"}, "cluster.network.efficiency: 1.5 is not a number in [0.01, 1]"},
        Bad{{"cluster.intra_node.type=nvlink", "cluster.gpu=P100-PCIe"}, "cluster.intra_node.type: \"nvlink\" but GPU"},
        Bad{{"cluster.network.topology=torus", "cluster.network.torus_dims=3x3"}, "cluster.network.torus_dims: \"3x3\" is not a list of dimensions"},
        Bad{{"cluster.network.topology=dragonfly", "cluster.network.dragonfly=2,1;2,1;2"}, "cluster.network.dragonfly: \"2,1;2,1;2\" is not \"groups,links;chassis,links;routers,links;servers\""},
        Bad{{"cluster.network.topology=dragonfly", "cluster.network.dragonfly=2,1;2,1;2,1;2"}, "whose groups x chassis x routers x servers is cluster.nodes (4)"},
        Bad{{"cluster.network.topology=dragonfly", "cluster.network.dragonfly=2,1;2,1;1,1;1"}, "has 1 router per chassis; SimGrid's dragonfly needs at least 2"},
        Bad{{"simulation.network_model=LV09"}, "simulation.network_model: \"LV09\" is not one of CM02"},
        Bad{{"nokey"}, "--set nokey: expected path=value"},
        Bad{{"cluster.nodes.x=1"}, "cluster.nodes: 4 is not an object, so --set cannot set"}));

TEST(Scenario, InvalidJsonAndWrongDocuments) {
  EXPECT_NE(error_of("{\"cluster\": ").find("s.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find("s.json: [1,2] is not a scenario object"), std::string::npos);
  EXPECT_NE(error_of("{\"workload\": {\"models\": [\"vgg16\"]}}").find("s.json: cluster: missing"), std::string::npos);
  EXPECT_NE(error_of("{\"cluster\": {}}").find("s.json: workload: missing"), std::string::npos);
}

TEST(Scenario, ShippedScenariosLoad) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(HVD_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
    Scenario sc;
    Status s = load_scenario(e.path().string(), {}, &sc);
    EXPECT_TRUE(s.ok()) << e.path() << ": " << s.message();
    ++n;
  }
  EXPECT_GE(n, 7);
  Scenario sc;  // the other shipped calibration
  Status s = load_scenario(std::string(HVD_SOURCE_DIR) + "/scenarios/localhost.json",
                           {"calibration=calibration/localhost_np4.json", "sweep.np=[4]"}, &sc);
  EXPECT_TRUE(s.ok()) << s.message();
}

// The thousands-of-GPUs scenarios: sized as their names say, the 16k one with the stack
// size its description promises.
TEST(Scenario, ThousandsOfGpusScenariosLoadAtTheirSize) {
  for (const auto& [file, gpus] : {std::pair<const char*, int>{"h100_ib400_4k.json", 4096}, {"h100_ib400_16k.json", 16384}}) {
    Scenario sc;
    Status s = load_scenario(std::string(HVD_SOURCE_DIR) + "/scenarios/" + file, {}, &sc);
    ASSERT_TRUE(s.ok()) << file << ": " << s.message();
    ASSERT_FALSE(sc.points.empty());
    EXPECT_EQ(sc.points[0].cluster.gpus(), gpus) << file;
    EXPECT_EQ(sc.points[0].np.back(), gpus) << file;
    EXPECT_EQ(sc.points[0].cluster.network.topology, "fat_tree") << file;
  }
  Scenario sc;
  ASSERT_TRUE(load_scenario(std::string(HVD_SOURCE_DIR) + "/scenarios/h100_ib400_16k.json", {}, &sc).ok());
  EXPECT_EQ(sc.points[0].simulation.stack_kib, 128);
}

TEST(Scenario, SchemaNamesEveryKeyTheLoaderAccepts) {
  std::ifstream f(std::string(HVD_SOURCE_DIR) + "/scenarios/schema.json");
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string schema = ss.str();
  for (const char* key : {"nodes", "gpus_per_node", "gpu", "intra_node", "network", "device", "platform_file",
                          "topology", "bandwidth", "latency", "nic", "protocol", "efficiency", "message_overhead",
                          "servers_per_switch", "oversubscription", "torus_dims", "dragonfly", "copy_bandwidth",
                          "reduce_bandwidth", "host_staged", "pcie_bandwidth", "host_reduce_bandwidth", "models",
                          "batch_size", "steps", "warmup_steps", "optimizer_time", "network_model",
                          "cross_traffic", "with_data", "parallel", "stack_kib", "device_tolerance", "seeds",
                          "gpu_speed_seed", "reference", "scaling_efficiency", "source"})
    EXPECT_NE(schema.find(std::string("\"") + key + "\""), std::string::npos) << key;
}

// The command (run_hvdsim.h): bad input is one line on stderr and exit code 2.

TEST(HvdsimCommand, BadInputExitsWithTwoAndOneLine) {
  const std::string sc = std::string(HVD_SOURCE_DIR) + "/scenarios/roce25.json";
  struct {
    std::string args, expected;
  } cases[] = {
      {sc + " --set cluster.network.bandwidth=-1Gbps", "cluster.network.bandwidth: \"-1Gbps\""},
      {sc + " --set cluster.nodes=true", "cluster.nodes: true is not an integer"},
      {sc + " --set cluster.nic=1", "cluster.nic: unknown key"},
      {sc + " --set 'sweep.np=[1024]'", "sweep.np[0]: 1024 does not fit the cluster (128 nodes x 4 GPUs = 512)"},
      {sc + " --set 'workload.models=[\"alexnet\"]'", "workload.models[0]: \"alexnet\" is not a known model"},
      {"/nonexistent.json", "/nonexistent.json: cannot open"},
      {sc + " --bogus", "hvdsim: "},
  };
  for (const auto& c : cases) {
    std::string err;
    EXPECT_EQ(run_hvdsim(c.args, &err), 2) << c.args << ": " << err;
    EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace hvd::sim
