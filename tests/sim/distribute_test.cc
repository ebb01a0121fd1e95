// Sweeps beyond one machine (distribute.h): the job assignment, --shard i/N + --merge, and
// (DistributeMpi.*, labels sim and mpi) the same sweep spread over mpirun -np 2 and 3. Every
// spread run must write the single run's report, CSV and table byte for byte.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "hvd/sim/distribute.h"
#include "read_whole_file.h"

namespace fs = std::filesystem;
using hvd::sim::SweepJob;

namespace {

// A small sweep that runs in well under a second: np 1 to 4 on this machine's scenario.
const std::string kSweep =
    std::string(HVD_SOURCE_DIR) + "/scenarios/localhost.json --set 'sweep.np=[1,2,3,4]' -q";

struct Ran {
  int code = -1;
  std::string out;  // stdout and stderr
};

Ran run(const std::string& cmd) {
  Ran r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string hvdsim() { return HVDSIM_EXE; }

class Distribute : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hvdsim_dist_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The reference: one hvdsim, the whole sweep.
    const Ran one = run(hvdsim() + " " + kSweep + " --report " + path("single.json") + " > " + path("single.txt"));
    ASSERT_EQ(one.code, 0) << one.out;
    ASSERT_FALSE(slurp(dir_ / "single.json").empty());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The report, CSV and table of `stem` equal the single run's.
  void expect_single(const std::string& stem) const {
    EXPECT_EQ(slurp(dir_ / (stem + ".json")), slurp(dir_ / "single.json")) << stem;
    EXPECT_EQ(slurp(dir_ / (stem + ".csv")), slurp(dir_ / "single.csv")) << stem;
    EXPECT_EQ(slurp(dir_ / (stem + ".txt")), slurp(dir_ / "single.txt")) << stem;
  }
  // Writes shards 0..n-1 of n (`launch` in front of hvdsim: "" or mpirun ...).
  void write_shards(int n, const std::string& launch = "") const {
    for (int i = 0; i < n; ++i) {
      const std::string id = std::to_string(i) + "_" + std::to_string(n);
      const Ran r = run(launch + hvdsim() + " " + kSweep + " --shard " + std::to_string(i) + "/" +
                        std::to_string(n) + " --report " + path("part" + id + ".json"));
      ASSERT_EQ(r.code, 0) << r.out;
    }
  }
  fs::path dir_;
};

}  // namespace

TEST(DistributeAssign, DeterministicLargestFirstToTheLeastLoaded) {
  std::vector<SweepJob> jobs;
  for (int np : {1, 2, 3, 4, 8}) jobs.push_back({0, "m", np, true});
  // Costs np * bit_width(np): 1, 4, 6, 12, 32. Largest first: np 8 -> bin 0, 4 -> 1, 3 -> 2,
  // 2 -> 2 (loads 32, 12, 6), 1 -> 2 (loads 32, 12, 10).
  EXPECT_EQ(hvd::sim::assign_jobs(jobs, 3), (std::vector<int>{2, 2, 2, 1, 0}));
  EXPECT_EQ(hvd::sim::assign_jobs(jobs, 1), (std::vector<int>(5, 0)));
  // More bins than jobs: each job alone, the rest empty.
  const std::vector<int> many = hvd::sim::assign_jobs(jobs, 8);
  EXPECT_EQ(many, (std::vector<int>{4, 3, 2, 1, 0}));
}

TEST(DistributeAssign, ShardSpecIsZeroBasedAndBounded) {
  int i = -1, n = -1;
  ASSERT_TRUE(hvd::sim::parse_shard("0/3", &i, &n).ok());
  EXPECT_EQ(i, 0);
  EXPECT_EQ(n, 3);
  ASSERT_TRUE(hvd::sim::parse_shard("2/3", &i, &n).ok());
  EXPECT_EQ(i, 2);
  for (const char* bad : {"3/3", "1/0", "-1/3", "x/2", "2", "/3", "1/", "1/2/3", "0/100001", "99999999999/3", ""})
    EXPECT_FALSE(hvd::sim::parse_shard(bad, &i, &n).ok()) << bad;
}

TEST_F(Distribute, ThreeShardsMergedAreTheSingleRunByteForByte) {
  write_shards(3);
  // In any order.
  const Ran m = run(hvdsim() + " --merge " + path("part2_3.json") + " " + path("part0_3.json") + " " +
                    path("part1_3.json") + " --report " + path("merged.json") + " > " + path("merged.txt"));
  ASSERT_EQ(m.code, 0) << m.out;
  expect_single("merged");
}

TEST_F(Distribute, BadShardIsOneLineAndExitCode2) {
  for (const std::string bad : {"3/3", "x/2", "1/0", "-1/3", "2", "''"}) {
    const Ran r = run(hvdsim() + " " + kSweep + " --shard " + bad + " --report " + path("x.json"));
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.out.find("hvdsim: --shard: '"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("is not i/N with 0 <= i < N"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  const Ran no_report = run(hvdsim() + " " + kSweep + " --shard 0/2");
  EXPECT_EQ(no_report.code, 2);
  EXPECT_EQ(no_report.out, "hvdsim: --shard: needs --report (the partial report to merge)\n");
  EXPECT_FALSE(fs::exists(dir_ / "x.json"));
}

TEST_F(Distribute, MergeRefusesMissingRepeatedAndForeignShards) {
  write_shards(3);
  const std::string p0 = path("part0_3.json"), p1 = path("part1_3.json"), p2 = path("part2_3.json");
  struct Case {
    std::string args, says;
  };
  // Another sweep (np 1, 2, 4) and another split (2 shards) of the same one.
  ASSERT_EQ(run(hvdsim() + " " + std::string(HVD_SOURCE_DIR) +
                "/scenarios/localhost.json --set 'sweep.np=[1,2,4]' -q --shard 1/3 --report " + path("other.json"))
                .code,
            0);
  ASSERT_EQ(run(hvdsim() + " " + kSweep + " --shard 1/2 --report " + path("half.json")).code, 0);
  const std::vector<Case> cases = {
      {p0 + " " + p1, "hvdsim: --merge: shard 2/3 missing\n"},
      {p0, "hvdsim: --merge: shards 1/3, 2/3 missing\n"},
      {p0 + " " + p1 + " " + p1 + " " + p2, "hvdsim: --merge: " + p1 + " and " + p1 + " are both shard 1/3\n"},
      {p0 + " " + path("other.json") + " " + p2,
       "hvdsim: --merge: " + path("other.json") + " and " + p0 + " are shards of different sweeps"},
      {p0 + " " + path("half.json"),
       "hvdsim: --merge: " + path("half.json") + " is shard 1/2 but " + p0 + " is shard 0/3"},
      {path("single.json"), "hvdsim: " + path("single.json") + ": kind: missing is not \"hvdsim shard\""},
      {path("nothing.json"), "hvdsim: --merge: '" + path("nothing.json") + "' does not exist\n"},
      {dir_.string(), "hvdsim: --merge: '" + dir_.string() + "' is a directory, not a file\n"},
      {path("fifo"), "hvdsim: --merge: '" + path("fifo") + "' is not a regular file\n"},
  };
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  for (const Case& c : cases) {
    const Ran r = run(hvdsim() + " --merge " + c.args + " --report " + path("out.json"));
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind(c.says, 0), 0u) << c.args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.json"));
}

// hvdsim --seeds 3 with GPU-speed variation: 3 simulations per (model, np), folded into
// one record with a band, and a published point; spread or sharded, still the single run's
// report.
const std::string kSeeds =
    " --seeds 3 --set cluster.gpu_speed_cv=0.05"
    R"( --set 'reference=[{"model": "resnet50", "np": 4, "scaling_efficiency": 0.9, "source": "a test"}]')";

TEST_F(Distribute, SeedsShardedAndMergedAreTheSingleRunByteForByte) {
  const Ran one = run(hvdsim() + " " + kSweep + kSeeds + " --report " + path("seeds.json") + " > " + path("seeds.txt"));
  ASSERT_EQ(one.code, 0) << one.out;
  const std::string report = slurp(dir_ / "seeds.json");
  EXPECT_NE(report.find("\"seeds\": 3"), std::string::npos) << report;
  EXPECT_NE(report.find("\"scaling_efficiency_lo\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"source\": \"a test\""), std::string::npos) << report;
  EXPECT_NE(slurp(dir_ / "seeds.txt").find("published  90.0% ("), std::string::npos) << slurp(dir_ / "seeds.txt");
  for (int i = 0; i < 3; ++i) {
    const Ran r = run(hvdsim() + " " + kSweep + kSeeds + " --shard " + std::to_string(i) + "/3 --report " +
                      path("sp" + std::to_string(i) + ".json"));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  const Ran m = run(hvdsim() + " --merge " + path("sp2.json") + " " + path("sp0.json") + " " + path("sp1.json") +
                    " --report " + path("merged.json") + " > " + path("merged.txt"));
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_EQ(slurp(dir_ / "merged.json"), report);
  EXPECT_EQ(slurp(dir_ / "merged.csv"), slurp(dir_ / "seeds.csv"));
  EXPECT_EQ(slurp(dir_ / "merged.txt"), slurp(dir_ / "seeds.txt"));
  // A shard of another seed count is another sweep.
  ASSERT_EQ(run(hvdsim() + " " + kSweep + " --seeds 2 --set cluster.gpu_speed_cv=0.05 --shard 1/3 --report " +
                path("two.json")).code, 0);
  const Ran mixed = run(hvdsim() + " --merge " + path("sp0.json") + " " + path("two.json") + " " + path("sp2.json") +
                        " --report " + path("out.json"));
  EXPECT_EQ(mixed.code, 2);
  EXPECT_EQ(mixed.out.rfind("hvdsim: --merge: " + path("two.json") + " and " + path("sp0.json") +
                            " are shards of different sweeps", 0), 0u) << mixed.out;
}

// A published point of a model given as a trace file: the shards carry it under the name
// the records have (the trace's own, "tiny-mlp"), and --merge takes it as it is.
TEST_F(Distribute, MergeKeepsThePublishedPointOfATraceFileModel) {
  const std::string trace = std::string(HVD_SOURCE_DIR) + "/libs/workloads/examples/tiny_mlp.json";
  const std::string args = " " + std::string(HVD_SOURCE_DIR) + "/scenarios/localhost.json --set 'sweep.np=[1,2]' -q" +
                           " --set workload.model=" + trace + " --set 'reference=[{\"model\": \"" + trace +
                           "\", \"np\": 2, \"scaling_efficiency\": 0.9, \"source\": \"a test\"}]'";
  ASSERT_EQ(run(hvdsim() + args + " --report " + path("t.json") + " > " + path("t.txt")).code, 0);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run(hvdsim() + args + " --shard " + std::to_string(i) + "/2 --report " + path("tp" + std::to_string(i) + ".json")).code, 0);
  const Ran m = run(hvdsim() + " --merge " + path("tp0.json") + " " + path("tp1.json") + " --report " +
                    path("tm.json") + " > " + path("tm.txt"));
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_NE(slurp(dir_ / "t.json").find("\"model\": \"tiny-mlp\""), std::string::npos);
  EXPECT_NE(slurp(dir_ / "t.txt").find("published  90.0%"), std::string::npos) << slurp(dir_ / "t.txt");
  EXPECT_EQ(slurp(dir_ / "tm.json"), slurp(dir_ / "t.json"));
  EXPECT_EQ(slurp(dir_ / "tm.txt"), slurp(dir_ / "t.txt"));
}

// --- labels sim and mpi: mpirun -np 2 and 3 on this machine (2 cores: oversubscribed) ----

namespace {
std::string mpirun(int np) {
  return "mpirun -np " + std::to_string(np) + " --oversubscribe --allow-run-as-root ";
}
}  // namespace

TEST_F(Distribute, MpiNp2AndNp3WriteTheSingleRunReport) {
  for (int np : {2, 3}) {
    const std::string stem = "mpi" + std::to_string(np);
    const Ran r = run(mpirun(np) + hvdsim() + " " + kSweep + " --report " + path(stem + ".json") + " > " +
                      path(stem + ".txt"));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out, "") << "ranks other than 0 print nothing, -q silences rank 0's progress";
    expect_single(stem);
  }
  // Shards under MPI too: 2 ranks per shard, 3 shards, merged.
  write_shards(3, mpirun(2));
  const Ran m = run(hvdsim() + " --merge " + path("part0_3.json") + " " + path("part1_3.json") + " " +
                    path("part2_3.json") + " --report " + path("merged.json") + " > " + path("merged.txt"));
  ASSERT_EQ(m.code, 0) << m.out;
  expect_single("merged");
}

TEST_F(Distribute, MpiSeedsWriteTheSingleRunReport) {
  const Ran one = run(hvdsim() + " " + kSweep + kSeeds + " --report " + path("seeds.json") + " > " + path("seeds.txt"));
  ASSERT_EQ(one.code, 0) << one.out;
  const Ran r = run(mpirun(3) + hvdsim() + " " + kSweep + kSeeds + " --report " + path("mpi.json") + " > " +
                    path("mpi.txt"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(slurp(dir_ / "seeds.json").find("\"images_per_sec_hi\""), std::string::npos);
  EXPECT_EQ(slurp(dir_ / "mpi.json"), slurp(dir_ / "seeds.json"));
  EXPECT_EQ(slurp(dir_ / "mpi.csv"), slurp(dir_ / "seeds.csv"));
  EXPECT_EQ(slurp(dir_ / "mpi.txt"), slurp(dir_ / "seeds.txt"));
}

TEST_F(Distribute, MpiAFailureOnAnyRankIsOneLineAndEveryRankExitsNonZero) {
  // The np=2 run cannot write its timeline (a directory is in the way). With 3 ranks it is
  // simulated by rank 2; rank 0 prints the single run's line.
  fs::create_directories(dir_ / "tl" / "resnet50_np2.json");
  const std::string args = " " + kSweep + " --timeline-dir " + path("tl");
  const Ran one = run(hvdsim() + args);
  ASSERT_EQ(one.code, 2) << one.out;
  const Ran r = run(mpirun(3) + hvdsim() + args);
  EXPECT_NE(r.code, 0);
  size_t lines = 0;
  for (size_t p = r.out.find("hvdsim: "); p != std::string::npos; p = r.out.find("hvdsim: ", p + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << r.out;
  EXPECT_NE(r.out.find(one.out), std::string::npos) << r.out;  // the same line
  // A bad scenario, seen by every rank: one line, no hang.
  const Ran bad = run(mpirun(3) + hvdsim() + " " + path("nothing.json"));
  EXPECT_NE(bad.code, 0);
  EXPECT_EQ(bad.out.find("hvdsim: "), bad.out.rfind("hvdsim: ")) << bad.out;
  EXPECT_NE(bad.out.find("nothing.json"), std::string::npos) << bad.out;
}
