// workload.sharding through hvdsim: each mode's traffic per step is the analytic count, the
// modes order as ZeRO and FSDP say they should, tokens are samples x length, runs repeat bit
// for bit, and bad input is one line naming the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_hvdsim.h"

namespace hvd::sim {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = HVD_SOURCE_DIR;
const std::string kH100 = kSrc + "/scenarios/dgx_h100.json";
const std::string kTiny = kSrc + "/tests/data/sharding/tiny_lm.json";

// Units of tiny_lm.json (forward order) and their parameters.
const std::vector<int64_t> kUnits = {1000, 4096, 4096, 1003};

// The report of one hvdsim run (stdout dropped); null on failure.
nlohmann::json report_of(const std::string& scenario, const std::string& sets, std::string* text = nullptr) {
  const fs::path report = fs::temp_directory_path() / ("hvdsim_shard_" + std::to_string(::getpid()) + ".json");
  std::string err;
  const int rc = run_hvdsim(scenario + " -q " + sets + " --report " + report.string(), &err);
  EXPECT_EQ(rc, 0) << err;
  std::ifstream f(report);
  std::stringstream ss;
  ss << f.rdbuf();
  if (text) *text = ss.str();
  fs::remove(report);
  fs::remove(fs::path(report).replace_extension(".csv"));
  const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  return rc == 0 && j.is_object() ? j : nlohmann::json();
}

// The run at `np` of a report.
nlohmann::json run_at(const nlohmann::json& rep, int np) {
  for (const auto& r : rep["runs"])
    if (r["np"] == np) return r;
  return {};
}

// Bytes per step of each collective kind in a run ({} for none).
std::map<std::string, int64_t> bytes_per_step(const nlohmann::json& run) {
  std::map<std::string, int64_t> out;
  const int64_t steps = run["steps"].get<int64_t>();
  for (const auto& c : run["collectives"]) out[c["op"].get<std::string>()] = c["bytes"].get<int64_t>() / steps;
  return out;
}

// tiny_lm on two DGX H100 nodes (np 16, NCCL), fp32, two micro-batches a step.
const std::string kTinySets = " --set cluster.nodes=2 --set 'sweep.np=[16]' --set cluster.gpu_speed_cv=0"
                              " --set workload.precision=fp32 --set 'workload.models=[\"" + kTiny + "\"]'"
                              " --set workload.batch_size=4 --set workload.accumulation_steps=2 --set workload.steps=2";

int64_t padded(int64_t e, int64_t s) { return (e + s - 1) / s * s; }

TEST(Sharding, TrafficPerStepIsTheAnalyticCount) {
  const int64_t k = 2, np = 16, node = 8, fp32 = 4;
  int64_t total = 0, fsdp_ag = 0, fsdp_rs = 0, zero_ag = 0, hsdp_ag = 0, hsdp_rs = 0, hsdp_ar = 0;
  for (int64_t e : kUnits) {
    total += e;
    zero_ag += padded(e, np) * fp32;
    fsdp_ag += 2 * k * padded(e, np) * fp32;
    fsdp_rs += k * padded(e, np) * fp32;
    hsdp_ag += 2 * k * padded(e, node) * fp32;
    hsdp_rs += k * padded(e, node) * fp32;
    hsdp_ar += k * padded(e, node) / node * fp32;
  }
  const auto none = bytes_per_step(run_at(report_of(kH100, kTinySets), 16));
  EXPECT_EQ(none, (std::map<std::string, int64_t>{{"allreduce", total * fp32}}));
  const auto zero1 = bytes_per_step(run_at(report_of(kH100, kTinySets + " --set workload.sharding=zero1"), 16));
  EXPECT_EQ(zero1, (std::map<std::string, int64_t>{{"allgather", zero_ag}, {"reducescatter", zero_ag}}));
  const auto zero2 = bytes_per_step(run_at(report_of(kH100, kTinySets + " --set workload.sharding=zero2"), 16));
  EXPECT_EQ(zero2, (std::map<std::string, int64_t>{{"allgather", zero_ag}, {"reducescatter", k * zero_ag}}));
  const auto fsdp = bytes_per_step(run_at(report_of(kH100, kTinySets + " --set workload.sharding=fsdp"), 16));
  EXPECT_EQ(fsdp, (std::map<std::string, int64_t>{{"allgather", fsdp_ag}, {"reducescatter", fsdp_rs}}));
  const auto hsdp = bytes_per_step(run_at(report_of(kH100, kTinySets + " --set workload.sharding=hsdp"), 16));
  EXPECT_EQ(hsdp, (std::map<std::string, int64_t>{{"allgather", hsdp_ag}, {"reducescatter", hsdp_rs}, {"allreduce", hsdp_ar}}));
  // bf16 parameters, fp8 gradients: the bytes follow the dtypes.
  const auto mixed = bytes_per_step(run_at(
      report_of(kH100, kTinySets + " --set workload.sharding=fsdp --set workload.param_dtype=bf16 --set workload.grad_dtype=fp8"),
      16));
  EXPECT_EQ(mixed, (std::map<std::string, int64_t>{{"allgather", fsdp_ag / 2}, {"reducescatter", fsdp_rs / 4}}));
}

// Ring terms: an allreduce moves 2(n-1)/n of its buffer a rank, an allgather or a
// reduce-scatter (n-1)/n. On units that divide by the group (no padding), one micro-batch:
// FSDP's two allgathers and one reduce-scatter are 1.5 x DDP's allreduce; ZeRO-1/2 as much
// as DDP; HSDP's cross-domain allreduce is DDP's over a shard of the gradients.
TEST(Sharding, ModesOrderInRingTerms) {
  const std::string sets = " --set cluster.nodes=2 --set 'sweep.np=[16]' --set cluster.gpu_speed_cv=0"
                           " --set 'workload.models=[\"llama3-8b\"]' --set workload.seq_len=512 --set workload.batch_size=1"
                           " --set workload.precision=bf16 --set workload.steps=1";
  const double n = 16, node = 8;
  auto ring = [&](const std::map<std::string, int64_t>& b, double ag_n, double ar_n) {
    double t = 0;
    for (const auto& [op, bytes] : b) {
      const double x = static_cast<double>(bytes);
      t += op == "allreduce" ? 2 * (ar_n - 1) / ar_n * x : (ag_n - 1) / ag_n * x;
    }
    return t;
  };
  const auto ddp = bytes_per_step(run_at(report_of(kH100, sets), 16));
  const auto zero1 = bytes_per_step(run_at(report_of(kH100, sets + " --set workload.sharding=zero1"), 16));
  const auto zero2 = bytes_per_step(run_at(report_of(kH100, sets + " --set workload.sharding=zero2"), 16));
  const auto fsdp = bytes_per_step(run_at(report_of(kH100, sets + " --set workload.sharding=fsdp"), 16));
  const auto hsdp = bytes_per_step(run_at(report_of(kH100, sets + " --set workload.sharding=hsdp"), 16));
  ASSERT_EQ(ddp.size(), 1u);
  const double ddp_ring = ring(ddp, n, n);
  EXPECT_NEAR(ring(fsdp, n, n) / ddp_ring, 1.5, 1e-12);
  EXPECT_NEAR(ring(zero1, n, n) / ddp_ring, 1.0, 1e-12);
  EXPECT_NEAR(ring(zero2, n, n) / ddp_ring, 1.0, 1e-12);  // one micro-batch
  EXPECT_EQ(hsdp.at("allreduce") * static_cast<int64_t>(node), ddp.at("allreduce"));
  EXPECT_EQ(hsdp.at("allgather"), fsdp.at("allgather"));
  // 8,030,261,248 bf16 gradients, every unit divisible by 16.
  EXPECT_EQ(ddp.at("allreduce"), 2 * 8030261248LL);
}

TEST(Sharding, TokensAreSamplesTimesLengthAndRunsRepeatBitForBit) {
  const std::string sets = " --set cluster.nodes=1 --set 'sweep.np=[8]' --set 'workload.models=[\"llama3-8b\"]'"
                           " --set workload.seq_len=1024 --set workload.batch_size=2 --set workload.precision=bf16"
                           " --set workload.sharding=fsdp --set workload.steps=2 --set workload.accumulation_steps=2";
  std::string a, b;
  const auto rep = report_of(kH100, sets, &a);
  report_of(kH100, sets, &b);
  const auto run = run_at(rep, 8);
  ASSERT_FALSE(run.is_null());
  EXPECT_EQ(run["seq_len"], 1024);
  EXPECT_EQ(run["sharding"], "fsdp");
  EXPECT_DOUBLE_EQ(run["tokens_per_sec"].get<double>(), run["images_per_sec"].get<double>() * 1024);
  EXPECT_GT(run["exposed_comm_s"].get<double>(), 0);
  EXPECT_LT(run["exposed_comm_s"].get<double>(), run["step_time_s"].get<double>());
  // Reports carry wall-clock costs only outside the runs: the runs repeat exactly.
  const auto ra = nlohmann::json::parse(a)["runs"], rb = nlohmann::json::parse(b)["runs"];
  EXPECT_EQ(ra.dump(), rb.dump());
}

// Without NCCL (Horovod's own ring over the simulated network) the same requests run
// message by message: the bytes are the same count.
TEST(Sharding, OwnCollectivesOverTheSimulatedNetwork) {
  const std::string sets = " --set cluster.nodes=2 --set 'sweep.np=[8]' --set cluster.gpu_speed_cv=0"
                           " --set workload.precision=fp32 --set 'workload.models=[\"" + kTiny + "\"]'"
                           " --set workload.batch_size=4 --set workload.steps=1 --set workload.sharding=hsdp"
                           " --set workload.shard_size=4";
  const auto run = run_at(report_of(kSrc + "/scenarios/h100_ib400.json", sets), 8);
  ASSERT_FALSE(run.is_null());
  int64_t ag = 0, ar = 0;
  for (int64_t e : kUnits) {
    ag += 2 * padded(e, 4) * 4;
    ar += padded(e, 4) / 4 * 4;
  }
  EXPECT_EQ(bytes_per_step(run), (std::map<std::string, int64_t>{{"allgather", ag}, {"reducescatter", ag / 2}, {"allreduce", ar}}));
  EXPECT_GT(run["images_per_sec"].get<double>(), 0);
}

TEST(Sharding, BadInputIsOneLineNamingTheField) {
  struct Case {
    std::string scenario, sets, field;
  } cases[] = {
      {kH100, "--set workload.sharding=zero3", "workload.sharding"},
      {kSrc + "/scenarios/roce25.json", "--set workload.sharding=hsdp", "workload.sharding"},
      {kH100, "--set 'workload.models=[\"llama3-8b\"]' --set workload.seq_len=0", "workload.seq_len"},
      {kH100, "--set workload.shard_size=4", "workload.shard_size"},
      {kH100, "--set workload.param_dtype=bf16", "workload.param_dtype"},
      {kH100, "--set workload.sharding=fsdp --set workload.grad_dtype=int4", "workload.grad_dtype"},
      {kH100, "--set workload.sharding=hsdp --set workload.shard_size=3 --set 'sweep.np=[8]' --set cluster.nodes=1",
       "workload.shard_size"},
  };
  for (const Case& c : cases) {
    std::string err;
    EXPECT_EQ(run_hvdsim(c.scenario + " -q " + c.sets, &err), 2) << c.sets << ": " << err;
    EXPECT_NE(err.find(c.field), std::string::npos) << c.sets << ": " << err;
    EXPECT_LE(std::count(err.begin(), err.end(), '\n'), 1) << c.sets << ": " << err;
  }
}

}  // namespace
}  // namespace hvd::sim
