// Charts built from a report and from a timeline, and the charts panel export.
#include <gtest/gtest.h>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <memory>

#include "core/trace_parser.h"
#include "test_files.h"
#include "widgets/chart_factory.h"
#include "widgets/charts_panel.h"
#include "widgets/image_export.h"

namespace hvdview {
namespace {

Report SmallReport() {
  std::string error;
  auto report = LoadReport(testing::DataFile("report_small.json"), &error);
  EXPECT_TRUE(report) << error;
  return *report;
}

QLineSeries* SeriesNamed(QChart* chart, const QString& name) {
  for (QAbstractSeries* series : chart->series()) {
    if (series->name() == name) return qobject_cast<QLineSeries*>(series);
  }
  return nullptr;
}

TEST(Charts, ThroughputHasOneSeriesPerModelAndIdealLines) {
  std::unique_ptr<QChart> chart(MakeThroughputChart(SmallReport()));
  EXPECT_EQ(chart->series().size(), 4);
  QLineSeries* resnet = SeriesNamed(chart.get(), "resnet101");
  ASSERT_NE(resnet, nullptr);
  ASSERT_EQ(resnet->count(), 3);
  EXPECT_DOUBLE_EQ(resnet->at(2).x(), 64);
  EXPECT_NEAR(resnet->at(2).y(), 64 * 119.4 * 0.9, 1e-6);
  QLineSeries* ideal = SeriesNamed(chart.get(), "ideal vgg16");
  ASSERT_NE(ideal, nullptr);
  EXPECT_NEAR(ideal->at(2).y(), 64 * 130.0, 1e-6);
  EXPECT_EQ(ideal->pen().style(), Qt::DashLine);
}

TEST(Charts, EfficiencyInPercentWithIdealLine) {
  std::unique_ptr<QChart> chart(MakeEfficiencyChart(SmallReport()));
  QLineSeries* vgg = SeriesNamed(chart.get(), "vgg16");
  ASSERT_NE(vgg, nullptr);
  EXPECT_NEAR(vgg->at(2).y(), 68, 1e-9);
  QLineSeries* ideal = SeriesNamed(chart.get(), "ideal");
  ASSERT_NE(ideal, nullptr);
  EXPECT_DOUBLE_EQ(ideal->at(0).y(), 100);
}

TEST(Charts, StepTimeIsStackedPerRun) {
  const Report report = SmallReport();
  std::unique_ptr<QChart> chart(MakeStepTimeChart(report));
  ASSERT_EQ(chart->series().size(), 1);
  auto* series = qobject_cast<QStackedBarSeries*>(chart->series()[0]);
  ASSERT_NE(series, nullptr);
  ASSERT_EQ(series->barSets().size(), 4);
  const ReportRun& run = report.runs[5];
  EXPECT_NEAR(series->barSets()[0]->at(5), run.compute_s * 1e3, 1e-9);
  EXPECT_NEAR(series->barSets()[1]->at(5), (run.exposed_comm_s - run.negotiation_s) * 1e3, 1e-9);
  EXPECT_NEAR(series->barSets()[2]->at(5), run.negotiation_s * 1e3, 1e-9);
  double sum = 0;
  for (QBarSet* set : series->barSets()) sum += set->at(5);
  EXPECT_NEAR(sum, run.step_time_s * 1e3, 1e-6);
}

TEST(Charts, CollectiveTimePerRank) {
  LoadResult result = LoadTimelines({testing::DataFile("runtime_small.json")});
  std::unique_ptr<QChart> chart(MakeCollectiveTimeChart(result.trace));
  auto* series = qobject_cast<QBarSeries*>(chart->series().at(0));
  ASSERT_NE(series, nullptr);
  EXPECT_DOUBLE_EQ(series->barSets()[0]->at(1), 4.0);  // ms in collectives, rank 1
  auto* axis = qobject_cast<QBarCategoryAxis*>(chart->axes(Qt::Horizontal).at(0));
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->categories(), QStringList({"rank 0", "rank 1"}));
}

TEST(ChartsPanel, ShowsAndExportsCharts) {
  ChartsPanel panel;
  panel.resize(1200, 800);
  panel.show();
  panel.setReport(SmallReport());
  EXPECT_TRUE(panel.hasReport());
  EXPECT_EQ(panel.chartView(ChartKind::kThroughput)->chart()->series().size(), 4);
  QString error;
  const QString svg = QString::fromStdString(testing::TempPath("chart.svg"));
  const QString png = QString::fromStdString(testing::TempPath("chart.png"));
  ASSERT_TRUE(ExportWidget(panel.chartView(ChartKind::kEfficiency), svg, &error));
  ASSERT_TRUE(ExportWidget(&panel, png, &error));
  const QImage image(png);
  ASSERT_EQ(image.size(), panel.size());
  int non_white = 0;
  for (int x = 0; x < image.width(); x += 7) {
    for (int y = 0; y < image.height(); y += 7) non_white += image.pixel(x, y) != 0xFFFFFFFF;
  }
  EXPECT_GT(non_white, 100);
}

}  // namespace
}  // namespace hvdview
