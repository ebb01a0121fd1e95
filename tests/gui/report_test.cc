// Reports: JSON and CSV, field errors, and file-kind detection.
#include <gtest/gtest.h>

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
