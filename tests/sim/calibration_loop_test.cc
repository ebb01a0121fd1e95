// The calibration loop, small: calibrate this machine at -np 2 (few iterations), predict
// hvdbench --model resnet50 -np 2 with hvdsim and scenarios/localhost.json using that
// calibration, and measure a short hvdbench run. The test checks what holds on any machine,
// however loaded: the calibration file's fields and units, and that prediction and
// measurement replay the same traffic over the same compute. How close the predicted step
// comes to the measured one depends on what else runs beside it, so that figure is printed
// here and checked by scripts/validate_localhost.py on an idle machine (docs/simulator.md).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using nlohmann::json;

int run(const std::string& cmd) {
  const std::string full =
      "cd " HVD_SOURCE_DIR " && env -u OMPI_COMM_WORLD_SIZE -u PMIX_SIZE -u PMI_SIZE " + cmd;
  const int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

json load(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f, nullptr, /*allow_exceptions=*/false);
}

const json* np_run(const json& report, int np) {
  for (const auto& r : report["runs"])
    if (r["np"] == np) return &r;
  return nullptr;
}

// Predicts ResNet-50 with hvdsim (scenarios/localhost.json, then `sim_args`), measures it
// right after with hvdbench at `np` (`bench_env` before the command, `bench_args` after),
// and prints the two step times and their ratio. The loop must run end to end and give a
// prediction of the measured run's order; how close it comes depends on what else runs on
// the machine, so the 10 % check is scripts/validate_localhost.py's (it prints figures), not
// this suite's. Returns the measured run's report record.
json predict_then_measure(const std::string& dir, const std::string& sim_args,
                          const std::string& bench_env, const std::string& bench_args, int np) {
  const std::string real = dir + "/real.json", sim = dir + "/sim.json";
  EXPECT_EQ(run(std::string(HVDSIM_PATH) + " scenarios/localhost.json " + sim_args + " --set 'sweep.np=[" +
                std::to_string(np) + "]' -q --report " + sim + " > /dev/null"),
            0);
  // The measurement: the least disturbed of three short runs (what the prediction models: the
  // machine as calibrated; one run alone on this 2-core box strays by 10-25 % when another
  // process wakes up during it).
  const json sim_report = load(sim);
  const json* p = np_run(sim_report, np);
  json best;
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(run(bench_env + " " + std::string(HVDBENCH_PATH) + " --model resnet50 -np " +
                  std::to_string(np) + " --steps 3 --warmup 1 --no-baseline -q --report " + real + " " +
                  bench_args + " > /dev/null"),
              0);
    const json real_report = load(real);
    const json* m = np_run(real_report, np);
    if (m && (best.is_null() || (*m)["step_time_s"].get<double>() < best["step_time_s"].get<double>())) best = *m;
  }
  if (!p || best.is_null()) {
    ADD_FAILURE() << "no np=" << np << " run in " << sim << " or " << real;
    return json();
  }
  const json* m = &best;
  const double predicted = (*p)["step_time_s"], measured = (*m)["step_time_s"];
  std::printf("calibration loop %s: predicted %.1f ms, measured %.1f ms (ratio %.3f; scripts/validate_localhost.py "
              "checks it on an idle machine)\n",
              bench_args.c_str(), predicted * 1e3, measured * 1e3, predicted / measured);
  EXPECT_GT(predicted, 0);
  EXPECT_GT(measured, 0);
  // What holds whatever else the machine runs: both tools replay the same model, so every
  // step moves the same gradient bytes in the same number of allreduce calls; the measured
  // compute is an emulated sleep, never shorter than the reference compute hvdsim prices;
  // and no step is shorter than its compute. How close predicted and measured come is a
  // wall-clock comparison: scripts/validate_localhost.py prints it on an idle machine.
  const auto per_step = [](const json& r, const char* key) {
    return r["collectives"][0][key].get<double>() / r["steps"].get<double>();
  };
  if ((*p)["collectives"].size() != 1 || (*m)["collectives"].size() != 1) {
    ADD_FAILURE() << "expected one collective (allreduce) in each report";
    return *m;
  }
  EXPECT_EQ((*p)["collectives"][0]["op"], "allreduce");
  EXPECT_EQ((*m)["collectives"][0]["op"], "allreduce");
  EXPECT_DOUBLE_EQ(per_step(*p, "bytes"), per_step(*m, "bytes"));
  EXPECT_DOUBLE_EQ(per_step(*p, "calls"), per_step(*m, "calls"));
  const double compute = (*p)["compute_s"];
  EXPECT_GT(compute, 0);
  EXPECT_GE((*m)["compute_s"].get<double>(), compute * (1 - 1e-3));
  EXPECT_GE(predicted, compute);
  EXPECT_GE(measured, (*m)["compute_s"].get<double>());
  return *m;
}

TEST(CalibrationLoop, PredictsHvdbenchResnet50AtNp2) {
  const std::string dir = ::testing::TempDir() + "hvd_loop_" + std::to_string(getpid());
  ASSERT_EQ(run("mkdir -p " + dir), 0);
  const std::string calib = dir + "/calib.json";
  ASSERT_EQ(
      run(std::string(HVDBENCH_PATH) + " --calibrate " + calib + " -np 2 -n 5 -w 2 -q > /dev/null"),
      0);

  // The file has the documented fields with sane values.
  const json c = load(calib);
  ASSERT_FALSE(c.is_discarded());
  EXPECT_EQ(c["format"], "hvdsim-calibration");
  EXPECT_EQ(c["version"], 1);
  EXPECT_EQ(c["np"], 2);
  EXPECT_EQ(c["nodes"], 1);
  const json& l = c["links"]["intra_node"];
  ASSERT_TRUE(l.is_object());
  EXPECT_EQ(l["pairs"], 1);
  EXPECT_GT(l["latency_s"].get<double>(), 1e-8);
  // Units, not speed (a loaded machine measures slow links): seconds and bytes per second.
  EXPECT_LT(l["latency_s"].get<double>(), 1.0);
  EXPECT_GT(l["bandwidth_Bps"].get<double>(), 1e6);
  EXPECT_LT(l["bandwidth_Bps"].get<double>(), 1e12);
  // Every power of two from 512 B to 256 KiB (the protocol switches lie in there), 8 B to 64 MiB.
  std::set<int64_t> sizes;
  for (const auto& row : l["table"]) sizes.insert(row["bytes"].get<int64_t>());
  for (int64_t b = 512; b <= (256 << 10); b *= 2) EXPECT_TRUE(sizes.count(b)) << b << " B missing";
  EXPECT_EQ(*sizes.begin(), 8);
  EXPECT_EQ(*sizes.rbegin(), int64_t{64} << 20);
  for (const auto& f : l["bandwidth_factors"]) EXPECT_GE(f[1].get<double>(), 1.0 - 1e-9);
  EXPECT_TRUE(c["links"]["inter_node"].is_null());
  EXPECT_GT(c["device"]["copy_bandwidth_Bps"].get<double>(), 1e6);
  EXPECT_GT(c["device"]["reduce_bandwidth_Bps"].get<double>(), 1e6);
  EXPECT_GT(c["runtime"]["tiny_allreduce_s"].get<double>(), 0);
  EXPECT_GE(c["runtime"]["per_call_overhead_s"].get<double>(), 0);
  // The caller-driven figure and the one through the loop thread, and what the simulator
  // takes from them.
  EXPECT_TRUE(c["runtime"]["caller_drives"].get<bool>());
  EXPECT_GT(c["runtime"]["tiny_allreduce_via_loop_s"].get<double>(), 0);
  EXPECT_GE(c["runtime"]["hand_off_s"].get<double>(), 0);
  EXPECT_NEAR(c["runtime"]["per_message_overhead_s"].get<double>() * 3,
              c["runtime"]["per_call_overhead_s"].get<double>(), 1e-12);  // np 2: 3 messages
  // The cache probe: 1 MiB exchanges over pools of 1 ... 64 MiB; the cache the simulator
  // uses is the measured one when the probe saw the cliff, never more than sysfs's share.
  const json& probe = c["cache_probe"];
  ASSERT_TRUE(probe.is_object());
  EXPECT_EQ(probe["pools"].size(), 7u);
  EXPECT_DOUBLE_EQ(probe["pools"][0]["hot_fraction"].get<double>(), 1.0);
  for (const auto& q : probe["pools"]) {
    EXPECT_GE(q["hot_fraction"].get<double>(), 0.0);
    EXPECT_LE(q["hot_fraction"].get<double>(), 1.0);
  }
  const double eff = probe["effective_bytes_per_rank"].get<double>();
  EXPECT_LE(eff, probe["sysfs_bytes_per_rank"].get<double>());
  EXPECT_DOUBLE_EQ(c["cache_bytes_per_rank"].get<double>(),
                   eff > 0 ? eff : probe["sysfs_bytes_per_rank"].get<double>());

  // Predict, then measure right after.
  predict_then_measure(dir, "--set calibration=" + calib, "", "", 2);
  run("rm -rf " + dir);
}

// Across nodes: 4 ranks as 2 emulated nodes of 2 (HVD_RANKS_PER_NODE=2). The calibration
// measures both link classes with every pair at once, and hvdsim with a 2 x 2 cluster
// predicts hvdbench's ResNet-50 step, flat and with hierarchical allreduce.
TEST(CalibrationLoop, TwoEmulatedNodesCalibrateBothLinkClassesAndPredictTheStep) {
  const std::string dir = ::testing::TempDir() + "hvd_loop2_" + std::to_string(getpid());
  ASSERT_EQ(run("mkdir -p " + dir), 0);
  const std::string calib = dir + "/calib.json";
  ASSERT_EQ(run("HVD_RANKS_PER_NODE=2 " + std::string(HVDBENCH_PATH) + " --calibrate " + calib +
                " -np 4 -n 5 -w 2 -q > /dev/null"),
            0);
  const json c = load(calib);
  ASSERT_FALSE(c.is_discarded());
  EXPECT_EQ(c["nodes"], 2);
  EXPECT_EQ(c["ranks_per_node"], 2);
  for (const char* cls : {"intra_node", "inter_node"}) {
    const json& l = c["links"][cls];
    ASSERT_TRUE(l.is_object()) << cls;
    EXPECT_EQ(l["pairs"], 2) << cls;  // every rank paired, all at once
    EXPECT_GT(l["bandwidth_Bps"].get<double>(), 1e6) << cls;
    EXPECT_GT(l["latency_s"].get<double>(), 1e-8) << cls;
  }
  for (const std::string hier : {"", "--hierarchical-allreduce"}) {
    const json m = predict_then_measure(
        dir,
        "--set calibration=" + calib + " --set cluster.nodes=2 --set cluster.gpus_per_node=2" +
            (hier.empty() ? "" : " --set runtime.hierarchical_allreduce=true"),
        "HVD_RANKS_PER_NODE=2", hier, 4);
    if (!m.is_null()) {
      EXPECT_EQ(m["knobs"]["hierarchical_allreduce"], hier.empty() ? "false" : "true");
    }
  }
  run("rm -rf " + dir);
}

}  // namespace
