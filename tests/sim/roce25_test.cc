// hvdsim scenarios/roce25.json reproduces the published 512-GPU scaling efficiencies of
// Horovod (Inception V3 90 %, ResNet-101 90 %, VGG-16 68 %; horovod docs/benchmarks.rst,
// May 2018) within ±3 points, with the one RoCE calibration of docs/simulator.md.
// Runs np=512 (and the np=1 baseline hvdsim adds) with one warm-up and one measured step
// (simulations are deterministic: later steps repeat it).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace {

TEST(Roce25, Reproduces512GpuScalingEfficiencies) {
  const auto report = std::filesystem::temp_directory_path() / ("roce25_" + std::to_string(::getpid()) + ".json");
  const std::string cmd = std::string(HVDSIM_EXE) + " " + HVD_SOURCE_DIR +
                          "/scenarios/roce25.json --set 'sweep.np=[512]' --set workload.steps=1 -q"
                          " --report " + report.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(report);
  const nlohmann::json j = nlohmann::json::parse(f);
  const std::map<std::string, double> published = {{"inception3", 0.90}, {"resnet101", 0.90}, {"vgg16", 0.68}};
  std::map<std::string, double> got;
  for (const auto& run : j["runs"]) got[run["model"]] = run["scaling_efficiency"];
  for (const auto& [model, want] : published) {
    ASSERT_TRUE(got.count(model)) << model;
    std::printf("%-12s simulated %.1f %%  published %.0f %%  (%+.1f points)\n", model.c_str(),
                100 * got[model], 100 * want, 100 * (got[model] - want));
    EXPECT_LE(std::fabs(got[model] - want), 0.03) << model;
  }
  std::filesystem::remove(report);
  std::filesystem::remove(report.string().substr(0, report.string().size() - 5) + ".csv");
}

}  // namespace
