// hvdsim --elastic-reset: one reset's parts (detection, rendezvous, the state broadcast
// simulated on the cluster, the steps redone) and their sum; flags of other modes refused.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "run_hvdsim.h"

namespace hvd::sim {
namespace {

const std::string kRoce = std::string(HVD_SOURCE_DIR) + "/scenarios/roce25.json";

// model -> {state_MB, step_s, detect_s, rendezv_s, broadcast_s, redo_s, total_s}
std::map<std::string, std::vector<double>> rows(const std::string& out) {
  std::map<std::string, std::vector<double>> r;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("model", 0) == 0) continue;
    std::istringstream w(line);
    std::string model;
    int np = 0;
    w >> model >> np;
    std::vector<double> v(7);
    for (double& x : v) w >> x;
    r[model] = v;
  }
  return r;
}

TEST(ElasticReset, PartsAddUpAndTheStateIsBroadcastOnTheCluster) {
  std::string err, out1, out3;
  const std::string base =
      kRoce + " --set 'workload.models=[\"resnet101\", \"vgg16\"]' --set workload.optimizer=momentum --elastic-reset --np 8";
  ASSERT_EQ(run_hvdsim(base, &err, &out1), 0) << err;
  ASSERT_EQ(run_hvdsim(base + " --optimizer-slots 3 --commit-every 4", &err, &out3), 0) << err;
  const auto one = rows(out1), three = rows(out3);
  ASSERT_EQ(one.size(), 2u) << out1;
  for (const auto& [model, v] : one) {
    EXPECT_NEAR(v[6], v[2] + v[3] + v[4] + v[5], 2e-4) << model;  // total = the parts (as printed)
    EXPECT_GT(v[4], 0) << model;                                   // a broadcast that took time
    EXPECT_NEAR(v[5], 0.5 * v[1], 1e-3) << model;                  // half a step redone
    const auto& w = three.at(model);
    EXPECT_NEAR(w[0], 2 * v[0], 0.2) << model;                     // 4 instead of 2 copies of the parameters
    EXPECT_GT(w[4], 1.5 * v[4]) << model;                          // twice the bytes, at bandwidth
    EXPECT_NEAR(w[5], 4 * v[5], 1e-3) << model;                    // commits 4 steps apart
  }
  // VGG-16's 138 M parameters against ResNet-101's 44.5 M: the larger broadcast.
  EXPECT_GT(one.at("vgg16")[4], 2 * one.at("resnet101")[4]);
}

// The state carries the optimizer's own tensors (SGD none, Adam two moments) unless
// --optimizer-slots names another count; the header says which.
TEST(ElasticReset, TheStateFollowsTheOptimizer) {
  std::string err, sgd, adam, given;
  const std::string base = kRoce + " --set 'workload.models=[\"resnet101\"]' --elastic-reset --np 4";
  ASSERT_EQ(run_hvdsim(base, &err, &sgd), 0) << err;
  ASSERT_EQ(run_hvdsim(base + " --set workload.optimizer=adam", &err, &adam), 0) << err;
  ASSERT_EQ(run_hvdsim(base + " --set workload.optimizer=adam --optimizer-slots 0.5", &err, &given), 0) << err;
  const double one = rows(sgd).at("resnet101")[0];
  EXPECT_NEAR(rows(adam).at("resnet101")[0], 3 * one, 0.2) << adam;
  EXPECT_NEAR(rows(given).at("resnet101")[0], 1.5 * one, 0.2) << given;
  EXPECT_NE(sgd.find("(1 + 0 optimizer slots, workload.optimizer sgd)"), std::string::npos) << sgd;
  EXPECT_NE(adam.find("(1 + 2 optimizer slots, workload.optimizer adam)"), std::string::npos) << adam;
  EXPECT_NE(given.find("(1 + 0.5 optimizer slots, --optimizer-slots)"), std::string::npos) << given;
}

TEST(ElasticReset, FlagsOfOtherModesAreRefused) {
  std::string err;
  EXPECT_EQ(run_hvdsim(kRoce + " --elastic-reset --np 1", &err), 2);
  EXPECT_NE(err.find("at least 2 ranks"), std::string::npos) << err;
  EXPECT_EQ(run_hvdsim(kRoce + " --elastic-reset --np 513", &err), 2);
  EXPECT_EQ(err, "hvdsim: --elastic-reset: --np 513 does not fit the cluster (512 GPUs)\n");
  for (const char* bad : {" --optimizer-slots nan", " --detect nan", " --optimizer-slots inf"}) {
    EXPECT_EQ(run_hvdsim(kRoce + " --elastic-reset" + bad, &err), 2) << bad;
    EXPECT_NE(err.find("is not a number in ["), std::string::npos) << err;
  }
  EXPECT_EQ(run_hvdsim(kRoce + " --optimizer-slots 2", &err), 2);
  EXPECT_NE(err.find("--optimizer-slots: applies to --elastic-reset only"), std::string::npos) << err;
  EXPECT_EQ(run_hvdsim(kRoce + " --elastic-reset --collective allreduce", &err), 2);
  EXPECT_EQ(run_hvdsim(kRoce + " --elastic-reset --report r.json", &err), 2);
  EXPECT_NE(err.find("--report: not with --elastic-reset"), std::string::npos) << err;
}

}  // namespace
}  // namespace hvd::sim
