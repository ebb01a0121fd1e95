// Input an attacker of hvdsim would try: every case is refused before anything
// is simulated, with one short line naming the path, the cut value and what was expected,
// and hvdsim exits 2 -- no crash (deep JSON), no hang (absurd rates), no SimGrid abort
// (bad platform files), no silent duplicate work (repeated np, model and models).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hvd/sim/scenario.h"
#include "run_hvdsim.h"
#include "hvd/sim/world.h"

namespace hvd::sim {
namespace {

namespace fs = std::filesystem;

const char* kBase = R"({
  "cluster": {"nodes": 2, "gpus_per_node": 2, "gpu": "V100"},
  "workload": {"models": ["resnet50"]},
  "sweep": {"np": [2, 4]}
})";

// The error of parsing `text` with `sets`: one short line from "s.json: ".
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  Scenario sc;
  Status s = parse_scenario(text, "s.json", sets, &sc);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_LT(s.message().size(), 400u) << s.message().substr(0, 400);
  EXPECT_EQ(s.message().rfind("s.json: ", 0), 0u) << s.message().substr(0, 400);
  return s.message();
}

std::string nest(size_t depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

// kBase's cluster with `network` as cluster.network.
std::string with_network(const std::string& network) {
  return R"({"cluster": {"nodes": 2, "gpus_per_node": 2, "gpu": "V100", "network": )" + network +
         R"(}, "workload": {"models": ["resnet50"]}})";
}

const std::string kTooDeep = std::string(57, '[') + "... is not a value nested at most 64 levels deep";

TEST(HostileInput, DeepJsonIsRefusedWhileParsing) {
  // 100,000 levels are refused while parsing, before a recursive copy or json::dump could
  // overflow the stack.
  EXPECT_EQ(error_of(nest(100000)), "s.json: " + kTooDeep);
  EXPECT_EQ(error_of(with_network(R"({"bandwidth": )" + nest(100000) + "}")),
            "s.json: cluster.network.bandwidth: " + kTooDeep);
  EXPECT_EQ(error_of(kBase, {"runtime.x=" + nest(100000)}), "s.json: --set runtime.x: " + kTooDeep);
  EXPECT_EQ(error_of(kBase, {"sweep.fusion_threshold=" + nest(100000)}),
            "s.json: --set sweep.fusion_threshold: " + kTooDeep);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a": )";
  objects += "1" + std::string(100000, '}');
  EXPECT_NE(error_of(objects).find("{... is not a value nested at most 64 levels deep"), std::string::npos);
  // 64 levels are fine: the document, cluster and network objects and 61 arrays reach the
  // value checks; 62 arrays do not.
  EXPECT_NE(error_of(with_network(R"({"bandwidth": )" + nest(61) + "}")).find("is not a bandwidth with a unit"),
            std::string::npos);
  EXPECT_NE(error_of(with_network(R"({"bandwidth": )" + nest(62) + "}")).find("levels deep"), std::string::npos);
  // --set paths: no deeper than 16 keys.
  std::string path = "cluster";
  for (int i = 0; i < 100000; ++i) path += ".a";
  EXPECT_NE(error_of(kBase, {path + "=1"}).find("is not a path of at most 16 keys"), std::string::npos);
}

TEST(HostileInput, DuplicateKeysAreRefusedWithThePathAndTheKey) {
  EXPECT_EQ(error_of(with_network(R"({"bandwidth": "10Gbps", "bandwidth": "1Gbps"})")),
            "s.json: cluster.network: key \"bandwidth\" appears twice; expected each key once per object");
  EXPECT_EQ(error_of(R"({"cluster": {}, "workload": {}, "cluster": {}})"),
            "s.json: key \"cluster\" appears twice; expected each key once per object");
  EXPECT_EQ(error_of(kBase, {R"(runtime={"fusion_threshold": 1, "fusion_threshold": 2})"}),
            "s.json: --set runtime: key \"fusion_threshold\" appears twice; expected each key once per object");
  EXPECT_NE(error_of(R"({"cluster": {"nodes": 1}, "workload": {"models": ["vgg16"]},
                        "what_if": [{"name": "a", "set": {}, "name": "b"}]})")
                .find("s.json: what_if[0]: key \"name\" appears twice"),
            std::string::npos);
  // In a calibration file the scenario loads.
  const fs::path dir = fs::temp_directory_path() / ("hvd_hostile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "calib.json") << R"({"format": "hvdsim-calibration", "version": 1,
      "links": {"inter_node": {"latency_s": 1e-5, "bandwidth_Bps": 1e9, "latency_s": 1}}})";
  std::ofstream(dir / "s.json") << R"({"calibration": "calib.json", "cluster": {"nodes": 2},
      "workload": {"models": ["resnet50"]}})";
  Scenario sc;
  Status s = load_scenario((dir / "s.json").string(), {}, &sc);
  fs::remove_all(dir);
  EXPECT_NE(s.message().find("s.json: calibration: calib.json: links.inter_node: key \"latency_s\" appears twice"),
            std::string::npos)
      << s.message();
}

TEST(HostileInput, HugeValuesKeysAndPathsAreCutInMessages) {
  const std::string big(1 << 20, 'x');
  EXPECT_NE(error_of(kBase, {"cluster.gpu=" + big}).find("cluster.gpu: \"xxxxxxxx"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"cluster." + big + "=1"}).find("..."), std::string::npos);
  EXPECT_NE(error_of(R"({"cluster": {"nodes": 2}, "workload": {"models": ["resnet50"]}, ")" + big + R"(": 1})")
                .find("unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(kBase, {"sweep.fusion_threshold=[\"" + big + "\"]"}).find("(sweep point fusion_threshold=xxx"),
            std::string::npos);
  std::string many = "[";
  for (int i = 0; i < 100000; ++i) many += "1,";
  many += "1]";
  EXPECT_EQ(error_of(kBase, {"cluster.network.bandwidth=" + many}),
            "s.json: cluster.network.bandwidth: [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,... "
            "is not a bandwidth with a unit (e.g. \"25Gbps\", \"12GBps\")");
}

struct Range {
  std::vector<std::string> sets;
  std::string expected;
};

class HostileNumbers : public ::testing::TestWithParam<Range> {};

TEST_P(HostileNumbers, AreOutsideTheirDocumentedRange) {
  const std::string msg = error_of(kBase, GetParam().sets);
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HostileNumbers,
    ::testing::Values(
        // "1e-300bps" is refused: a run on it would never end.
        Range{{"cluster.network.bandwidth=1e-300bps"}, "cluster.network.bandwidth: \"1e-300bps\" is not a bandwidth of at least 1Kbps"},
        Range{{"cluster.network.bandwidth=999bps"}, "is not a bandwidth of at least 1Kbps"},
        Range{{"cluster.intra_node.bandwidth=1e10TBps"}, "cluster.intra_node.bandwidth: \"1e10TBps\" is not a bandwidth of at most 1000TBps"},
        Range{{"cluster.device.copy_bandwidth=1bps"}, "cluster.device.copy_bandwidth: \"1bps\" is not a bandwidth of at least 1Kbps (or 0: free)"},
        Range{{"cluster.network.latency=2s"}, "cluster.network.latency: \"2s\" is not a duration of at most 1s"},
        Range{{"cluster.intra_node.latency=1000000s"}, "cluster.intra_node.latency: \"1000000s\" is not a duration of at most 1s"},
        Range{{"cluster.network.message_overhead=1.5s"}, "is not a duration of at most 1s"},
        Range{{"simulation.wakeup_latency=10s"}, "simulation.wakeup_latency: \"10s\" is not a duration of at most 1s"},
        Range{{"workload.optimizer_time=7200s"}, "workload.optimizer_time: \"7200s\" is not a duration of at most 3600s"},
        Range{{"cluster.gpu=V100", "workload.models=[\"vgg16\"]", "workload.batch_size=1048576",
               "cluster.stragglers=[{\"rank\": 1, \"speed\": 0.01}]"},
              "workload.batch_size: 1048576 is not a batch whose step takes at most a day (vgg16 on V100: "},
        Range{{"simulation.time_limit=0.5s"}, "simulation.time_limit: \"0.5s\" is not a duration of at least 1s"},
        Range{{"simulation.time_limit=1e10s"}, "simulation.time_limit: \"1e10s\" is not a duration of at most 1e9s"},
        Range{{"simulation.cache=2TiB"}, "simulation.cache: \"2TiB\" is not a size up to 1TiB"},
        Range{{"cluster.degraded_links=[{\"node\": 0, \"extra_latency\": \"5s\"}]"},
              "cluster.degraded_links[0].extra_latency: \"5s\" is not a duration of at most 1s"},
        Range{{"sweep.max_runs=0"}, "sweep.max_runs: 0 is not an integer in [1, 1048576]"}));

TEST(HostileInput, RepeatedRankCountsRunOnceAndBigSweepsAreRefused) {
  Scenario sc;
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {"sweep.np=[4,2,4,2,2]"}, &sc).ok());
  EXPECT_EQ(sc.points.at(0).np, (std::vector<int>{4, 2}));
  std::string million = "sweep.np=[2";
  for (int i = 0; i < 1000000; ++i) million += ",2";
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {million + "]"}, &sc).ok());
  EXPECT_EQ(sc.points.at(0).np, std::vector<int>{2});
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {R"(sweep.fusion_threshold=["1MiB","2MiB","1MiB"])"}, &sc).ok());
  EXPECT_EQ(sc.points.size(), 2u);
  // 300 thresholds x (np 2, np 4 and the np=1 baseline): 900 simulations are fine, 1200 not.
  std::string axis = "sweep.fusion_threshold=[";
  for (int i = 1; i <= 400; ++i) axis += (i > 1 ? ",\"" : "\"") + std::to_string(i) + "KiB\"";
  const std::string axis300 = axis.substr(0, axis.find(",\"301KiB\"")) + "]";
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {axis300}, &sc).ok());
  EXPECT_EQ(error_of(kBase, {axis + "]"}),
            "s.json: sweep: 1200 simulations (each model at each np, the np=1 baseline included, at each point) "
            "is not at most sweep.max_runs (1024); raise it to run them all");
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {axis + "]", "sweep.max_runs=1200"}, &sc).ok());
  EXPECT_EQ(sc.points.size(), 400u);
  EXPECT_NE(error_of(kBase, {"sweep.np=[1,2,3,4]", "sweep.max_runs=3"}).find("s.json: sweep: at least 4 simulations"),
            std::string::npos);
}

TEST(HostileInput, ModelAndModelsAreOneSetting) {
  EXPECT_EQ(error_of(R"({"cluster": {"nodes": 1}, "workload": {"model": "resnet50", "models": ["vgg16"]}})"),
            "s.json: workload.model: \"resnet50\" is not allowed beside workload.models (give one of the two)");
  Scenario sc;
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {"workload.model=vgg16"}, &sc).ok());
  EXPECT_EQ(sc.points.at(0).workload.models, std::vector<std::string>{"vgg16"});
  ASSERT_TRUE(parse_scenario(R"({"cluster": {"nodes": 1}, "workload": {"model": "resnet50"}})", "s.json",
                             {R"(workload.models=["vgg16","resnet50"])"}, &sc)
                  .ok());
  EXPECT_EQ(sc.points.at(0).workload.models, (std::vector<std::string>{"vgg16", "resnet50"}));
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {R"(workload.models=["vgg16","resnet50","vgg16"])"}, &sc).ok());
  EXPECT_EQ(sc.points.at(0).workload.models, (std::vector<std::string>{"vgg16", "resnet50"}));
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {R"(sweep.workload.model=["vgg16","resnet50"])"}, &sc).ok());
  ASSERT_EQ(sc.points.size(), 2u);
  EXPECT_EQ(sc.points[1].workload.models, std::vector<std::string>{"resnet50"});
}

// workload.trace (a recorded model trace) is a third spelling of workload.model.
TEST(HostileInput, TraceIsTheSameSettingAsModel) {
  const std::string tiny = std::string(HVD_SOURCE_DIR) + "/libs/workloads/examples/tiny_mlp.json";
  Scenario sc;
  ASSERT_TRUE(parse_scenario(kBase, "s.json", {"workload.trace=" + tiny}, &sc).ok());
  EXPECT_EQ(sc.points.at(0).workload.models, std::vector<std::string>{tiny});
  EXPECT_EQ(error_of(R"({"cluster": {"nodes": 1}, "workload": {"trace": "a.json", "models": ["vgg16"]}})"),
            "s.json: workload.trace: \"a.json\" is not allowed beside workload.model(s) (give one of them)");
  EXPECT_NE(error_of(kBase, {"workload.trace=/nonexistent/run.json"}).find("s.json: workload.trace: \"/nonexistent/run.json\" is not a known model"),
            std::string::npos);
}

// Platform files in a temporary folder.
struct Platforms {
  fs::path dir = fs::temp_directory_path() / ("hvd_platforms_" + std::to_string(::getpid()));
  Platforms() { fs::create_directories(dir); }
  ~Platforms() { fs::remove_all(dir); }
  // Two hosts in a full zone, one link, one route (drop it with route = false).
  std::string write(const std::string& name, const std::string& bw = "10GBps", const std::string& lat = "5us",
                    bool route = true, const std::string& routing = "Full") const {
    std::ofstream(dir / name) << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z0" routing=")" << routing << R"(">
    <host id="gpu0" speed="1Tf"/>
    <host id="gpu1" speed="1Tf"/>
    <link id="l0" bandwidth=")" << bw << R"(" latency=")" << lat << R"("/>
    )" << (route ? R"(<route src="gpu0" dst="gpu1"><link_ctn id="l0"/></route>)" : "") << R"(
  </zone>
</platform>
)";
    return (dir / name).string();
  }
};

std::string platform_error(const std::string& file) {
  return error_of(R"({"cluster": {"nodes": 1, "gpus_per_node": 2, "platform_file": ")" + file +
                  R"("}, "workload": {"models": ["resnet50"]}})");
}

TEST(HostileInput, PlatformFilesAreCheckedBeforeSimGridSeesThem) {
  Platforms p;
  Scenario sc;
  EXPECT_TRUE(parse_scenario(R"({"cluster": {"nodes": 1, "platform_file": ")" + p.write("ok.xml") +
                                 R"("}, "workload": {"models": ["resnet50"]}})",
                             "s.json", {}, &sc)
                  .ok());
  const std::string at = "s.json: cluster.platform_file: \"" + p.dir.string();
  // SimGrid aborted on these (the first three) or read a directory as empty XML.
  EXPECT_EQ(platform_error(p.write("neg.xml", "-10GBps")),
            at + "/neg.xml\" line 7: <link bandwidth=\"-10GBps\"> is not a bandwidth > 0");
  EXPECT_EQ(platform_error(p.write("zero.xml", "0Bps")), at + "/zero.xml\" line 7: <link bandwidth=\"0Bps\"> is not a bandwidth > 0");
  EXPECT_NE(platform_error(p.write("nan.xml", "nanBps")).find("<link bandwidth=\"nanBps\"> is not a bandwidth (e.g."),
            std::string::npos);
  EXPECT_EQ(platform_error(p.dir.string()), at + "\" is a directory, not a file");
  EXPECT_EQ(platform_error(p.dir.string() + "/none.xml"), at + "/none.xml\" does not exist");
  EXPECT_NE(platform_error(p.write("slow.xml", "1bps")).find("is not a bandwidth of at least 1kbps"), std::string::npos);
  EXPECT_NE(platform_error(p.write("neglat.xml", "10GBps", "-5us")).find("<link latency=\"-5us\"> is not a latency >= 0"),
            std::string::npos);
  EXPECT_NE(platform_error(p.write("lat.xml", "10GBps", "2s")).find("is not a latency of at most 1s"), std::string::npos);
  std::ofstream(p.dir / "evil.so") << "<platform/>";
  EXPECT_NE(platform_error((p.dir / "evil.so").string()).find("is not a platform XML file"), std::string::npos);
  std::ofstream(p.dir / "binary.xml") << std::string("\x7f" "ELF\x02\x01", 6);
  EXPECT_NE(platform_error((p.dir / "binary.xml").string()).find("is not an XML file"), std::string::npos);
  std::ofstream(p.dir / "huge.xml") << R"(<platform version="4.1"><cluster id="c" prefix="h" suffix="" radical="0-99999999" speed="1Gf" bw="125MBps" lat="50us"/></platform>)";
  EXPECT_NE(platform_error((p.dir / "huge.xml").string()).find("describes 100000000 hosts, more than 65536"),
            std::string::npos);
}

TEST(HostileInput, PlatformRoutesAreCheckedInAChildProcess) {
  Platforms p;
  EXPECT_TRUE(check_platform_file(p.write("ok.xml"), 2).ok());
  Status s = check_platform_file(p.write("noroute.xml", "10GBps", "5us", false), 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is not a platform with a route between every two ranks' hosts (none from gpu0 to gpu1)"),
            std::string::npos)
      << s.message();
  s = check_platform_file(p.write("floyd.xml", "10GBps", "5us", false, "Floyd"), 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is not a platform SimGrid can use (No route from 'gpu0' to 'gpu1')"), std::string::npos)
      << s.message();
  s = check_platform_file(p.write("few.xml"), 4);
  EXPECT_NE(s.message().find("has 2 hosts, not the 4 the ranks need"), std::string::npos) << s.message();
}

// The command (run_hvdsim.h): bad input is one line on stderr, exit code 2, before any simulation.

TEST(HostileInput, HvdsimRefusesBadOptionsAndFilesBeforeSimulating) {
  Platforms p;
  const std::string local = std::string(HVD_SOURCE_DIR) + "/scenarios/localhost.json";
  const std::string noroute = p.write("noroute.xml", "10GBps", "5us", false);
  fs::create_directories(p.dir / "r.csv");
  struct {
    std::string args, expected;
  } cases[] = {
      {local + " --np 0", "hvdsim: --np: Value 0 not in range 1 to 1048576"},
      {local + " -j 0", "hvdsim: --parallel: Value 0 not in range 1 to 256"},
      {local + " -j 100000", "hvdsim: --parallel: Value 100000 not in range 1 to 256"},
      {local + " --np 4", "hvdsim: --np: applies to --collective only"},
      {local + " --report /nonexistent/dir/r.json",
       "hvdsim: --report: \"/nonexistent/dir/r.json\" cannot be written (no directory \"/nonexistent/dir\")"},
      {local + " --report " + (p.dir / "r.json").string(), "r.csv\" cannot be written (a directory)"},
      {local + " --report ''", "hvdsim: --report: an empty path"},
      {local + " --timeline-dir ''", "hvdsim: --timeline-dir: an empty path"},
      {local + " --report /dev/null", "hvdsim: --report: \"/dev/null\" cannot be written (a device or a FIFO, not a regular file)"},
      {local + " --report /proc/r.json", "hvdsim: --report: \"/proc/r.json\" cannot be written (its directory takes no new file"},
      // The CSV goes beside the JSON under the same name with .csv: one may not be the other.
      {local + " --report " + (p.dir / "out.csv").string(), "out.csv\" ends in .csv, the name of the CSV written beside the JSON report"},
      // The report never replaces what the run reads.
      {local + " --report " + local, "localhost.json\" is the scenario this run reads"},
      {local + " --set 'runtime.x=" + nest(50000) + "'", "--set runtime.x: [[[[[["},
      {local + " --set cluster.platform_file=" + noroute + " --set cluster.gpus_per_node=2",
       "is not a platform with a route between every two ranks' hosts (none from gpu0 to gpu1)"},
      // A run slower than the limit stops at the limit, with one line.
      {local + " -q --set cluster.intra_node.bandwidth=1Kbps --set simulation.time_limit=30s",
       "hvdsim: resnet50 np=2: simulation.time_limit: the run was stopped at 30 s of simulated time, the limit"},
  };
  for (const auto& c : cases) {
    std::string err;
    EXPECT_EQ(run_hvdsim(c.args, &err), 2) << c.args.substr(0, 300) << ": " << err;
    EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  EXPECT_FALSE(fs::exists(p.dir / "r.json"));
}

TEST(HostileInput, HvdsimRunsAModelSetOverModelsOnce) {
  // localhost.json has workload.models ["resnet50"]: --set workload.model=resnet50 replaces
  // the set; it does not add a second resnet50 and run every point twice.
  std::string err;
  ASSERT_EQ(run_hvdsim(std::string(HVD_SOURCE_DIR) + "/scenarios/localhost.json --set workload.model=resnet50", &err), 0)
      << err;
  size_t runs = 0;
  for (size_t at = 0; (at = err.find("] resnet50 np=", at)) != std::string::npos; ++at) ++runs;
  EXPECT_EQ(runs, 2u) << err;  // np=1 (the baseline) and np=2
}

}  // namespace
}  // namespace hvd::sim

namespace hvd::sim {
namespace {

// A 1 Kbps network stalls every rank for a million simulated seconds: with -q the ranks'
// stall warnings (one per rank every 60 simulated seconds) stay quiet, the run's own lines
// remain; a scenario that sets runtime.log_level still gets what it asked for.
TEST(HostileInput, QuietSilencesTheRanksStallWarnings) {
  const std::string run = std::string(HVD_SOURCE_DIR) +
                          "/scenarios/roce25.json -q --set cluster.network.bandwidth=1Kbps "
                          "--set 'sweep.np=[8]' --set 'workload.models=[\"resnet101\"]'";
  std::string err;
  run_hvdsim(run, &err);
  EXPECT_LT(std::count(err.begin(), err.end(), '\n'), 10) << err.substr(0, 2000);
  EXPECT_NE(err.find("time_limit"), std::string::npos) << err.substr(0, 2000);
  EXPECT_EQ(err.find("WARNING"), std::string::npos) << err.substr(0, 2000);
  run_hvdsim(run + " --set runtime.log_level=warning", &err);
  EXPECT_NE(err.find("WARNING"), std::string::npos);
}

}  // namespace
}  // namespace hvd::sim
