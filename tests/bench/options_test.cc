// hvdbench option parsing, size sweeps and the mpirun command line.
#include <gtest/gtest.h>

#include <algorithm>

#include "launcher.h"
#include "options.h"

namespace hvd::bench {
namespace {

ParseResult parse(std::vector<const char*> args, Options* o) {
  args.insert(args.begin(), "hvdbench");
  return parse_options(static_cast<int>(args.size()), args.data(), o);
}

std::string error_of(std::vector<const char*> args) {
  Options o;
  ParseResult r = parse(std::move(args), &o);
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.message;
  return r.message;
}

TEST(Options, HorovodrunSpellingsAndKnobs) {
  Options o;
  ParseResult r = parse({"--model", "resnet101", "-np", "8", "--fusion-threshold-mb", "64",
                         "--cycle-time-ms", "5", "--cache-capacity", "0", "--hierarchical-allreduce",
                         "--timeline-filename", "/tmp/t.json", "--timeline-mark-cycles",
                         "--autotune", "--allreduce-algorithm", "rhd", "--log-level", "info",
                         "--ranks-per-node", "4"},
                        &o);
  ASSERT_LT(r.exit_code, 0) << r.message;
  EXPECT_EQ(o.model, "resnet101");
  EXPECT_EQ(o.np, 8);
  EXPECT_TRUE(o.np_given);
  EXPECT_EQ(o.knob_env.at("HVD_FUSION_THRESHOLD"), std::to_string(64LL << 20));
  EXPECT_EQ(o.knob_env.at("HVD_CYCLE_TIME"), "5");
  EXPECT_EQ(o.knob_env.at("HVD_CACHE_CAPACITY"), "0");
  EXPECT_EQ(o.knob_env.at("HVD_HIERARCHICAL_ALLREDUCE"), "1");
  EXPECT_EQ(o.knob_env.at("HVD_TIMELINE"), "/tmp/t.json");
  EXPECT_EQ(o.knob_env.at("HVD_TIMELINE_MARK_CYCLES"), "1");
  EXPECT_EQ(o.knob_env.at("HVD_AUTOTUNE"), "1");
  EXPECT_EQ(o.knob_env.at("HVD_ALLREDUCE_ALGORITHM"), "rhd");
  EXPECT_EQ(o.knob_env.at("HVD_LOG_LEVEL"), "info");
  EXPECT_EQ(o.knob_env.at("HVD_RANKS_PER_NODE"), "4");
}

TEST(Options, CollectiveModeSizes) {
  Options o;
  ParseResult r = parse({"--collective", "reducescatter", "-b", "8", "-e", "256M", "-f", "4", "--dtype",
                         "float16", "--op", "max", "--check", "-n", "3", "-w", "1",
                         "--algorithm", "direct", "--rounds", "5"},
                        &o);
  ASSERT_LT(r.exit_code, 0) << r.message;
  EXPECT_EQ(o.min_bytes, 8);
  EXPECT_EQ(o.max_bytes, 256LL << 20);
  EXPECT_EQ(o.step_factor, 4);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.warmup_iters, 1);
  EXPECT_EQ(o.rounds, 5);
  EXPECT_EQ(o.knob_env.at("HVD_ALLREDUCE_ALGORITHM"), "direct");
}

TEST(Options, BadInputIsOneClearMessage) {
  EXPECT_NE(error_of({"--model", "resnet50", "-np", "0"}).find("-np must be at least 1"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allreduce", "-b", "1M", "-e", "4K"}).find("larger than"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allreduce", "-f", "1"}).find("from 2 to 2^30"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allgather", "--op", "max"}).find("--op: allgather does not reduce"),
            std::string::npos);
  EXPECT_NE(error_of({"--model", "resnet50", "--ensemble", "--allreduce-post-accumulation"})
                .find("an ensemble (--ensemble) has no gradient allreduce to postpone"),
            std::string::npos);
  EXPECT_NE(error_of({"--model", "resnet50", "--report", ""}).find("--report: an empty path"), std::string::npos);
  EXPECT_NE(error_of({"--collective", "allreduce", "-b", "12Q"}).find("not a size"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allreduce", "--rounds", "0"}).find("--rounds must be at least 1"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allscatter"}).find("unknown collective"), std::string::npos);
  EXPECT_NE(error_of({"--model", "resnet50", "--ranks-per-node", "0"}).find("--ranks-per-node must be at least 1"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allreduce", "--dtype", "float8"}).find("unknown dtype"),
            std::string::npos);
  EXPECT_NE(error_of({"--collective", "allreduce", "--op", "mean"}).find("unknown op"),
            std::string::npos);
  EXPECT_NE(error_of({"--model", "resnet50", "--allreduce-algorithm", "magic"}).find("magic"),
            std::string::npos);
  EXPECT_NE(error_of({}).find("nothing to run"), std::string::npos);
  EXPECT_NE(error_of({"--model", "x", "--collective", "allreduce"}).find("two modes"),
            std::string::npos);
  EXPECT_FALSE(error_of({"--model", "resnet50", "--steps", "many"}).empty());
  EXPECT_FALSE(error_of({"--bogus"}).empty());
}

// A flag of another mode is one error naming it, never silently ignored.
TEST(Options, FlagsOfAnotherModeAreRejected) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--collective", "allreduce", "--accumulation-steps", "4"}, "--accumulation-steps: applies to --model only"},
      {{"--collective", "allreduce", "--optimizer", "lamb"}, "--optimizer: applies to --model only"},
      {{"--collective", "allreduce", "--allreduce-post-accumulation"},
       "--allreduce-post-accumulation: applies to --model only"},
      {{"--collective", "allreduce", "--report", "r.json"}, "--report: applies to --model only"},
      {{"--model", "resnet50", "-b", "8"}, "--minbytes: applies to --collective only"},
      {{"--model", "resnet50", "--check"}, "--check: applies to --collective only"},
      {{"--calibrate", "c.json", "--steps", "3"}, "--steps: applies to --model only"},
      {{"--calibrate", "c.json", "--dtype", "float16"}, "--dtype: applies to --collective only"},
  };
  for (const auto& [args, want] : cases) EXPECT_EQ(error_of(args), want);
  Options o;  // what a mode shares with another stays accepted
  EXPECT_LT(parse({"--calibrate", "c.json", "-n", "2", "-w", "0", "-q"}, &o).exit_code, 0);
  EXPECT_LT(parse({"--collective", "allreduce", "--timeline-filename", "t.json", "-n", "2"}, &o).exit_code, 0);
}

// The holders' "not given" values (0, -1) given on the command line are errors, never the
// defaults (--batch-size 0 and --fusion-threshold-mb -1 must not pass silently).
TEST(Options, GivenSentinelValuesAreRejected) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--model", "resnet50", "--batch-size", "0"}, "--batch-size must be at least 1 (got 0)"},
      {{"--model", "resnet50", "--batch-size", "-2"}, "--batch-size must be at least 1 (got -2)"},
      {{"--model", "resnet50", "--fusion-threshold-mb", "-1"},
       "--fusion-threshold-mb must be a number of MiB in [0, 1048576] (got -1)"},
      {{"--model", "resnet50", "--fusion-threshold-mb", "inf"},
       "--fusion-threshold-mb must be a number of MiB in [0, 1048576] (got inf)"},
      {{"--collective", "allreduce", "--cycle-time-ms", "-1"},
       "--cycle-time-ms must be a finite number >= 0 (got -1)"},
      {{"--model", "resnet50", "--cache-capacity", "-1"}, "--cache-capacity must be >= 0 (got -1)"},
      {{"--model", "resnet50", "--ranks-per-node", "-1"},
       "--ranks-per-node must be at least 1 (got -1)"},
      {{"--model", "resnet50", "--single-rate", "0"},
       "--single-rate must be a finite number > 0 (got 0)"},
      {{"--model", "resnet50", "--compute-scale", "inf"},
       "--compute-scale must be a finite number > 0 (got inf)"},
      {{"--model", "resnet50", "--optimizer-ms", "nan"},
       "--optimizer-ms must be a number of milliseconds in [0, 86400000] (got nan)"},
      {{"--calibrate", "c.json", "-w", "-1"}, "-w/--warmup-iters must be >= 0"},
  };
  for (const auto& [args, want] : cases) EXPECT_EQ(error_of(args), want);
  Options o;  // not given: the defaults stand
  ASSERT_LT(parse({"--model", "resnet50"}, &o).exit_code, 0);
  EXPECT_EQ(o.batch_size, 0);
  EXPECT_EQ(o.knob_env.count("HVD_FUSION_THRESHOLD"), 0u);
  ASSERT_LT(parse({"--model", "resnet50", "--fusion-threshold-mb", "0", "--batch-size", "1"}, &o)
                .exit_code, 0);
  EXPECT_EQ(o.knob_env.at("HVD_FUSION_THRESHOLD"), "0");
  EXPECT_EQ(o.batch_size, 1);
  EXPECT_EQ(o.accumulation_steps, 1);
  ASSERT_LT(parse({"--model", "resnet50", "--accumulation-steps", "8"}, &o).exit_code, 0);
  EXPECT_EQ(o.accumulation_steps, 8);
  EXPECT_NE(error_of({"--model", "resnet50", "--accumulation-steps", "0"}).find("--accumulation-steps"), std::string::npos);
  EXPECT_FALSE(o.post_accumulation);
  ASSERT_LT(parse({"--model", "bert-large", "--accumulation-steps", "4", "--allreduce-post-accumulation"}, &o).exit_code, 0);
  EXPECT_TRUE(o.post_accumulation);
  EXPECT_EQ(o.optimizer, "sgd");
  ASSERT_LT(parse({"--model", "bert-large", "--optimizer", "lamb"}, &o).exit_code, 0);
  EXPECT_EQ(o.optimizer, "lamb");
  EXPECT_NE(error_of({"--model", "bert-large", "--optimizer", "adagrad"}).find("--optimizer"), std::string::npos);
}

TEST(Options, HelpExitsZero) {
  Options o;
  ParseResult r = parse({"--help"}, &o);
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_NE(r.message.find("Examples"), std::string::npos);
  EXPECT_NE(r.message.find("--fusion-threshold-mb"), std::string::npos);
}

TEST(Sizes, ParseLikeNcclTests) {
  EXPECT_EQ(parse_size("8"), 8);
  EXPECT_EQ(parse_size("4K"), 4096);
  EXPECT_EQ(parse_size("4k"), 4096);
  EXPECT_EQ(parse_size("256M"), 256LL << 20);
  EXPECT_EQ(parse_size("1G"), 1LL << 30);
  EXPECT_EQ(parse_size("64MiB"), 64LL << 20);
  EXPECT_FALSE(parse_size("x").has_value());
  EXPECT_FALSE(parse_size("-4K").has_value());
  EXPECT_EQ(size_sweep(4096, 1 << 20, 2).size(), 9u);
  EXPECT_EQ(size_sweep(8, 8, 2), (std::vector<int64_t>{8}));
  EXPECT_EQ(size_sweep(3, 100, 10), (std::vector<int64_t>{3, 30}));
}

TEST(Launcher, MpirunCommandLine) {
  Options o;
  o.np = 8;
  auto cmd = mpirun_command(o, "/bin/hvdbench", {"--model", "resnet50", "-np", "8"}, true, 2);
  auto has = [&](const std::string& s) { return std::find(cmd.begin(), cmd.end(), s) != cmd.end(); };
  EXPECT_TRUE(has("--allow-run-as-root"));
  EXPECT_TRUE(has("--oversubscribe"));
  EXPECT_TRUE(has("--bind-to"));
  EXPECT_EQ(cmd[1], "-np");
  EXPECT_EQ(cmd[2], "8");
  EXPECT_EQ(cmd[cmd.size() - 5], "/bin/hvdbench");
  o.hosts = "a:4,b:4";
  cmd = mpirun_command(o, "/bin/hvdbench", {}, false, 2);
  EXPECT_FALSE(has("--allow-run-as-root"));
  EXPECT_FALSE(has("--oversubscribe"));
  EXPECT_TRUE(has("a:4,b:4"));
  // Other hosts get the environment, as horovodrun forwards it; MPI's own stays home.
  setenv("PYTHONPATH", "/somewhere", 1);
  setenv("OMPI_MCA_foo", "1", 1);
  cmd = mpirun_command(o, "/bin/hvdbench", {}, false, 2);
  auto forwards = [&](const std::string& var) {
    for (size_t i = 0; i + 1 < cmd.size(); ++i)
      if (cmd[i] == "-x" && cmd[i + 1] == var) return true;
    return false;
  };
  EXPECT_TRUE(forwards("PYTHONPATH"));
  EXPECT_FALSE(forwards("OMPI_MCA_foo"));
  o.hosts.clear();
  cmd = mpirun_command(o, "/bin/hvdbench", {}, false, 2);
  EXPECT_FALSE(forwards("PYTHONPATH"));  // local ranks inherit it
  unsetenv("OMPI_MCA_foo");
}

TEST(Options, DeviceDefaultsToCpuAndAcceptsGpuInBothModes) {
  Options o;
  ASSERT_LT(parse({"--collective", "allreduce"}, &o).exit_code, 0);
  EXPECT_EQ(o.device, "cpu");
  Options c;
  ParseResult r =
      parse({"--collective", "allreduce", "--device", "gpu", "-b", "1M", "-e", "4M"}, &c);
  ASSERT_LT(r.exit_code, 0) << r.message;
  EXPECT_EQ(c.device, "gpu");
  EXPECT_EQ(c.min_bytes, 1LL << 20);
  Options m;
  r = parse({"--model", "resnet50", "--device=gpu", "-np", "2"}, &m);
  ASSERT_LT(r.exit_code, 0) << r.message;
  EXPECT_EQ(m.device, "gpu");
  EXPECT_EQ(m.np, 2);
  Options e;
  r = parse({"--model", "resnet50", "--device", "cpu"}, &e);
  ASSERT_LT(r.exit_code, 0) << r.message;
  EXPECT_EQ(e.device, "cpu");
}

TEST(Options, UnknownOrMissingDeviceIsBadInput) {
  EXPECT_EQ(error_of({"--collective", "allreduce", "--device", "tpu"}),
            "--device: unknown device 'tpu'; expected cpu or gpu");
  EXPECT_EQ(error_of({"--model", "resnet50", "--device", "GPU"}),
            "--device: unknown device 'GPU'; expected cpu or gpu");
  EXPECT_EQ(error_of({"--model", "resnet50", "--device", ""}),
            "--device: unknown device ''; expected cpu or gpu");
  EXPECT_NE(error_of({"--model", "resnet50", "--device"}).find("device"), std::string::npos);
}

}  // namespace
}  // namespace hvd::bench
