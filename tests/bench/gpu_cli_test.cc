// hvdbench --device gpu on a machine with a GPU (labels bench, nccl, gpu): collective mode
// prints hvd and NCCL (ncclAllReduce called directly) figures for every size, checked
// results, and model mode replays device gradients. Every test skips, with the reason, where
// --device gpu cannot run (no NCCL backend in this build, no driver, no device).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_world.h"
#include "run_hvdbench.h"

namespace {

using hvd::bench::testing::Outcome;
using hvd::bench::testing::run_hvdbench;

// One data line of `hvdbench --collective allreduce --device gpu`.
struct Row {
  long long bytes = 0;
  double hvd_us = 0, hvd_algbw = 0, hvd_busbw = 0;
  long long hvd_wrong = -1;
  double nccl_us = 0, nccl_algbw = 0, nccl_busbw = 0;
  long long nccl_wrong = -1;
};

std::vector<Row> rows_of(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    Row r;
    long long count = 0;
    std::string type, op, hw, nw;
    f >> r.bytes >> count >> type >> op >> r.hvd_us >> r.hvd_algbw >> r.hvd_busbw >> hw >>
        r.nccl_us >> r.nccl_algbw >> r.nccl_busbw >> nw;
    EXPECT_FALSE(f.fail()) << "unparsable row: " << line;
    if (f.fail()) continue;
    r.hvd_wrong = hw == "-" ? -1 : std::stoll(hw);
    r.nccl_wrong = nw == "-" ? -1 : std::stoll(nw);
    rows.push_back(r);
  }
  return rows;
}

class GpuBench : public ::testing::Test {
 protected:
  void SetUp() override {
    const hvd::bench::GpuVerdict v = hvd::bench::check_gpu_here();
    if (v.exit_code != 0) GTEST_SKIP() << v.reason;
  }

  // Runs the sweep on `np` GPUs and checks every row; busbw = algbw x 2(n-1)/n.
  void sweep(int np) {
    Outcome o = run_hvdbench("--device gpu --collective allreduce -np " + std::to_string(np) +
                             " -b 1M -e 4M --check -n 10 -w 3");
    ASSERT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("# Out of bounds values : 0 OK"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("NCCL"), std::string::npos) << o.out;
    const std::vector<Row> rows = rows_of(o.out);
    ASSERT_EQ(rows.size(), 3u) << o.out;
    const double factor = 2.0 * (np - 1) / np;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      SCOPED_TRACE(o.out);
      EXPECT_EQ(r.bytes, (1LL << 20) << i);
      EXPECT_GT(r.hvd_us, 0);
      EXPECT_GT(r.nccl_us, 0);
      EXPECT_GT(r.hvd_algbw, 0);
      EXPECT_GT(r.nccl_algbw, 0);
      EXPECT_EQ(r.hvd_wrong, 0);
      EXPECT_EQ(r.nccl_wrong, 0);
      // Printed with 3 decimals.
      EXPECT_NEAR(r.hvd_busbw, r.hvd_algbw * factor, 2e-3);
      EXPECT_NEAR(r.nccl_busbw, r.nccl_algbw * factor, 2e-3);
      if (np > 1) {
        EXPECT_GT(r.hvd_busbw, 0);
        EXPECT_GT(r.nccl_busbw, 0);
      }
    }
  }
};

// One GPU: both variants run and compute the right sums; busbw is 0 by nccl-tests'
// definition (2(n-1)/n), so algbw is what must be positive.
TEST_F(GpuBench, CollectiveAllreduceOneGpuHasHvdAndNcclFigures) {
  sweep(1);
}

// Two GPUs (self-launched mpirun): positive bus bandwidth in both variants.
TEST_F(GpuBench, CollectiveAllreduceTwoGpusHasPositiveBusbw) {
  if (hvd::bench::gpu_count() < 2)
    GTEST_SKIP() << "needs 2 GPUs, this machine has " << hvd::bench::gpu_count();
  sweep(2);
}

// Model mode: gradients are device tensors, allreduced through the NCCL backend.
TEST_F(GpuBench, ModelModeReplaysDeviceGradients) {
  Outcome o = run_hvdbench("--device gpu --model " + std::string(HVD_SOURCE_DIR) +
                           "/libs/workloads/examples/tiny_mlp.json --warmup 1 --steps 3");
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Device:      GPU"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("images/s"), std::string::npos) << o.out;
}

// Other collectives on device tensors (no NCCL column): results checked.
TEST_F(GpuBench, OtherCollectivesOnDeviceTensorsAreCorrect) {
  for (const char* op : {"allgather", "broadcast", "alltoall", "reducescatter"}) {
    Outcome o = run_hvdbench(std::string("--device gpu --collective ") + op +
                             " -b 4K -e 64K -f 4 --check -n 3 -w 1");
    EXPECT_EQ(o.code, 0) << op << "\n" << o.out << o.err;
    EXPECT_NE(o.out.find("# Out of bounds values : 0 OK"), std::string::npos) << op << o.out;
  }
}

// --calibrate on the GPU: the device figures are the GPU's own (copies and the reduce kernel
// through the NCCL backend's CudaDevice) and name it. Any HBM GPU copies at hundreds of GB/s
// (a P100's 732 GB/s datasheet allows ~330 for a copy counted once); no host memcpy gets
// near 100 GB/s per rank, so a figure measured on the host fails here.
TEST_F(GpuBench, CalibrateMeasuresTheGpu) {
  const std::string path =
      ::testing::TempDir() + "hvdbench_calibrate_gpu_" + std::to_string(getpid()) + ".json";
  Outcome o = run_hvdbench("--device gpu --calibrate " + path + " -n 2 -w 1 -q");
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  const auto doc = nlohmann::json::parse(hvd::bench::testing::slurp(path));
  const auto& d = doc.at("device");
  EXPECT_EQ(d.at("kind"), "gpu") << d.dump();
  EXPECT_FALSE(d.at("name").get<std::string>().empty());
  EXPECT_GT(d.at("copy_bandwidth_Bps").get<double>(), 100e9) << d.dump();
  EXPECT_GT(d.at("reduce_bandwidth_Bps").get<double>(), 60e9) << d.dump();
  EXPECT_GT(d.at("copy_bandwidth_hot_Bps").get<double>(), 0) << d.dump();
  EXPECT_NE(o.out.find("device     copy"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(d.at("name").get<std::string>()), std::string::npos) << o.out;
}

}  // namespace
