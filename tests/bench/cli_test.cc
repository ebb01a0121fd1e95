// The hvdbench binary: bad input is one line on stderr and exit code 2; --help, --list-models
// and a short in-process model run (report written and parsed back).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gpu_world.h"
#include "run_hvdbench.h"
#include "options.h"

namespace {

using hvd::bench::testing::Outcome;
using hvd::bench::testing::slurp;
using hvd::bench::testing::run_hvdbench;

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_bad_input(const std::string& args, const std::string& needle) {
  Outcome o = run_hvdbench(args);
  EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
  EXPECT_EQ(lines(o.err), 1) << args << "\n" << o.err;
  EXPECT_EQ(o.err.rfind("hvdbench: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\n" << o.err;
}

TEST(Cli, BadInputExitsTwoWithOneLine) {
  expect_bad_input("--model resnet9000", "known models: resnet50, resnet101");
  expect_bad_input("--model resnet50 -np 0", "-np must be at least 1");
  expect_bad_input("--collective allreduce -b 1M -e 4K", "larger than");
  expect_bad_input("--collective allreduce -b 4K -e 1M -f 1", "from 2 to 2^30");
  expect_bad_input("--collective allreduce -b 4X", "not a size");
  expect_bad_input("--collective allmagic", "unknown collective");
  expect_bad_input("--collective allreduce --dtype float8", "unknown dtype");
  expect_bad_input("--collective allreduce --op mean", "unknown op");
  expect_bad_input("--model resnet50 --gpu Z80", "unknown GPU");
  expect_bad_input("--model resnet50 --steps", "steps");
  expect_bad_input("--model resnet50 --report /nonexistent/dir/r.json", "cannot be written (no directory");
  expect_bad_input("--model resnet50 --report r.csv", "ends in .csv");
  expect_bad_input("--model resnet50 -np 2 --timeline-filename /nonexistent/t.json", "cannot write");
  expect_bad_input("--model resnet50 -np 2 --hostfile /nonexistent/hosts", "cannot read");
  expect_bad_input("", "nothing to run");
  // Given values equal to the "not given" sentinels are errors, not the defaults.
  expect_bad_input("--model resnet50 --batch-size 0", "--batch-size must be at least 1 (got 0)");
  expect_bad_input("--model resnet50 --fusion-threshold-mb -1",
                   "--fusion-threshold-mb must be a number of MiB in [0, 1048576] (got -1)");
  expect_bad_input("--collective allreduce --cycle-time-ms -1", "--cycle-time-ms must be a finite");
  expect_bad_input("--model resnet50 --single-rate 0", "--single-rate must be a finite number > 0");
  expect_bad_input("--model resnet50 --steps 0", "--steps must be at least 1 (got 0)");
  // Runs that would compute for ever, and model files that are not files.
  expect_bad_input("--model resnet50 --batch-size 1000000000", "is longer than a day");
  expect_bad_input("--model resnet50 --compute-scale 1e12", "is longer than a day");
  expect_bad_input("--model resnet50 --accumulation-steps 4096 --batch-size 100000", "is longer than a day");
  expect_bad_input("--model resnet50 -np 2 -H nosuchhost.invalid:2", "-H: host 'nosuchhost.invalid' does not resolve");
  expect_bad_input("--model resnet50 -np 2 -H localhost:0", "-H: bad slot count in 'localhost:0'");
  expect_bad_input("--model resnet50 -np 3 -H localhost:2", "-np 3 is more than the 2 slots of -H");
  expect_bad_input("--model resnet50 --precision fp16", "needs --gpu");
  expect_bad_input("--model resnet50 --precision fp8", "--precision");
  expect_bad_input("--model resnet50 --gpu V100 --precision tf32", "Ampere");
  expect_bad_input("--model resnet50 --seq-len 128", "transformer models");
  expect_bad_input("--model bert-large --seq-len 1000", "512 positions");
  expect_bad_input("--model /dev/zero", "/dev/zero: is not a regular file");
  expect_bad_input("--model /tmp", "/tmp: is not a regular file");
}

TEST(Cli, MalformedTraceNamesTheJsonPath) {
  const std::string path = ::testing::TempDir() + "bad_trace_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << R"({"format": "hvd-model-trace", "version": 1, "name": "bad",
    "reference_gpu": "P100", "reference_batch": 64, "step_s": 0.01,
    "layers": [{"name": "fc0", "type": "fc", "fwd_flops": 100}],
    "tensors": [{"name": "w", "elements": -5, "dtype": "float32", "layer": "fc0"}]})";
  expect_bad_input("--model " + path, "tensors[0].elements");
  std::ofstream(path) << "{ not json";
  expect_bad_input("--model " + path, path);
}

// Hostile model traces: each is one line naming file, path and value, never a crash
// (SIGSEGV, std::terminate), a silent misreading or "out of memory" without a name.
TEST(Cli, HostileTracesAreOneLineEach) {
  const std::string path = ::testing::TempDir() + "hostile_trace_" + std::to_string(getpid()) + ".json";
  auto flat = [](const std::string& step, const std::string& elements) {
    return R"({"name": "h", "reference_gpu": "P100", "reference_batch": 8, "step_s": )" + step +
           R"(, "tensors": [{"name": "huge", "elements": )" + elements +
           R"(, "dtype": "float64", "ready_s": 0}]})";
  };
  std::ofstream(path) << "{\"name\": " << std::string(100000, '[') << std::string(100000, ']') << "}";
  expect_bad_input("--model " + path, path + ": name[0][0]");
  expect_bad_input("--model " + path, "nested deeper than 64 levels");
  std::ofstream(path) << flat("0.1", "1e400");
  expect_bad_input("--model " + path,
                   path + ": tensors[0].elements: [json.exception.out_of_range.406] number "
                          "overflow parsing '1e400'; expected a finite number");
  std::ofstream(path) << flat("0.1, \"step_s\": 0.2", "8");
  expect_bad_input("--model " + path, path + ": step_s: duplicate key \"step_s\"");
  std::ofstream(path) << flat("1e300", "8");
  expect_bad_input("--model " + path,
                   path + ": step_s: 1e+300 is not a number > 0 and <= 86400 (a day, in seconds)");
  std::ofstream(path) << flat("0.1", "1099511627776");  // 8 TiB: no host's memory
  expect_bad_input("--model " + path,
                   path + ": tensors[0] \"huge\": 1099511627776 elements (8192.0 GiB of float64) do "
                          "not fit in this host's memory");
  std::ofstream(path) << R"({"name": "h", "reference_gpu": "P100", "reference_batch": 8,
    "step_s": 0.01, "layers": [{"name": "a", "fwd_flops": 1}, {"name": "b", "fwd_flops": 1}],
    "tensors": [{"name": "x", "elements": 1, "dtype": "float32", "ready_s": 0.005},
                {"name": "y", "elements": 1, "dtype": "float32", "ready_s": 0.001}]})";
  expect_bad_input("--model " + path, path + ": tensors[1].ready_s: 0.001 is not in gradient-ready order");
  std::remove(path.c_str());
}

TEST(Cli, HelpAndListModels) {
  Outcome h = run_hvdbench("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("Examples:"), std::string::npos);
  EXPECT_NE(h.out.find("--collective"), std::string::npos);
  Outcome l = run_hvdbench("--list-models");
  EXPECT_EQ(l.code, 0);
  EXPECT_NE(l.out.find("resnet101"), std::string::npos);
  EXPECT_NE(l.out.find("gpt2-xl"), std::string::npos);
}

// --precision fp16 --gpu A100: one A100's measured-based rate, and 2-byte gradients (half the
// bytes of fp32 per step).
TEST(Cli, PrecisionSetsRateAndGradientBytes) {
  Outcome fp16 = run_hvdbench("--model bert-large --gpu A100 --precision fp16 --steps 1 --warmup 0 -q");
  Outcome fp32 = run_hvdbench("--model bert-large --gpu A100 --steps 1 --warmup 0 -q");
  ASSERT_EQ(fp16.code, 0) << fp16.err;
  ASSERT_EQ(fp32.code, 0) << fp32.err;
  auto mib = [](const std::string& out) {
    const auto at = out.find("calls, ");
    return at == std::string::npos ? 0.0 : std::stod(out.substr(at + 7));
  };
  ASSERT_GT(mib(fp32.out), 0) << fp32.out;
  EXPECT_NEAR(mib(fp16.out), mib(fp32.out) / 2, 0.1) << fp16.out;
  const auto rate = [](const std::string& out) {
    const auto at = out.find("np=1: ");
    return at == std::string::npos ? 0.0 : std::stod(out.substr(at + 6));
  };
  EXPECT_NEAR(rate(fp16.out), 850.7 * 152 / 301, 0.05 * 850.7 * 152 / 301) << fp16.out;
}

TEST(Cli, InProcessModelRunWritesTheReport) {
  const std::string report = ::testing::TempDir() + "hvdbench_np1.json";
  std::remove(report.c_str());
  Outcome o = run_hvdbench(std::string("--model ") + HVD_SOURCE_DIR +
                           "/libs/workloads/examples/tiny_mlp.json --compute-scale 50 --steps 3 "
                           "--warmup 1 --report " + report);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("tiny-mlp"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("images/s"), std::string::npos) << o.out;
  const std::string json = slurp(report);
  EXPECT_NE(json.find("\"images_per_sec\""), std::string::npos);
  EXPECT_NE(json.find("\"scaling_efficiency\": 1.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"op\": \"allreduce\""), std::string::npos);
  const std::string csv = slurp(::testing::TempDir() + "hvdbench_np1.csv");
  EXPECT_EQ(csv.rfind("model,np,batch_size", 0), 0u) << csv;
}

// --device gpu where it cannot run: one line naming the reason, exit 2 when this build
// has no NCCL backend, 1 when the machine has no usable GPU (see docs/nccl.md); no crash,
// no mpirun noise (-np 2 on this host is refused before mpirun starts).
TEST(Cli, DeviceGpuWithoutAGpuFailsWithOneLine) {
  const hvd::bench::GpuVerdict v = hvd::bench::check_gpu_here();
  if (v.exit_code == 0) GTEST_SKIP() << "a GPU is usable here: the no-GPU path cannot run";
  const std::string why = hvd::bench::built_with_nccl()
                              ? "--device gpu: the NCCL backend needs a GPU: "
                              : "--device gpu: this hvdbench was built without the NCCL backend";
  EXPECT_EQ(v.exit_code, hvd::bench::built_with_nccl() ? 1 : 2);
  for (const std::string& args :
       std::vector<std::string>{"--device gpu --collective allreduce -np 1 -b 1M -e 4M --check",
        "--device gpu --collective allgather -b 1K -e 4K", "--device gpu --model resnet50",
        "--device gpu --collective allreduce -np 2 -b 1M -e 4M",
        "--device gpu --calibrate " + ::testing::TempDir() + "hvdbench_gpu_calibration.json"}) {
    Outcome o = run_hvdbench(args);
    EXPECT_EQ(o.code, v.exit_code) << args << "\n" << o.err;
    EXPECT_EQ(lines(o.err), 1) << args << "\n" << o.err;
    EXPECT_EQ(o.err, "hvdbench: " + v.reason + "\n") << args;
    EXPECT_NE(o.err.find(why), std::string::npos) << args << "\n" << o.err;
    EXPECT_EQ(o.out, "") << args;
  }
}

// Bad --device values are bad input whatever the machine has.
TEST(Cli, UnknownDeviceIsBadInput) {
  expect_bad_input("--collective allreduce --device tpu", "expected cpu or gpu");
  expect_bad_input("--model resnet50 --device cuda", "unknown device 'cuda'");
}

}  // namespace
