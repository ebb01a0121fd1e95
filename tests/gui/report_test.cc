// Reports: JSON and CSV, field errors, and file-kind detection.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/report_model.h"
#include "test_files.h"

namespace hvdview {
namespace {

using testing::DataFile;
using testing::WriteTempFile;

TEST(Report, ReadsJson) {
  std::string error;
  const auto report = LoadReport(DataFile("report_small.json"), &error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->tool, "hvdsim");
  ASSERT_EQ(report->runs.size(), 6u);
  EXPECT_EQ(report->runs[2].model, "resnet101");
  EXPECT_EQ(report->runs[2].np, 64);
  EXPECT_DOUBLE_EQ(report->runs[2].scaling_efficiency, 0.9);
  EXPECT_EQ(report->runs[2].SeriesName(), "resnet101");
}

TEST(Report, CsvMatchesJson) {
  std::string error;
  const auto json = LoadReport(DataFile("report_small.json"), &error);
  const auto csv = LoadReport(DataFile("report_small.csv"), &error);
  ASSERT_TRUE(csv) << error;
  ASSERT_EQ(csv->runs.size(), json->runs.size());
  EXPECT_EQ(csv->runs[4].model, "vgg16");
  EXPECT_NEAR(csv->runs[4].images_per_sec, json->runs[4].images_per_sec, 1e-6);
}

// hvdsim --seeds 3 with published points (scenarios/roce25.json, np 1/8/16, two models).
TEST(Report, ReadsSeedBandsAndPublishedPoints) {
  std::string error;
  const auto json = LoadReport(DataFile("report_seeds.json"), &error);
  ASSERT_TRUE(json) << error;
  ASSERT_EQ(json->runs.size(), 6u);
  const ReportRun& run = json->runs[2];  // resnet101, np 16
  EXPECT_EQ(run.np, 16);
  EXPECT_EQ(run.seeds, 3);
  EXPECT_TRUE(run.HasBand());
  EXPECT_LT(run.scaling_efficiency_lo, run.scaling_efficiency);
  EXPECT_LT(run.scaling_efficiency, run.scaling_efficiency_hi);
  EXPECT_LT(run.images_per_sec_lo, run.images_per_sec_hi);
  ASSERT_EQ(json->reference.size(), 6u);
  EXPECT_EQ(json->reference[2].model, "vgg16");
  EXPECT_EQ(json->reference[2].np, 512);
  EXPECT_DOUBLE_EQ(json->reference[2].scaling_efficiency, 0.68);
  EXPECT_NE(json->reference[2].source.find("Horovod"), std::string::npos);
  // The CSV beside it: the five more columns.
  const auto csv = LoadReport(DataFile("report_seeds.csv"), &error);
  ASSERT_TRUE(csv) << error;
  ASSERT_EQ(csv->runs.size(), 6u);
  EXPECT_EQ(csv->runs[2].seeds, 3);
  EXPECT_NEAR(csv->runs[2].scaling_efficiency_hi, run.scaling_efficiency_hi, 1e-5);
  EXPECT_NEAR(csv->runs[2].images_per_sec_lo, run.images_per_sec_lo, 1e-2);
  // A report without them: no band.
  const auto small = LoadReport(DataFile("report_small.json"), &error);
  ASSERT_TRUE(small) << error;
  EXPECT_FALSE(small->runs[2].HasBand());
  EXPECT_TRUE(small->reference.empty());
}

TEST(Report, BadPublishedPointsAreNamed) {
  std::string error;
  const std::string runs = "{\"runs\": [{\"model\": \"m\", \"np\": 8, \"images_per_sec\": 1}], ";
  EXPECT_FALSE(LoadReport(WriteTempFile("ref1.json", runs + "\"reference\": 3}"), &error));
  EXPECT_EQ(error, "reference: expected an array");
  EXPECT_FALSE(LoadReport(WriteTempFile("ref2.json", runs + "\"reference\": [{\"model\": \"m\", \"np\": 8}]}"), &error));
  EXPECT_EQ(error, "reference[0].scaling_efficiency: missing");
  EXPECT_FALSE(LoadReport(WriteTempFile("ref3.json", runs + "\"reference\": [{\"model\": \"m\", \"np\": -1, "
                                                          "\"scaling_efficiency\": 0.9}]}"),
                          &error));
  EXPECT_EQ(error.rfind("reference[0].np: expected an integer", 0), 0u) << error;
  EXPECT_FALSE(LoadReport(WriteTempFile("ref4.json", "{\"runs\": [{\"model\": \"m\", \"np\": 8, \"images_per_sec\": 1, "
                                                     "\"seeds\": \"3\"}]}"),
                          &error));
  EXPECT_EQ(error, "runs[0].seeds: expected a number, got string");
}

TEST(Report, Errors) {
  std::string error;
  EXPECT_FALSE(LoadReport(WriteTempFile("r1.json", ""), &error));
  EXPECT_EQ(error, "empty file");
  EXPECT_FALSE(LoadReport(WriteTempFile("r2.json", "{\"runs\": [1,"), &error));
  EXPECT_NE(error.find("invalid JSON at byte 13"), std::string::npos) << error;
  EXPECT_FALSE(LoadReport(WriteTempFile("r3.json",
                                        "{\"runs\": [{\"model\": \"m\", \"np\": \"8\","
                                        " \"images_per_sec\": 1}]}"),
                          &error));
  EXPECT_EQ(error, "runs[0].np: expected a number, got string");
  EXPECT_FALSE(LoadReport(WriteTempFile("r4.json", "{\"runs\": [{\"np\": 8}]}"), &error));
  EXPECT_EQ(error, "runs[0].model: missing");
  EXPECT_FALSE(LoadReport(WriteTempFile("r5.json", "{\"tool\": 1}"), &error));
  EXPECT_NE(error.find("\"runs\""), std::string::npos);
  EXPECT_FALSE(LoadReport(WriteTempFile("r6.csv", "a,b\n"), &error));
  EXPECT_NE(error.find("header"), std::string::npos);
}

TEST(Report, NumbersOutOfRangeAreNamed) {
  std::string error;
  auto json_run = [](const std::string& np) {
    return "{\"runs\": [{\"model\": \"m\", \"np\": " + np + ", \"images_per_sec\": 1}]}";
  };
  // 1e30 or 2^40 converted to int would be undefined behaviour.
  EXPECT_FALSE(LoadReport(WriteTempFile("n1.json", json_run("1e30")), &error));
  EXPECT_EQ(error, "runs[0].np: expected an integer from 0 to 2147483647, got 1e+30");
  EXPECT_FALSE(LoadReport(WriteTempFile("n2.json", json_run("1099511627776")), &error));
  EXPECT_EQ(error, "runs[0].np: expected an integer from 0 to 2147483647, got 1099511627776");
  EXPECT_FALSE(LoadReport(WriteTempFile("n3.json", json_run("-4")), &error));
  EXPECT_EQ(error, "runs[0].np: expected an integer from 0 to 2147483647, got -4");
  EXPECT_TRUE(LoadReport(WriteTempFile("n4.json", json_run("8")), &error)) << error;
  const std::string header =
      "model,np,batch_size,gpu,label,images_per_sec,images_per_sec_ci95,images_per_sec_single,"
      "scaling_efficiency,step_time_s,compute_s,exposed_comm_s,negotiation_s,steps\n";
  EXPECT_FALSE(LoadReport(WriteTempFile("n5.csv", header + "m,99999999999,64,P100,,1,0,1,1,1,1,0,0,1\n"), &error));
  EXPECT_EQ(error, "line 2, np: expected an integer from 0 to 2147483647, got '99999999999'");
  EXPECT_FALSE(LoadReport(WriteTempFile("n6.csv", header + "m,8,64,P100,,nan,0,1,1,1,1,0,0,1\n"), &error));
  EXPECT_EQ(error, "line 2, images_per_sec: expected a finite number, got 'nan'");
  EXPECT_FALSE(LoadReport(WriteTempFile("n7.csv", header + "m,8,64,P100,,1e999,0,1,1,1,1,0,0,1\n"), &error));
  EXPECT_EQ(error, "line 2, images_per_sec: expected a finite number, got '1e999'");
}

TEST(Report, HostileJsonGivesOneShortLine) {
  std::string error;
  const std::string bad_string = "{\"runs\": [\"" + std::string(1 << 20, 'q') + "\x01\"]}";
  EXPECT_FALSE(LoadReport(WriteTempFile("h1.json", bad_string), &error));
  EXPECT_LT(error.size(), 300u);
  EXPECT_EQ(error.rfind("invalid JSON at byte ", 0), 0u) << error;
  const std::string deep = "{\"runs\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_FALSE(LoadReport(WriteTempFile("h2.json", deep), &error));  // no stack overflow
  EXPECT_EQ(error, "runs[0]: expected an object");
}

TEST(Report, ADirectoryIsNamedAsSuch) {
  const std::string dir = testing::TempPath("report_dir");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(DetectFileKind(dir), FileKind::kDirectory);
  std::string error;
  EXPECT_FALSE(LoadReport(dir, &error));
  EXPECT_EQ(error, "is a directory, expected a timeline or report file");
}

TEST(FileKind, DetectedFromContent) {
  EXPECT_EQ(DetectFileKind(DataFile("runtime_small.json")), FileKind::kTimeline);
  EXPECT_EQ(DetectFileKind(DataFile("horovod_rank0.json")), FileKind::kTimeline);
  EXPECT_EQ(DetectFileKind(DataFile("report_small.json")), FileKind::kReport);
  EXPECT_EQ(DetectFileKind(DataFile("report_small.csv")), FileKind::kReport);
  EXPECT_EQ(
      DetectFileKind(WriteTempFile("k1.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}")),
      FileKind::kTimeline);
  EXPECT_EQ(DetectFileKind(WriteTempFile("k2.json", "  \n")), FileKind::kEmpty);
  EXPECT_EQ(DetectFileKind(WriteTempFile("k3.txt", "hello")), FileKind::kUnknown);
  EXPECT_EQ(DetectFileKind("/nonexistent/file.json"), FileKind::kUnreadable);
  EXPECT_EQ(DescribeFileProblem("/nonexistent/file.json", FileKind::kUnreadable),
            "cannot open: No such file or directory");
}

// The kind comes from the top-level keys, wherever they are: hvdsim writes keys sorted, so
// 600 published points ("reference") push "runs" far into the file; a timeline may carry
// "runs" in its metadata before "traceEvents".
TEST(FileKind, DecidedByTopLevelKeysNotAPrefix) {
  std::string reference = "[";
  for (int i = 0; i < 1000; ++i) {
    reference += (i ? "," : "") + std::string(R"({"model": "m", "np": )") + std::to_string(i + 1) +
                 R"(, "scaling_efficiency": 0.9, "source": "a long enough description of where it was published"})";
  }
  const std::string big_report = WriteTempFile(
      "k_bigref.json", "{\"reference\": " + reference + "], \"runs\": [{\"model\": \"m\", \"np\": 1, "
                       "\"images_per_sec\": 100}], \"tool\": \"hvdsim\"}");
  ASSERT_GT(std::filesystem::file_size(big_report), 65536u);
  EXPECT_EQ(DetectFileKind(big_report), FileKind::kReport);
  std::string error;
  EXPECT_TRUE(LoadReport(big_report, &error)) << error;
  const std::string timeline = WriteTempFile(
      "k_meta.json", "{\"metadata\": {\"runs\": [1, 2], \"note\": \"" + std::string(70000, 'x') +
                         "\"}, \"runs\": 3, \"traceEvents\": [{\"ph\": \"X\", \"name\": \"A\", \"pid\": 0, "
                         "\"ts\": 0, \"dur\": 1}]}");
  EXPECT_EQ(DetectFileKind(timeline), FileKind::kTimeline);
  // Keys only: "traceEvents" inside a string or a nested object decides nothing.
  EXPECT_EQ(DetectFileKind(WriteTempFile("k4.json", R"({"source": "\"traceEvents\"", "x": {"traceEvents": []},
                                                      "runs": []})")),
            FileKind::kReport);
  // Cut before "runs": judged by the keys read (the report reader then names the break).
  EXPECT_EQ(DetectFileKind(WriteTempFile("k5.json", R"({"reference": [{"model": "m", "np)")), FileKind::kReport);
  EXPECT_EQ(DetectFileKind(WriteTempFile("k6.json", R"({"traceEvents": [{"ph": "X")")), FileKind::kTimeline);
  EXPECT_EQ(DetectFileKind(WriteTempFile("k7.json", R"({"otherData": 1})")), FileKind::kTimeline);
  // The collective sweep report and its CSV; a partial report of hvdsim --shard.
  EXPECT_EQ(DetectFileKind(DataFile("collective_allreduce.json")), FileKind::kCollectiveReport);
  EXPECT_EQ(DetectFileKind(DataFile("collective_allreduce.csv")), FileKind::kCollectiveReport);
  EXPECT_EQ(DetectFileKind(WriteTempFile("k8.json", R"({"digest": "0123456789abcdef", "jobs": 2,
      "kind": "hvdsim shard", "runs": [{"job": 0, "point": 0, "model": "m", "np": 1, "reported": false,
      "outcome": {}}], "shard": {"count": 2, "index": 0}, "tool": "hvdsim"})")),
            FileKind::kShardReport);
  EXPECT_EQ(DescribeFileKindProblem(FileKind::kShardReport),
            "a partial report of hvdsim --shard: merge the shards with hvdsim --merge, then open the merged report");
}

// One line per bad field; "runs": [] is an error.
TEST(Report, FiguresAreRangeChecked) {
  std::string error;
  auto run = [](const std::string& fields) {
    return std::string(R"({"model": "m", "np": 1, "images_per_sec": 100, "images_per_sec_single": 100,
                          "scaling_efficiency": 1, "step_time_s": 0.1, "compute_s": 0.1)") +
           fields + "}";
  };
  EXPECT_TRUE(LoadReport(WriteTempFile("c0.json", "{\"runs\": [" + run("") + "]}"), &error)) << error;
  EXPECT_FALSE(LoadReport(WriteTempFile("c1.json", R"({"runs": []})"), &error));
  EXPECT_EQ(error, "runs: no runs");
  EXPECT_FALSE(LoadReport(WriteTempFile("c2.json", "{\"runs\": [" + run("") + ", " +
                                                       R"({"model": "m", "np": 0, "images_per_sec": -400,
                                                           "scaling_efficiency": 7.5, "step_time_s": -1,
                                                           "compute_s": 1e300, "negotiation_s": 1e-3})" +
                                                       "]}"),
                          &error));
  EXPECT_EQ(error, "runs[1].np: 0, expected at least 1 (and 4 more bad fields)");
  EXPECT_FALSE(LoadReport(WriteTempFile("c3.json", "{\"runs\": [" + run(R"(, "images_per_sec_single": 1e308)") + "]}"),
                          &error));
  EXPECT_EQ(error, "runs[0].images_per_sec_single: 1e+308, expected a finite number from 0 to 1e+12");
  // Bands of --seeds and published points too.
  EXPECT_FALSE(LoadReport(WriteTempFile("c4.json", "{\"runs\": [" + run(R"(, "seeds": 3, "scaling_efficiency_lo": -0.5,
      "scaling_efficiency_hi": 1.1, "images_per_sec_lo": 1, "images_per_sec_hi": 2)") +
                                                       R"(], "reference": [{"model": "m", "np": 8,
                                                           "scaling_efficiency": 9}]})"),
                          &error));
  EXPECT_EQ(error,
            "runs[0].scaling_efficiency_lo: -0.5, expected a fraction from 0 to 2 (200 % of ideal) "
            "(and 1 more bad field)");
  // The CSV is checked the same way.
  const std::string header =
      "model,np,batch_size,gpu,label,images_per_sec,images_per_sec_ci95,images_per_sec_single,"
      "scaling_efficiency,step_time_s,compute_s,exposed_comm_s,negotiation_s,steps\n";
  EXPECT_FALSE(LoadReport(WriteTempFile("c5.csv", header + "m,0,64,P100,,1,0,1,1,1,1,0,0,1\n"), &error));
  EXPECT_EQ(error, "runs[0].np: 0, expected at least 1");
  // Many bad fields: one line, the first and how many more.
  std::string many = "{\"runs\": [";
  for (int i = 0; i < 30; ++i) many += (i ? "," : "") + std::string(R"({"model": "m", "np": 0, "images_per_sec": 1})");
  EXPECT_FALSE(LoadReport(WriteTempFile("c6.json", many + "]}"), &error));
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 0) << error;
  EXPECT_EQ(error, "runs[0].np: 0, expected at least 1 (and 29 more bad fields)");
}

TEST(Report, NanAndInfinityAreNamed) {
  std::string error;
  EXPECT_FALSE(LoadReport(WriteTempFile("nan.json", R"({"runs": [{"model": "m", "np": 1, "images_per_sec": NaN}]})"),
                          &error));
  EXPECT_EQ(error, "invalid JSON at byte 52: NaN and Infinity are not JSON numbers");
}

// hvdsim --collective allreduce on scenarios/dgx_h100.json, 2 nodes, 1M..1G x4 (fixture).
TEST(CollectiveReport, ReadsJsonAndTheCsvBesideIt) {
  std::string error;
  const auto json = LoadCollectiveReport(DataFile("collective_allreduce.json"), &error);
  ASSERT_TRUE(json) << error;
  EXPECT_EQ(json->collective, "allreduce");
  EXPECT_EQ(json->np, 16);
  EXPECT_EQ(json->nodes, 2);
  ASSERT_EQ(json->rows.size(), 6u);
  EXPECT_EQ(json->rows[0].bytes, 1048576);
  EXPECT_EQ(json->rows[5].bytes, 1073741824);
  EXPECT_TRUE(json->rows[0].has_hvd);
  EXPECT_EQ(json->rows[0].algorithm, "nvls_tree");
  EXPECT_GT(json->rows[5].raw_busbw_gbps, json->rows[0].raw_busbw_gbps);
  // busbw = algbw x 2(n-1)/n for allreduce
  EXPECT_NEAR(json->rows[3].raw_busbw_gbps, json->rows[3].raw_algbw_gbps * 2 * 15 / 16, 1e-9);
  const auto csv = LoadCollectiveReport(DataFile("collective_allreduce.csv"), &error);
  ASSERT_TRUE(csv) << error;
  ASSERT_EQ(csv->rows.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(csv->rows[i].bytes, json->rows[i].bytes);
    EXPECT_NEAR(csv->rows[i].hvd_busbw_gbps, json->rows[i].hvd_busbw_gbps, 1e-4 * json->rows[i].hvd_busbw_gbps);
  }
  // --raw-only: no hvd side.
  const auto raw_only = LoadCollectiveReport(
      WriteTempFile("raw_only.csv", "bytes,count,raw_time_s,raw_algbw_gbps,raw_busbw_gbps,algorithm,protocol,"
                                    "channels,hvd_time_s,hvd_algbw_gbps,hvd_busbw_gbps\n8,2,1e-05,0.0008,0.0015,"
                                    "ring,LL,2,,,\n"),
      &error);
  ASSERT_TRUE(raw_only) << error;
  EXPECT_FALSE(raw_only->rows[0].has_hvd);
}

TEST(CollectiveReport, BadRowsAreNamed) {
  std::string error;
  EXPECT_FALSE(LoadCollectiveReport(WriteTempFile("cr1.json", R"({"collective": "allreduce", "rows": []})"), &error));
  EXPECT_EQ(error, "rows: no rows");
  EXPECT_FALSE(LoadCollectiveReport(
      WriteTempFile("cr2.json", R"({"collective": "allreduce", "rows": [{"bytes": 0, "raw": {"time_s": 1,
          "algbw_gbps": -1, "busbw_gbps": 1}}, {"bytes": 8, "raw": {"time_s": 1, "algbw_gbps": 1}}]})"),
      &error));
  EXPECT_EQ(error,
            "rows[1].raw.busbw_gbps: missing");
  EXPECT_FALSE(LoadCollectiveReport(
      WriteTempFile("cr3.json", R"({"collective": "allreduce", "rows": [{"bytes": 0, "raw": {"time_s": 1,
          "algbw_gbps": -1, "busbw_gbps": 1}}]})"),
      &error));
  EXPECT_EQ(error, "rows[0].bytes: 0, expected a size from 1 byte to 1e18 (and 1 more bad field)");
  EXPECT_FALSE(LoadCollectiveReport(
      WriteTempFile("cr4.csv", "bytes,count,raw_time_s,raw_algbw_gbps,raw_busbw_gbps,algorithm,protocol,"
                               "channels,hvd_time_s,hvd_algbw_gbps,hvd_busbw_gbps\n8,2,x,1,1,ring,LL,2,,,\n"),
      &error));
  EXPECT_EQ(error, "line 2, column 3: 'x' is not a finite number");
}

}  // namespace
}  // namespace hvdview
