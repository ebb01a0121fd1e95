// The fuzzers' seed argvs (bench/hvdbench/fuzz/seeds.txt for hvdbench, hvdrun_seeds.txt for
// hvdrun) through the same parsers and the same checks the fuzzers make, in the ordinary
// suite: each line parses to a plan, or gives help, or gives one error line with exit code
// 2. A few lines are bad input on purpose and must be refused as such.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "hvdrun_args.h"
#include "options.h"

namespace {

// One seed line as argv: words split at blanks, "double quotes" keep blanks inside.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if ((c == ' ' || c == '\t') && !quoted) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur.push_back(c);
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

std::vector<std::vector<std::string>> seeds(const std::string& file) {
  std::ifstream f(std::string(HVD_SOURCE_DIR) + "/bench/hvdbench/fuzz/" + file);
  EXPECT_TRUE(f) << file;
  std::vector<std::vector<std::string>> out;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(words(line));
  return out;
}

std::vector<const char*> argv_of(const std::string& prog, const std::vector<std::string>& args,
                                 std::vector<std::string>* keep) {
  *keep = {prog};
  keep->insert(keep->end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : *keep) argv.push_back(a.c_str());
  return argv;
}

TEST(CliSeeds, EveryHvdbenchSeedParsesOrFailsInOneLine) {
  const auto all = seeds("seeds.txt");
  ASSERT_GE(all.size(), 5u);
  for (const auto& args : all) {
    std::vector<std::string> keep;
    auto argv = argv_of("hvdbench", args, &keep);
    hvd::bench::Options o;
    const hvd::bench::ParseResult r = hvd::bench::parse_options(static_cast<int>(argv.size()), argv.data(), &o);
    if (r.exit_code == hvd::bench::kExitBadInput) {
      EXPECT_FALSE(r.message.empty());
      EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
    } else {
      EXPECT_LE(r.exit_code, 0) << r.message;
    }
  }
}

TEST(CliSeeds, EveryHvdrunSeedPlansOrFailsInOneLine) {
  using Plan = hvd::bench::HvdrunPlan;
  const auto all = seeds("hvdrun_seeds.txt");
  ASSERT_GE(all.size(), 10u);
  int refused = 0;
  for (const auto& args : all) {
    std::vector<std::string> keep;
    auto argv = argv_of("hvdrun", args, &keep);
    const Plan p = hvd::bench::plan_hvdrun(static_cast<int>(argv.size()), argv.data());
    if (p.mode == Plan::Mode::kExit && p.exit_code == hvd::bench::kExitBadInput) {
      ++refused;
      EXPECT_FALSE(p.message.empty());
      EXPECT_EQ(p.message.find('\n'), std::string::npos) << p.message;
    } else if (p.mode == Plan::Mode::kExit) {
      EXPECT_EQ(p.exit_code, hvd::bench::kExitOk);
      EXPECT_FALSE(p.out.empty());
    } else {
      EXPECT_FALSE(p.cmd.empty());
      EXPECT_GE(p.o.np, 1);
    }
  }
  EXPECT_EQ(refused, 3);  // -np 0, --frobnicate, -p
}

TEST(HvdrunPlan, ModesAndRefusals) {
  using Plan = hvd::bench::HvdrunPlan;
  auto plan = [](std::vector<std::string> args) {
    std::vector<std::string> keep;
    auto argv = argv_of("hvdrun", args, &keep);
    return hvd::bench::plan_hvdrun(static_cast<int>(argv.size()), argv.data());
  };
  Plan p = plan({"-np", "3", "--tcp", "prog", "-x"});
  EXPECT_EQ(p.mode, Plan::Mode::kTcp);
  EXPECT_EQ(p.o.np, 3);
  EXPECT_EQ(p.cmd, (std::vector<std::string>{"prog", "-x"}));  // the command keeps its own flags
  p = plan({"-np", "2", "--min-np", "1", "--host-discovery-script", "./h.sh", "prog"});
  EXPECT_EQ(p.mode, Plan::Mode::kElastic);
  EXPECT_EQ(p.elastic.min_np, 1);
  p = plan({"-np", "2", "--min-np", "1", "prog"});
  EXPECT_EQ(p.exit_code, hvd::bench::kExitBadInput);
  EXPECT_NE(p.message.find("--min-np is for elastic mode"), std::string::npos) << p.message;
  p = plan({"-np", "2"});
  EXPECT_NE(p.message.find("no command to run"), std::string::npos) << p.message;
  p = plan({"-np", "2", "--tcp", "--mpi-args", "-v", "prog"});
  EXPECT_NE(p.message.find("--mpi-args is for mpirun"), std::string::npos) << p.message;
  // The message quotes the plan's own command (the fuzzer found it read after the plan
  // was moved out: undefined behaviour under clang).
  p = plan({"-p", "12345", "-np", "2", "prog"});
  EXPECT_NE(p.message.find("unknown option '-p'"), std::string::npos) << p.message;
  // horovodrun's other spellings and flags.
  p = plan({"--num-proc", "3", "-hostfile", "/nonexistent", "prog"});
  EXPECT_NE(p.message.find("--hostfile: cannot read '/nonexistent'"), std::string::npos) << p.message;
  p = plan({"--num-proc", "3", "--mpi", "--no-stall-check", "--stall-check-shutdown-time-seconds", "5",
            "--autotune-log-file", "a.csv", "prog"});
  EXPECT_EQ(p.mode, Plan::Mode::kMpi);
  EXPECT_EQ(p.o.np, 3);
  EXPECT_EQ(p.o.knob_env["HVD_STALL_CHECK_DISABLE"], "1");
  EXPECT_EQ(p.o.knob_env["HVD_STALL_SHUTDOWN_TIME_SECONDS"], "5");
  EXPECT_EQ(p.o.knob_env["HVD_AUTOTUNE_LOG"], "a.csv");
  p = plan({"--mpi", "--tcp", "prog"});
  EXPECT_NE(p.message.find("--mpi and --tcp/--gloo are exclusive"), std::string::npos) << p.message;
  p = plan({"--autotune-steps-per-sample", "0", "prog"});
  EXPECT_NE(p.message.find("--autotune-steps-per-sample must be at least 1"), std::string::npos) << p.message;
  p = plan({"-v"});
  EXPECT_NE(p.out.find("hvdrun (hvd) "), std::string::npos);
  p = plan({"-cb"});
  EXPECT_NE(p.out.find("Available Frameworks"), std::string::npos);
  p = plan({"--check-build"});
  EXPECT_EQ(p.exit_code, hvd::bench::kExitOk);
  EXPECT_NE(p.out.find("Available Controllers"), std::string::npos);
}

}  // namespace
