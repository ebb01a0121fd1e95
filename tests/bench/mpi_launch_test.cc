// hvdbench under Open MPI: self-launching (-np 2 re-runs itself under mpirun) and under an
// outer mpirun; the report is parsed back.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

int run(const std::string& cmd) {
  const std::string full = "env -u OMPI_COMM_WORLD_SIZE -u PMIX_SIZE -u PMI_SIZE " + cmd;
  const int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nlohmann::json load(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
}

void expect_sane_run(const nlohmann::json& r, int np, double max_efficiency) {
  EXPECT_EQ(r["np"], np);
  EXPECT_EQ(r["model"], "resnet50");
  EXPECT_EQ(r["batch_size"], 64);
  EXPECT_EQ(r["steps"], 2);
  EXPECT_GT(r["images_per_sec"].get<double>(), 0);
  // Sanity only: a loaded 2-core machine may make communication arbitrarily slow.
  EXPECT_GT(r["scaling_efficiency"].get<double>(), 0.0);
  EXPECT_LT(r["scaling_efficiency"].get<double>(), max_efficiency);
  EXPECT_GT(r["compute_s"].get<double>(), 0);
  EXPECT_GE(r["exposed_comm_s"].get<double>(), 0);
  EXPECT_NEAR(r["step_time_s"].get<double>(),
              r["compute_s"].get<double>() + r["exposed_comm_s"].get<double>(), 1e-6);
  ASSERT_EQ(r["collectives"].size(), 1u);
  EXPECT_EQ(r["collectives"][0]["op"], "allreduce");
  EXPECT_EQ(r["collectives"][0]["calls"], 2 * 161);
  EXPECT_GT(r["collectives"][0]["busbw_gbps"].get<double>(), 0);
}

TEST(HvdbenchMpi, SelfLaunchedModelRunWritesAParsableReport) {
  const std::string report = ::testing::TempDir() + "hvdbench_np2.json";
  std::remove(report.c_str());
  ASSERT_EQ(run(std::string(HVDBENCH_PATH) +
                " --model resnet50 --steps 2 --warmup 1 --compute-scale 0.05 -np 2 --report " +
                report),
            0);
  nlohmann::json j = load(report);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["tool"], "hvdbench");
  ASSERT_EQ(j["runs"].size(), 2u);  // the 1-rank baseline, then the 2-rank run
  EXPECT_EQ(j["runs"][0]["np"], 1);
  EXPECT_DOUBLE_EQ(j["runs"][0]["scaling_efficiency"].get<double>(), 1.0);
  expect_sane_run(j["runs"][1], 2, 1.5);
  EXPECT_DOUBLE_EQ(j["runs"][1]["images_per_sec_single"].get<double>(),
                   j["runs"][0]["images_per_sec"].get<double>());
}

TEST(HvdbenchMpi, OuterMpirunWorldWithGivenSingleRate) {
  const std::string report = ::testing::TempDir() + "hvdbench_outer.json";
  std::remove(report.c_str());
  ASSERT_EQ(run(std::string(MPIEXEC) + " --allow-run-as-root -np 2 --bind-to none --mca mpi_yield_when_idle 1 " +
                HVDBENCH_PATH +
                " --model resnet50 --steps 2 --warmup 1 --compute-scale 0.05 --single-rate 1000"
                " --cycle-time-ms 2 --report " + report),
            0);
  nlohmann::json j = load(report);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["runs"].size(), 1u);
  expect_sane_run(j["runs"][0], 2, 1e9);  // --single-rate is made up: any efficiency
  EXPECT_DOUBLE_EQ(j["runs"][0]["images_per_sec_single"].get<double>(), 1000.0);
  EXPECT_EQ(j["runs"][0]["knobs"]["cycle_time_ms"], "2");
}

}  // namespace
