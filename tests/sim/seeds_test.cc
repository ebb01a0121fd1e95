// Uncertainty bands (hvdsim --seeds K, simulation.seeds, cluster.gpu_speed_seed) and the
// published overlay (scenario "reference"): parsing errors, the seed list, the band of
// a K=3 run against the K single-seed runs it folds, K=1 = today's output byte for byte,
// determinism, and the published values in the table and the report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hvd/sim/runner.h"
#include "hvd/sim/scenario.h"
#include "read_whole_file.h"
#include "run_hvdsim.h"

namespace hvd::sim {
namespace {

namespace fs = std::filesystem;

// 2 servers x 4 P100 with 5 % GPU-to-GPU speed variation: np 1 and 8 in well under a second.
const char* kTiny = R"({
  "cluster": {"nodes": 2, "gpus_per_node": 4, "gpu": "P100", "gpu_speed_cv": 0.05,
              "network": {"bandwidth": "25Gbps", "latency": "5us", "protocol": "roce"}},
  "workload": {"models": ["resnet50"], "batch_size": 32, "warmup_steps": 1, "steps": 1},
  "sweep": {"np": [1, 8]}
})";

std::string error_of(const std::vector<std::string>& sets) {
  Scenario sc;
  Status s = parse_scenario(kTiny, "s.json", sets, &sc);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "one line";
  return s.message();
}

TEST(Seeds, ScenarioErrorsNameThePathTheValueAndWhatWasExpected) {
  const std::string ok = R"({"model": "resnet50", "np": 8, "scaling_efficiency": 0.9, "source": "x"})";
  const struct {
    std::vector<std::string> sets;
    std::string says;
  } cases[] = {
      {{"simulation.seeds=0"}, "s.json: simulation.seeds: 0 is not an integer in [1, 1000]"},
      {{"simulation.seeds=1001"}, "s.json: simulation.seeds: 1001 is not an integer in [1, 1000]"},
      {{"simulation.seeds=\"3\""}, "s.json: simulation.seeds: \"3\" is not an integer in [1, 1000]"},
      {{"cluster.gpu_speed_seed=-1"}, "s.json: cluster.gpu_speed_seed: -1 is not an integer in [0, 1000000000]"},
      {{"reference=5"}, "s.json: reference: 5 is not an array of at most 1024 {\"model\", \"np\""},
      {{"reference=[7]"}, "s.json: reference[0]: 7 is not an object"},
      {{R"(reference=[{"model": "resnet9000", "np": 8, "scaling_efficiency": 0.9, "source": "x"}])"},
       "s.json: reference[0].model: \"resnet9000\" is not a known model ("},
      {{R"(reference=[{"model": "resnet50", "np": 0, "scaling_efficiency": 0.9, "source": "x"}])"},
       "s.json: reference[0].np: 0 is not an integer in [1, 1048576]"},
      {{R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 0, "source": "x"}])"},
       "s.json: reference[0].scaling_efficiency: 0 is not a fraction in (0, 1.5] (0.9 for 90 %"},
      {{R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 90, "source": "x"}])"},
       "s.json: reference[0].scaling_efficiency: 90 is not a fraction in (0, 1.5]"},
      {{R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": "90%", "source": "x"}])"},
       "s.json: reference[0].scaling_efficiency: \"90%\" is not a fraction"},
      {{R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 0.9, "source": ""}])"},
       "s.json: reference[0].source: \"\" is not a non-empty string of at most 200 characters"},
      {{R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 0.9}])"},
       "s.json: reference[0].source: missing; expected model, np, scaling_efficiency"},
      {{R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 0.9, "source": "x", "url": 1}])"},
       "s.json: reference[0].url: unknown key; expected one of model, np, scaling_efficiency, source"},
      {{"reference=[" + ok + "," + ok + "]"},
       "s.json: reference[1]: resnet50 at np 8 is given twice (also reference[0])"},
      {{"simulation.seeds=600"},
       "s.json: sweep: 1200 simulations (each model at each np, the np=1 baseline included, at each point, times "
       "simulation.seeds) is not at most sweep.max_runs (1024)"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.sets);
    EXPECT_EQ(msg.rfind(c.says, 0), 0u) << msg;
  }
}

TEST(Seeds, ScenarioReadsSeedsAndReference) {
  Scenario sc;
  ASSERT_TRUE(parse_scenario(kTiny, "s.json",
                             {"simulation.seeds=3", "cluster.gpu_speed_seed=7",
                              R"(reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 0.875, "source": "a paper"}])"},
                             &sc)
                  .ok());
  ASSERT_EQ(sc.points.size(), 1u);
  EXPECT_EQ(sc.points[0].seeds, 3);
  EXPECT_EQ(sc.points[0].cluster.gpu_speed_seed, 7);
  ASSERT_EQ(sc.reference.size(), 1u);
  EXPECT_EQ(sc.reference[0].model, "resnet50");
  EXPECT_EQ(sc.reference[0].np, 8);
  EXPECT_DOUBLE_EQ(sc.reference[0].scaling_efficiency, 0.875);
  EXPECT_EQ(sc.reference[0].source, "a paper");
  // Each np once per seed, seed 0 first; the np=1 baseline of each seed before them.
  ASSERT_TRUE(parse_scenario(kTiny, "s.json", {"simulation.seeds=2", "sweep.np=[2,4]"}, &sc).ok());
  std::vector<std::pair<int, int>> jobs;  // (np, seed)
  for (const SweepJob& j : sweep_jobs(sc)) jobs.emplace_back(j.np, j.seed);
  EXPECT_EQ(jobs, (std::vector<std::pair<int, int>>{{1, 0}, {1, 1}, {2, 0}, {2, 1}, {4, 0}, {4, 1}}));
  EXPECT_FALSE(sweep_jobs(sc)[0].reported);
}

// Seed 0 is the stream hvdsim always had: splitmix64 of 2r and 2r+1, Box-Muller.
double historic_slowdown(int r, double cv) {
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const double u1 = (static_cast<double>(mix(2 * static_cast<uint64_t>(r)) >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = (static_cast<double>(mix(2 * static_cast<uint64_t>(r) + 1) >> 11) + 0.5) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::max(0.05, 1.0 + cv * std::clamp(z, -3.5, 3.5));
}

TEST(Seeds, SeedZeroIsTheHistoricStreamAndOtherSeedsDrawAgain) {
  ClusterSpec c;
  c.nodes = 16;
  c.gpus_per_node = 4;
  c.gpu_speed_cv = 0.05;
  int differ = 0;
  for (int r = 0; r < c.gpus(); ++r) {
    c.gpu_speed_seed = 0;
    const double s0 = c.gpu_slowdown(r);
    EXPECT_EQ(s0, r == 0 ? 1.0 : historic_slowdown(r, 0.05)) << r;
    c.gpu_speed_seed = 1;
    const double s1 = c.gpu_slowdown(r);
    EXPECT_EQ(s1, c.gpu_slowdown(r)) << "a pure function of (seed, r)";
    if (r == 0) {
      EXPECT_EQ(s1, 1.0) << "GPU 0 is the median GPU at every seed";
    }
    differ += s1 != s0;
  }
  EXPECT_EQ(differ, c.gpus() - 1);
}

// --- the command -------------------------------------------------------------------------

class SeedsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hvdsim_seeds_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "tiny.json") << kTiny;
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs hvdsim on tiny.json with `args`, writing <stem>.json/.csv/.txt; the three, joined.
  std::string run(const std::string& stem, const std::string& args) {
    const std::string cmd = std::string(HVDSIM_EXE) + " " + (dir_ / "tiny.json").string() + " -q " + args +
                            " --report " + (dir_ / (stem + ".json")).string() + " > " +
                            (dir_ / (stem + ".txt")).string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return slurp(dir_ / (stem + ".json")) + slurp(dir_ / (stem + ".csv")) + slurp(dir_ / (stem + ".txt"));
  }
  nlohmann::json report(const std::string& stem) const {
    std::ifstream f(dir_ / (stem + ".json"));
    return nlohmann::json::parse(f);
  }
  fs::path dir_;
};

TEST_F(SeedsCommand, OneSeedIsTodaysOutputByteForByte) {
  const std::string plain = run("plain", "");
  EXPECT_EQ(run("k1", "--seeds 1"), plain);
  EXPECT_EQ(run("s1", "--set simulation.seeds=1"), plain);
  EXPECT_EQ(plain.find("\"seeds\""), std::string::npos) << plain;
  EXPECT_EQ(plain.find("_lo"), std::string::npos) << plain;
  EXPECT_EQ(slurp(dir_ / "plain.txt").find('['), std::string::npos) << "no band in the table";
}

TEST_F(SeedsCommand, ThreeSeedsAreTheMeanAndRangeOfTheThreeDrawsAndDeterministic) {
  const std::string k3 = run("k3", "--seeds 3");
  EXPECT_EQ(run("k3again", "--seeds 3"), k3) << "same seeds, same report, CSV and table";
  // The three draws one at a time: gpu_speed_seed 0, 1, 2.
  nlohmann::json one[3];
  for (int s = 0; s < 3; ++s) {
    run("seed" + std::to_string(s), "--set cluster.gpu_speed_seed=" + std::to_string(s));
    one[s] = report("seed" + std::to_string(s));
  }
  const nlohmann::json j = report("k3");
  ASSERT_EQ(j["runs"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& r = j["runs"][i];
    EXPECT_EQ(r["seeds"], 3);
    for (const char* f : {"images_per_sec", "scaling_efficiency"}) {
      const std::string lo = std::string(f) + "_lo", hi = std::string(f) + "_hi";
      double mean = 0, mn = 1e300, mx = -1e300;
      for (const auto& o : one) {
        const double v = o["runs"][i][f];
        mean += v / 3;
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      EXPECT_NEAR(r[f].get<double>(), mean, 1e-9 * mean) << f;
      EXPECT_EQ(r[lo].get<double>(), mn) << f;
      EXPECT_EQ(r[hi].get<double>(), mx) << f;
      EXPECT_LE(r[lo].get<double>(), r[f].get<double>()) << f;
      EXPECT_LE(r[f].get<double>(), r[hi].get<double>()) << f;
      if (r["np"] == 8) {
        EXPECT_LT(r[lo].get<double>(), r[hi].get<double>()) << f << ": the draws differ";
      }
    }
  }
  // The CSV's five more columns and the table's ranges.
  const std::string csv = slurp(dir_ / "k3.csv");
  EXPECT_NE(csv.find(",steps,seeds,images_per_sec_lo,images_per_sec_hi,scaling_efficiency_lo,scaling_efficiency_hi\n"),
            std::string::npos)
      << csv;
  const std::string table = slurp(dir_ / "k3.txt");
  char band[64];
  std::snprintf(band, sizeof band, "[%.0f-%.0f]", j["runs"][1]["images_per_sec_lo"].get<double>(),
                j["runs"][1]["images_per_sec_hi"].get<double>());
  EXPECT_NE(table.find(band), std::string::npos) << band << "\n" << table;
  std::snprintf(band, sizeof band, "%% [%.1f-%.1f]", 100 * j["runs"][1]["scaling_efficiency_lo"].get<double>(),
                100 * j["runs"][1]["scaling_efficiency_hi"].get<double>());
  EXPECT_NE(table.find(band), std::string::npos) << band << "\n" << table;
  EXPECT_NE(table.find("images/s [min-max]"), std::string::npos) << table;
}

TEST_F(SeedsCommand, SeedsOptionIsCheckedAndTimelinesAreOnePerSeed) {
  for (const char* bad : {"0", "1001", "x"}) {
    std::string err;
    EXPECT_EQ(run_hvdsim((dir_ / "tiny.json").string() + " --seeds " + bad, &err), 2) << bad;
    EXPECT_EQ(err.rfind("hvdsim: --seeds: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  std::string err;
  EXPECT_EQ(run_hvdsim((dir_ / "tiny.json").string() + " --seeds 2 --collective allreduce", &err), 2);
  EXPECT_EQ(err, "hvdsim: --seeds: not with --collective (a collective sweep has no GPU speeds to draw)\n");
  EXPECT_EQ(run_hvdsim("--merge " + (dir_ / "x.json").string() + " --seeds 2", &err), 2);
  EXPECT_EQ(err, "hvdsim: --merge takes partial reports only (no scenario, no --shard, no --seeds)\n");
  run("tl", "--seeds 2 --set 'sweep.np=[8]' --timeline-dir " + (dir_ / "tl").string());
  EXPECT_TRUE(fs::exists(dir_ / "tl" / "resnet50_np8_seed=0.json"));
  EXPECT_TRUE(fs::exists(dir_ / "tl" / "resnet50_np8_seed=1.json"));
}

TEST_F(SeedsCommand, PublishedValuesAreInTheTableAndTheReport) {
  run("ref", R"(--set 'reference=[{"model": "resnet50", "np": 8, "scaling_efficiency": 0.5, "source": "Test et al. 2017"}]')");
  const nlohmann::json j = report("ref");
  ASSERT_EQ(j["reference"].size(), 1u);
  EXPECT_EQ(j["reference"][0]["model"], "resnet50");
  EXPECT_EQ(j["reference"][0]["np"], 8);
  EXPECT_EQ(j["reference"][0]["scaling_efficiency"], 0.5);
  EXPECT_EQ(j["reference"][0]["source"], "Test et al. 2017");
  const double eff = j["runs"][1]["scaling_efficiency"];
  char want[64];
  std::snprintf(want, sizeof want, "  published  50.0%% (%+.1f)\n", 100 * (eff - 0.5));
  const std::string table = slurp(dir_ / "ref.txt");
  EXPECT_NE(table.find(want), std::string::npos) << want << "\n" << table;
  EXPECT_NE(table.find("\npublished: Test et al. 2017\n"), std::string::npos) << table;
  // The np=1 row has no published value.
  const size_t np1 = table.find("resnet50          1 ");
  ASSERT_NE(np1, std::string::npos) << table;
  EXPECT_EQ(table.substr(np1, table.find('\n', np1) - np1).find("published"), std::string::npos) << table;
}

}  // namespace
}  // namespace hvd::sim
