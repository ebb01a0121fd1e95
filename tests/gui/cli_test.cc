// Runs the hvdview binary headless: --screenshot, --export-chart, bad input, bad flags.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <QImage>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/synthetic_trace.h"
#include "test_files.h"

namespace hvdview {
namespace {

using testing::DataFile;
using testing::TempPath;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

RunResult RunHvdview(const std::string& args) {
  const std::string out = TempPath("stdout.txt");
  const std::string err = TempPath("stderr.txt");
  const std::string command = "QT_QPA_PLATFORM=offscreen '" + std::string(HVDVIEW_BINARY) + "' " +
                              args + " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadAll(out);
  result.err = ReadAll(err);
  return result;
}

// Lines of stderr written by hvdview itself (Qt may add its own notes).
std::vector<std::string> OwnLines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("hvdview: ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

TEST(Cli, VersionAndHelp) {
  RunResult version = RunHvdview("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("hvdview 0.1.0"), std::string::npos) << version.out;
  RunResult help = RunHvdview("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--screenshot"), std::string::npos);
  EXPECT_NE(help.out.find("--export-chart"), std::string::npos);
}

TEST(Cli, WrongFlagIsOneLineAndExit2) {
  RunResult r = RunHvdview("--frobnicate x.json");
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(OwnLines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos);
  EXPECT_EQ(RunHvdview("--screenshot a.png --size big " + DataFile("runtime_small.json")).exit_code,
            2);
  EXPECT_EQ(
      RunHvdview("--export-chart a.png --chart pie " + DataFile("report_small.json")).exit_code, 2);
}

TEST(Cli, ScreenshotOfTimelines) {
  const std::string png = TempPath("cli_shot.png");
  RunResult r =
      RunHvdview("--screenshot " + png + " --size 1200x700 " + DataFile("runtime_small.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const QImage image(QString::fromStdString(png));
  EXPECT_EQ(image.size(), QSize(1200, 700));
  const std::string svg = TempPath("cli_shot.svg");
  r = RunHvdview("--screenshot " + svg + " " + DataFile("horovod_rank0.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadAll(svg).find("<svg"), std::string::npos);
}

TEST(Cli, ScreenshotOfCompareMode) {
  const std::string png = TempPath("cli_compare.png");
  RunResult r = RunHvdview("--screenshot " + png + " " + DataFile("runtime_small.json") +
                           " --compare " + DataFile("simulated_small.json") + " --align STEP:2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(QImage(QString::fromStdString(png)).isNull());
  r = RunHvdview("--screenshot " + png + " " + DataFile("runtime_small.json") + " --compare " +
                 DataFile("simulated_small.json") + " --align STEP:9");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no occurrence 9 of 'STEP'"), std::string::npos) << r.err;
}

TEST(Cli, ExportChartsFromReports) {
  for (const char* report : {"report_small.json", "report_small.csv"}) {
    const std::string png = TempPath("chart.png");
    RunResult r = RunHvdview("--export-chart " + png + " " + DataFile(report));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(QImage(QString::fromStdString(png)).size(), QSize(1600, 900));
  }
  const std::string svg = TempPath("steptime.svg");
  RunResult r =
      RunHvdview("--export-chart " + svg + " --chart steptime " + DataFile("report_small.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadAll(svg).find("<svg"), std::string::npos);
  r = RunHvdview("--export-chart " + svg + " " + DataFile("runtime_small.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;  // per-rank time in collectives
  r = RunHvdview("--export-chart " + svg + " --chart throughput " + DataFile("runtime_small.json"));
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, CorruptFileExits2NamingFileAndOffset) {
  const std::string png = TempPath("corrupt.png");
  RunResult r = RunHvdview("--screenshot " + png + " " + DataFile("corrupt.json"));
  EXPECT_EQ(r.exit_code, 2);
  const std::vector<std::string> lines = OwnLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("corrupt.json: invalid JSON at byte"), std::string::npos) << lines[0];
  EXPECT_FALSE(QImage(QString::fromStdString(png)).isNull());  // valid part still drawn
}

TEST(Cli, TruncatedEmptyAndMissingFiles) {
  RunResult r = RunHvdview("--screenshot " + TempPath("t.png") + " " + DataFile("truncated.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("truncated.json: truncated at byte"), std::string::npos) << r.err;
  const std::string empty = testing::WriteTempFile("empty.json", "");
  r = RunHvdview("--screenshot " + TempPath("e.png") + " " + empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("empty.json: empty file"), std::string::npos) << r.err;
  r = RunHvdview("--export-chart " + TempPath("e.png") + " " + empty);
  EXPECT_EQ(r.exit_code, 2);
  r = RunHvdview("--screenshot " + TempPath("m.png") + " /nonexistent/trace.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/trace.json: cannot open"), std::string::npos) << r.err;
  const std::string bad_report = testing::WriteTempFile("bad_report.json", "{\"runs\": [{}]}");
  r = RunHvdview("--export-chart " + TempPath("b.png") + " " + bad_report);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("runs[0].model: missing"), std::string::npos) << r.err;
  r = RunHvdview("--screenshot " + TempPath("x.jpg") + " " + DataFile("runtime_small.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unsupported image format"), std::string::npos) << r.err;
}

TEST(Cli, GeneratedMultiRankFilesOpenAsOneView) {
  SyntheticTimelineSpec spec;
  spec.ranks = 1;
  spec.events = 5000;
  const std::string rank0 = TempPath("gen.json");
  WriteSyntheticTimeline(rank0, spec);
  const std::string rank1 = TempPath("gen.rank1.json");
  spec.first_rank = 1;       // rank 1's own file: pid 1
  spec.close_array = false;  // a process killed mid-run: no closing bracket
  WriteSyntheticTimeline(rank1, spec);
  RunResult r = RunHvdview("--screenshot " + TempPath("gen.png") + " " + rank0 + " " + rank1);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}


TEST(Cli, DirectoryIsNamedAsSuch) {
  const std::string dir = TempPath("cli_dir");
  std::filesystem::create_directories(dir);
  RunResult r = RunHvdview("--screenshot " + TempPath("d.png") + " " + dir);
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(OwnLines(r.err).size(), 1u) << r.err;
  EXPECT_EQ(OwnLines(r.err)[0],
            "hvdview: " + dir + ": is a directory, expected a timeline or report file");
  r = RunHvdview("--screenshot " + TempPath("d.png") + " " + DataFile("runtime_small.json") +
                 " --compare " + dir);
  EXPECT_EQ(r.exit_code, 2);
  // --compare files are judged as the positional ones: the same line.
  EXPECT_EQ(OwnLines(r.err),
            std::vector<std::string>{"hvdview: " + dir + ": is a directory, expected a timeline or report file"});
}

// A FIFO is refused before it is opened (reading it waited for a writer for ever), as a
// file to show, a report to chart and a timeline to compare.
TEST(Cli, FifoIsRefusedWithOneLine) {
  const std::string fifo = TempPath("cli_fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& args : {"--screenshot " + TempPath("f.png") + " " + fifo,
                                  "--export-chart " + TempPath("f.png") + " " + fifo}) {
    RunResult r = RunHvdview(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    ASSERT_EQ(OwnLines(r.err).size(), 1u) << r.err;
    EXPECT_EQ(OwnLines(r.err)[0], "hvdview: " + fifo + ": is not a regular file (a FIFO or a device), expected a timeline or report file");
  }
  RunResult r = RunHvdview("--screenshot " + TempPath("f.png") + " " + DataFile("runtime_small.json") + " --compare " + fifo);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(fifo + ": is not a regular file"), std::string::npos) << r.err;
}

TEST(Cli, LongNameIsCutWithOneLineAndExit2) {
  // 20 MiB in one event name: before the cut, ~8 s and gigabytes; now one line and a picture.
  const std::string path = testing::WriteTempFile(
      "cli_long.json", R"([{"ph":"X","name":")" + std::string(20 << 20, 'L') +
                           R"(","pid":0,"tid":0,"ts":0,"dur":10},
{"ph":"X","name":"B","pid":0,"tid":0,"ts":20,"dur":5}])");
  const std::string png = TempPath("cli_long.png");
  RunResult r = RunHvdview("--screenshot " + png + " --size 800x300 " + path);
  EXPECT_EQ(r.exit_code, 2);
  const std::vector<std::string> lines = OwnLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err.substr(0, 2000);
  EXPECT_EQ(lines[0], "hvdview: " + path + ": event 0 (byte 1): \"name\" is '" +
                          std::string(60, 'L') +
                          "...' (20971520 bytes), expected at most 4096 bytes; cut to 4096");
  EXPECT_FALSE(QImage(QString::fromStdString(png)).isNull());
}

TEST(Cli, ReportNumberOutOfRangeExits2) {
  const std::string report = testing::WriteTempFile(
      "cli_np.json", R"({"runs": [{"model": "m", "np": 1e30, "images_per_sec": 1}]})");
  RunResult r = RunHvdview("--export-chart " + TempPath("np.png") + " " + report);
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(OwnLines(r.err).size(), 1u) << r.err;
  EXPECT_EQ(OwnLines(r.err)[0], "hvdview: " + report +
                                    ": runs[0].np: expected an integer from 0 to 2147483647, "
                                    "got 1e+30");
}

TEST(Cli, CollectiveSweepReportIsDrawn) {
  const std::string png = TempPath("cli_busbw.png");
  for (const char* file : {"collective_allreduce.json", "collective_allreduce.csv"}) {
    RunResult r = RunHvdview("--export-chart " + png + " " + DataFile(file));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(OwnLines(r.err).empty()) << r.err;
    EXPECT_FALSE(QImage(QString::fromStdString(png)).isNull());
  }
  RunResult r = RunHvdview("--export-chart " + png + " --chart busbw " + DataFile("collective_allreduce.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunHvdview("--export-chart " + png + " --chart busbw " + DataFile("report_small.json"));
  EXPECT_EQ(r.exit_code, 2);
  r = RunHvdview("--screenshot " + png + " " + DataFile("collective_allreduce.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err), std::vector<std::string>{"hvdview: " + DataFile("collective_allreduce.json") +
                                                      ": is a report, not a timeline (use --export-chart)"});
}

TEST(Cli, ASecondReportIsAnErrorNotDropped) {
  const std::string png = TempPath("cli_two.png");
  RunResult r = RunHvdview("--export-chart " + png + " " + DataFile("report_small.json") + " " +
                           DataFile("report_seeds.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err),
            std::vector<std::string>{"hvdview: " + DataFile("report_seeds.json") + ": a second report (" +
                                     DataFile("report_small.json") +
                                     " is drawn); hvdview draws one report at a time, open the others separately"});
}

TEST(Cli, ShardAndBadReportsGetOneLine) {
  const std::string png = TempPath("cli_shard.png");
  const std::string shard = testing::WriteTempFile(
      "shard.json", R"({"digest": "0123456789abcdef", "jobs": 2, "kind": "hvdsim shard", "points": [],
      "runs": [{"job": 0, "point": 0, "model": "m", "np": 1, "reported": false, "outcome": {}}],
      "shard": {"count": 2, "index": 0}, "source": "s.json", "tool": "hvdsim", "version": "0.1.0"})");
  RunResult r = RunHvdview("--export-chart " + png + " " + shard);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err), std::vector<std::string>{"hvdview: " + shard +
                                                      ": a partial report of hvdsim --shard: merge the shards "
                                                      "with hvdsim --merge, then open the merged report"});
  const std::string bad = testing::WriteTempFile(
      "bad_figures.json", R"({"runs": [{"model": "m", "np": 0, "images_per_sec": -1}]})");
  r = RunHvdview("--export-chart " + png + " " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err), std::vector<std::string>{"hvdview: " + bad +
                                                      ": runs[0].np: 0, expected at least 1 (and 1 more bad field)"});
  const std::string none = testing::WriteTempFile("no_runs.json", R"({"tool": "hvdsim", "runs": []})");
  r = RunHvdview("--export-chart " + png + " " + none);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err), std::vector<std::string>{"hvdview: " + none + ": runs: no runs"});
}

// Runs of different jobs given together: one line naming both files.
TEST(Cli, APidInTwoFilesIsNamed) {
  const std::string png = TempPath("cli_mixed.png");
  RunResult r = RunHvdview("--screenshot " + png + " " + DataFile("runtime_small.json") + " " +
                           DataFile("simulated_small.json"));
  EXPECT_EQ(r.exit_code, 2);
  const std::vector<std::string> lines = OwnLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("hvdview: " + DataFile("simulated_small.json") + ": pid 0 is also in " +
                               DataFile("runtime_small.json"),
                           0),
            0u)
      << lines[0];
}

TEST(Cli, RangeIsChecked) {
  const std::string png = TempPath("cli_range.png");
  const std::string file = DataFile("runtime_small.json");
  RunResult r = RunHvdview("--screenshot " + png + " " + file + " --range 5:1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err), std::vector<std::string>{"hvdview: --range 5:1: END must be after START"});
  r = RunHvdview("--screenshot " + png + " " + file + " --range 0:inf");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err),
            std::vector<std::string>{"hvdview: --range 0:inf: expected START:END, finite numbers of ms"});
  r = RunHvdview("--screenshot " + png + " " + file + " --range -100:-50");
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(OwnLines(r.err).size(), 1u) << r.err;
  EXPECT_EQ(OwnLines(r.err)[0].rfind("hvdview: --range -100:-50: outside the trace, which spans 0 to ", 0), 0u);
  r = RunHvdview("--screenshot " + png + " " + file + " --range 0:1e300");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(OwnLines(r.err).size(), 1u) << r.err;
  EXPECT_EQ(OwnLines(r.err)[0].rfind("hvdview: note: --range 0:1e+300 reaches past the trace (0 to ", 0), 0u);
}

// --compare judges files as the positional ones do; a missing file says why; --align names
// the file without the event.
TEST(Cli, CompareFilesAndMissingFilesAreNamedTheSameWay) {
  const std::string png = TempPath("cli_cmp.png");
  const std::string timeline = DataFile("runtime_small.json");
  const std::string report = DataFile("report_small.json");
  RunResult r = RunHvdview("--screenshot " + png + " " + timeline + " --compare " + report);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err),
            std::vector<std::string>{"hvdview: " + report + ": is a report, not a timeline (use --export-chart)"});
  for (const std::string& args : {std::string("/nonexistent/a.json"), timeline + " --compare /nonexistent/a.json"}) {
    r = RunHvdview("--screenshot " + png + " " + args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(OwnLines(r.err),
              std::vector<std::string>{"hvdview: /nonexistent/a.json: cannot open: No such file or directory"});
  }
  r = RunHvdview("--screenshot " + png + " " + timeline + " --compare " + DataFile("simulated_small.json") +
                 " --align NOPE");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(OwnLines(r.err),
            std::vector<std::string>{"hvdview: --align NOPE:1: no occurrence 1 of 'NOPE' in A (runtime_small.json)"});
}

}  // namespace
}  // namespace hvdview
