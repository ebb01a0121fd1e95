// Same scenario -> same report and same timelines, byte for byte (two hvdsim runs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "read_whole_file.h"

namespace {

TEST(Determinism, TwoRunsGiveIdenticalReportsAndTimelines) {
  const auto dir = std::filesystem::temp_directory_path() / ("hvdsim_det_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    const auto run = dir / std::to_string(i);
    const std::string cmd = std::string(HVDSIM_EXE) + " " + HVD_SOURCE_DIR +
                            "/scenarios/fattree_2to1.json --set 'sweep.np=[8,32]'"
                            " --set 'sweep.hierarchical_allreduce=[false,true]'"
                            " --set workload.steps=1 -q --report " + (run / "report.json").string() +
                            " --timeline-dir " + (run / "tl").string() + " > " + (run / "table.txt").string();
    std::filesystem::create_directories(run);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    out[i] = slurp(run / "report.json") + slurp(run / "report.csv") + slurp(run / "table.txt");
    for (const char* tl : {"vgg16_np8_hierarchical_allreduce=false.json", "vgg16_np32_hierarchical_allreduce=true.json"}) {
      const std::string t = slurp(run / "tl" / tl);
      EXPECT_GT(t.size(), 1000u) << tl;
      out[i] += t;
    }
  }
  EXPECT_GT(out[0].size(), 2000u);
  EXPECT_TRUE(out[0] == out[1]) << "the two runs differ";
  std::filesystem::remove_all(dir);
}

}  // namespace
