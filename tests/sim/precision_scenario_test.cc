// workload.precision and workload.seq_len in scenarios: the measured rate sets one GPU's
// speed, a longer sequence costs its FLOPs, and what nothing covers is refused at load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_hvdsim.h"

namespace hvd::sim {
namespace {

namespace fs = std::filesystem;
const std::string kA100 = std::string(HVD_SOURCE_DIR) + "/scenarios/dgx_a100.json";

// One run of bert-large on one DGX A100 node (np 8), every GPU at the catalogue's rate (no
// GPU-to-GPU spread: the rate is what is checked); the report's run.
nlohmann::json bert_run(const std::string& sets) {
  const fs::path report = fs::temp_directory_path() / ("hvdsim_prec_" + std::to_string(::getpid()) + ".json");
  std::string err;
  EXPECT_EQ(run_hvdsim(kA100 + " -q --set cluster.nodes=1 --set 'workload.models=[\"bert-large\"]' "
                       "--set 'sweep.np=[8]' --set cluster.gpu_speed_cv=0 " + sets + " --report " + report.string(), &err), 0) << err;
  std::ifstream f(report);
  const auto j = nlohmann::json::parse(f, nullptr, false);
  fs::remove(report);
  fs::remove(fs::path(report).replace_extension(".csv"));
  return j.is_object() && j["runs"].size() == 1 ? j["runs"][0] : nlohmann::json();
}

TEST(PrecisionScenario, MeasuredRateAndSequenceLength) {
  const auto fp16 = bert_run("--set workload.precision=fp16");
  const auto fp32 = bert_run("--set workload.precision=fp32");
  const auto fp16_512 = bert_run("--set workload.precision=fp16 --set workload.seq_len=512 --set workload.batch_size=16");
  ASSERT_FALSE(fp16.is_null());
  ASSERT_FALSE(fp32.is_null());
  ASSERT_FALSE(fp16_512.is_null());
  // One A100 in fp16: the H100's measured 850.7 sequences/s x Lambda's A100/H100 152/301; the
  // single run's step adds the runtime's cycle, under 1 %.
  const double a100 = 850.7 * 152 / 301;
  EXPECT_NEAR(fp16["images_per_sec_single"].get<double>(), a100, 0.01 * a100);
  EXPECT_NEAR(fp16["compute_s"].get<double>(), 64 / a100, 1e-6);
  EXPECT_GT(fp16["images_per_sec_single"].get<double>(), 2 * fp32["images_per_sec_single"].get<double>());
  // seq 512 at batch 16: H100's measured 512 row (185.2) x the same ratio.
  EXPECT_NEAR(fp16_512["compute_s"].get<double>(), 16 / (185.2 * 152 / 301), 1e-6);
}

TEST(PrecisionScenario, WhatNothingCoversIsRefusedAtLoad) {
  std::string err;
  EXPECT_EQ(run_hvdsim(kA100 + " --set workload.precision=fp8", &err), 2);
  EXPECT_NE(err.find("workload.precision"), std::string::npos) << err;
  EXPECT_NE(err.find("bf16"), std::string::npos) << err;  // the known ones are named
  EXPECT_EQ(run_hvdsim(kA100 + " --set workload.seq_len=128", &err), 2);  // resnet50 is in the workload
  EXPECT_NE(err.find("workload.seq_len"), std::string::npos) << err;
  EXPECT_EQ(run_hvdsim(kA100 + " --set cluster.gpu=V100 --set workload.precision=bf16", &err), 2);
  EXPECT_NE(err.find("workload.precision"), std::string::npos) << err;
  EXPECT_NE(err.find("Ampere"), std::string::npos) << err;
  EXPECT_EQ(run_hvdsim(kA100 + " --set 'workload.models=[\"bert-large\"]' --set workload.seq_len=600", &err), 2);
  EXPECT_NE(err.find("512 positions"), std::string::npos) << err;
}

}  // namespace
}  // namespace hvd::sim
