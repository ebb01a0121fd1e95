// The report record's one writer and one reader (libs/report, hvd/report/record.h): what
// hvdbench and hvdsim write reads back as the same record (JSON and CSV), and the reader
// names the path of what is wrong.
#include "hvd/report/record.h"
#include "hvd/report/report.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <iterator>
#include <fstream>
#include <filesystem>

#include <string>

namespace hvd::report {
namespace {

RunRecord sample() {
  RunRecord r;
  r.model = "resnet101";
  r.np = 16;
  r.batch_size = 64;
  r.gpu = "V100";
  r.label = "tcp, 10G";  // a CSV field that must be quoted
  r.images_per_sec = 3107.25;
  r.images_per_sec_ci95 = 12.5;
  r.images_per_sec_single = 230.0;
  r.scaling_efficiency = 0.84439;
  r.step_time_s = 0.3296;
  r.compute_s = 0.25;
  r.exposed_comm_s = 0.0796;
  r.negotiation_s = 0.001;
  r.steps = 20;
  r.knobs = {{"fusion_threshold", "67108864"}, {"cycle_time_ms", "5"}};
  r.collectives = {{"allreduce", 3140, 2776000000, 1.25, 2.2208, 4.1640}};
  r.seeds = 3;
  r.images_per_sec_lo = 3000;
  r.images_per_sec_hi = 3200;
  r.scaling_efficiency_lo = 0.81;
  r.scaling_efficiency_hi = 0.87;
  return r;
}

void expect_same_figures(const RunRecord& a, const RunRecord& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.np, b.np);
  EXPECT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.label, b.label);
  EXPECT_DOUBLE_EQ(a.images_per_sec, b.images_per_sec);
  EXPECT_DOUBLE_EQ(a.scaling_efficiency, b.scaling_efficiency);
  EXPECT_DOUBLE_EQ(a.exposed_comm_s, b.exposed_comm_s);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.seeds, b.seeds);
  EXPECT_DOUBLE_EQ(a.scaling_efficiency_hi, b.scaling_efficiency_hi);
}

TEST(ReportRecord, JsonReadsBackWhatTheWriterWrote) {
  const RunRecord r = sample();
  const std::string text = to_json("hvdsim", "s.json", {r}, {{"resnet101", 16, 0.9, "paper"}}).dump(2);
  std::string error;
  auto doc = document_from_json(text, &error);
  ASSERT_TRUE(doc) << error;
  EXPECT_EQ(doc->tool, "hvdsim");
  EXPECT_EQ(doc->version, kReportVersion);
  ASSERT_EQ(doc->runs.size(), 1u);
  expect_same_figures(doc->runs[0], r);
  EXPECT_EQ(doc->runs[0].knobs, r.knobs);
  ASSERT_EQ(doc->runs[0].collectives.size(), 1u);
  EXPECT_EQ(doc->runs[0].collectives[0].bytes, 2776000000);
  EXPECT_DOUBLE_EQ(doc->runs[0].collectives[0].busbw_gbps, 4.1640);
  ASSERT_EQ(doc->reference.size(), 1u);
  EXPECT_EQ(doc->reference[0].source, "paper");
}

TEST(ReportRecord, CsvReadsBackWhatTheWriterWrote) {
  RunRecord r = sample();
  std::string error;
  auto doc = document_from_csv(to_csv({r}), &error);
  ASSERT_TRUE(doc) << error;
  ASSERT_EQ(doc->runs.size(), 1u);
  expect_same_figures(doc->runs[0], r);  // the figures are written with 6 digits: these have fewer
  r.seeds = 1;                           // no seed columns without a record that has seeds
  EXPECT_EQ(to_csv({r}).substr(0, to_csv({r}).find('\n')), kCsvHeader);
}

// A label with a comma and quotes is written quoted with the quotes doubled (RFC 4180)
// and reads back as it was, not with its quotes dropped.
TEST(ReportRecord, CsvLabelWithQuotesAndCommaReadsBackUnchanged) {
  RunRecord r = sample();
  r.label = "tcp, \"slow\" \"\"";
  const std::string csv = to_csv({r});
  EXPECT_NE(csv.find("\"tcp, \"\"slow\"\" \"\"\"\"\""), std::string::npos) << csv;
  std::string error;
  auto doc = document_from_csv(csv, &error);
  ASSERT_TRUE(doc) << error;
  ASSERT_EQ(doc->runs.size(), 1u);
  EXPECT_EQ(doc->runs[0].label, r.label);
  expect_same_figures(doc->runs[0], r);
}

TEST(ReportRecord, TheReaderNamesThePathOfABadCollective) {
  nlohmann::json j = to_json(sample());
  j["collectives"][0]["calls"] = -1;
  try {
    run_from_json(j, "outcome");
    FAIL() << "read a negative call count";
  } catch (const RecordError& e) {
    EXPECT_STREQ(e.what(), "outcome.collectives[0].calls: expected an integer from 0 to 9223372036854775807, got -1");
  }
  // hvdview reads the figures only: what it does not show cannot stop it.
  EXPECT_EQ(run_from_json(j, "runs[0]", RecordParts::kFigures).np, 16);
  j["knobs"]["cycle_time_ms"] = 5;
  EXPECT_THROW(run_from_json(j, "outcome"), RecordError);
}

// A report whose CSV cannot be written fails and leaves the earlier report as it was, with
// no partial or temporary file beside it.
TEST(ReportRecord, AFailedWriteKeepsTheEarlierReport) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("report_keep_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "r.csv");  // the CSV's place is taken by a directory
  { std::ofstream(dir / "r.json") << "OLD"; }
  const hvd::Status s = write_report((dir / "r.json").string(), "test", "src", {sample()}, {});
  EXPECT_FALSE(s.ok());
  std::ifstream in(dir / "r.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "OLD");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "a temporary file was left behind";
  // And a report that can be written replaces it whole.
  fs::remove_all(dir / "r.csv");
  EXPECT_TRUE(write_report((dir / "r.json").string(), "test", "src", {sample()}, {}).ok());
  EXPECT_TRUE(fs::exists(dir / "r.csv"));
  fs::remove_all(dir);
}

// A number beyond double (1e400) is an error that says so, not an uncaught exception (hvdview
// aborted on it).
// A report path that is a symbolic link (dangling or not) is written through: the link stays
// and its target holds the report; the CSV goes beside the name given.
TEST(ReportRecord, ALinkIsWrittenThroughNotReplaced) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("hvd_report_link_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  fs::create_symlink("real/target.json", dir / "link.json");  // dangling until written
  ASSERT_TRUE(write_report((dir / "link.json").string(), "test", "src", {sample()}, {}).ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "real" / "target.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "link.csv"));
  EXPECT_EQ(report_path_problem((dir / "link.json").string()), "");
  EXPECT_NE(report_path_problem((dir / "link.json").string(), {{"scenario", (dir / "real" / "target.json").string()}})
                .find("is the scenario this run reads"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportRecord, ANumberBeyondDoubleIsAnError) {
  std::string error;
  EXPECT_FALSE(document_from_json(R"({"runs":[{"model":"m","np":1,"images_per_sec":1e400}]})", &error).has_value());
  EXPECT_NE(error.find("number overflow"), std::string::npos) << error;
}

}  // namespace
}  // namespace hvd::report
