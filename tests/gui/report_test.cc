// Reports: JSON and CSV, field errors, and file-kind detection.
#include <gtest/gtest.h>

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
}

}  // namespace
}  // namespace hvdview
