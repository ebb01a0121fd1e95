// Autotune inside hvdsim: the same autotuner as real runs, in simulated time. Two runs of
// an autotuned scenario give identical bytes, the report records the chosen knobs, the CSV
// log has one row per sample, and --sweep prints the best setting per np.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "read_whole_file.h"

namespace {

TEST(AutotuneSim, DeterministicReportWithTheChosenKnobs) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hvdsim_autotune_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    const auto run = dir / std::to_string(i);
    std::filesystem::create_directories(run);
    const std::string cmd = std::string(HVDSIM_EXE) + " " + HVD_SOURCE_DIR +
                            "/scenarios/autotune_tcp10.json --sweep -q --set 'sweep.np=[8]'"
                            " --set runtime.autotune_log=" +
                            (dir / "tune.csv").string() + " --report " +
                            (run / "report.json").string() + " > " + (run / "table.txt").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    out[i] =
        slurp(run / "report.json") + slurp(run / "report.csv") + slurp(run / "table.txt") +
        slurp(dir / "tune_resnet50_np8.csv");  // the same path both times (it is in the report)
  }
  EXPECT_TRUE(out[0] == out[1]) << "the two runs differ";

  const auto report = nlohmann::json::parse(slurp(dir / "0" / "report.json"));
  const auto& runs = report["runs"];
  ASSERT_EQ(runs.size(), 1u);
  const auto& k = runs[0]["knobs"];
  EXPECT_EQ(k["autotune"], "true");
  EXPECT_EQ(k["autotune.done"], "true");
  // 1 warm-up + 10 Bayesian + cache + hierarchical allreduce + allgather (4 nodes x 2 GPUs).
  EXPECT_EQ(k["autotune.samples"], "14");
  for (const char* name : {"autotune.fusion_threshold", "autotune.cycle_time_ms", "autotune.cache",
                           "autotune.hierarchical_allreduce", "autotune.hierarchical_allgather"})
    EXPECT_TRUE(k.contains(name)) << name;
  const int64_t fusion = std::stoll(k["autotune.fusion_threshold"].get<std::string>());
  EXPECT_GE(fusion, 0);
  EXPECT_LE(fusion, int64_t{64} << 20);
  EXPECT_GT(std::stoi(k["autotune.tuning_steps"].get<std::string>()), 0);

  // The CSV: header, 14 samples, the final row equal to the reported choice.
  std::vector<std::string> rows;
  std::istringstream csv(slurp(dir / "tune_resnet50_np8.csv"));
  for (std::string line; std::getline(csv, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 16u);
  EXPECT_EQ(rows.back().rfind("best,final," + k["autotune.fusion_threshold"].get<std::string>() +
                                  "," + k["autotune.cycle_time_ms"].get<std::string>() + ",",
                              0),
            0u)
      << rows.back();

  const std::string table = slurp(dir / "0" / "table.txt");
  EXPECT_NE(table.find("best setting per np"), std::string::npos) << table;
  EXPECT_NE(table.find("autotuned: fusion_threshold=" +
                       k["autotune.fusion_threshold"].get<std::string>()),
            std::string::npos)
      << table;
  std::filesystem::remove_all(dir);
}

TEST(AutotuneSim, SweepPicksTheBestPointPerNpWithoutAutotune) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hvdsim_best_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cmd = std::string(HVDSIM_EXE) + " " + HVD_SOURCE_DIR +
                          "/scenarios/autotune_tcp10.json --sweep -q --set runtime.autotune=false"
                          " --set 'sweep.np=[4]' --set 'sweep.hierarchical_allreduce=[false,true]'"
                          " --report " +
                          (dir / "r.json").string() + " > " + (dir / "t.txt").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto report = nlohmann::json::parse(slurp(dir / "r.json"));
  ASSERT_EQ(report["runs"].size(), 2u);
  const auto& a = report["runs"][0];
  const auto& b = report["runs"][1];
  const auto& best = a["images_per_sec"].get<double>() >= b["images_per_sec"].get<double>() ? a : b;
  const std::string table = slurp(dir / "t.txt");
  const size_t at = table.find("best setting per np");
  ASSERT_NE(at, std::string::npos) << table;
  EXPECT_NE(table.find(best["label"].get<std::string>(), at), std::string::npos) << table;
  EXPECT_EQ(table.find("autotuned"), std::string::npos) << table;
  std::filesystem::remove_all(dir);
}

}  // namespace
