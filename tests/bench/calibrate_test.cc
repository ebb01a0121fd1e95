// hvdbench --calibrate: the alpha-beta fits, bad input (one line, exit 2), and a one-rank
// calibration in process whose file has the documented fields (docs/formats.md).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibrate_mode.h"
#include "run_hvdbench.h"

namespace hvd::bench {
namespace {

TEST(CalibrateFit, RecoversAlphaAndBetaOfAnExactLine) {
  std::vector<LinkSample> s;
  for (int64_t n : {8, 512, 32768, 1 << 20, 4 << 20, 16 << 20})
    s.push_back({n, 2e-6 + static_cast<double>(n) / 5e9});
  double a = 0, b = 0;
  ASSERT_TRUE(fit_alpha_beta(s, &a, &b));
  EXPECT_NEAR(b, 5e9, 5e9 * 1e-3);
  EXPECT_NEAR(a, 2e-6, 1e-8);  // the smallest message is almost all latency
  ASSERT_TRUE(fit_relative(s, &a, &b));
  EXPECT_NEAR(a, 2e-6, 1e-9);
  EXPECT_NEAR(b, 5e9, 5e9 * 1e-6);
}

TEST(CalibrateFit, DegenerateInputIsRefused) {
  double a = 0, b = 0;
  EXPECT_FALSE(fit_alpha_beta({}, &a, &b));
  EXPECT_FALSE(fit_alpha_beta({{8, 1e-6}}, &a, &b));
  EXPECT_FALSE(fit_relative({{8, 1e-6}, {8, 1e-6}}, &a, &b));
  EXPECT_FALSE(fit_alpha_beta({{8, 1e-3}, {1 << 20, 1e-4}}, &a, &b));  // faster when larger
}

using hvd::bench::testing::Outcome;
using hvd::bench::testing::slurp;

Outcome run(const std::string& args) { return hvd::bench::testing::run_hvdbench(args); }

void expect_bad(const std::string& args, const std::string& needle) {
  Outcome o = run(args);
  EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\n" << o.err;
}

TEST(CalibrateCli, BadInputExitsTwoWithOneLine) {
  expect_bad("--calibrate /nonexistent/dir/c.json", "--calibrate: cannot write");
  expect_bad("--calibrate c.json --model resnet50", "mode of its own");
  expect_bad("--calibrate c.json -np 0", "-np must be at least 1");
  expect_bad("--calibrate c.json -n 0", "-n/--iters must be at least 1");
}

TEST(CalibrateCli, OneRankWritesTheDocumentedFields) {
  const std::string path =
      ::testing::TempDir() + "hvd_calib_np1_" + std::to_string(getpid()) + ".json";
  Outcome o = run("--calibrate " + path + " -n 2 -w 1 -q");
  ASSERT_EQ(o.code, 0) << o.err;
  auto j = nlohmann::json::parse(slurp(path), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["format"], "hvdsim-calibration");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["np"], 1);
  EXPECT_TRUE(j["links"]["intra_node"].is_null());  // one rank: no pair to measure
  EXPECT_TRUE(j["links"]["inter_node"].is_null());
  EXPECT_GT(j["device"]["copy_bandwidth_Bps"].get<double>(), 1e8);
  EXPECT_GT(j["device"]["reduce_bandwidth_Bps"].get<double>(), 1e8);
  EXPECT_GT(j["runtime"]["tiny_allreduce_s"].get<double>(), 0);
  EXPECT_LT(j["runtime"]["tiny_allreduce_s"].get<double>(), 0.1);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hvd::bench
