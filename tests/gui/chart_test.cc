// Charts built from a report and from a timeline, and the charts panel export.
#include <gtest/gtest.h>

#include <QApplication>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChartView>
#include <QLineSeries>
#include <QHorizontalStackedBarSeries>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>
#include <cmath>
#include <memory>
#include <set>

#include "app/main_window.h"

#include "core/trace_parser.h"
#include "test_files.h"
#include "widgets/chart_factory.h"
#include "widgets/charts_panel.h"
#include "widgets/image_export.h"

namespace hvdview {
namespace {

Report ReportFile(const char* name) {
  std::string error;
  auto report = LoadReport(testing::DataFile(name), &error);
  EXPECT_TRUE(report) << error;
  return *report;
}

Report SmallReport() {
  return ReportFile("report_small.json");
}

// 3 models x 10 np, as hvdsim scenarios/roce25.json reports it.
Report SweepReport() {
  return ReportFile("report_30runs.json");
}

QStringList chart_names(QChart* chart) {
  QStringList names;
  for (QAbstractSeries* series : chart->series()) names << series->name();
  return names;
}

QString AxisTitle(QChart* chart, Qt::Orientation orientation) {
  const QList<QAbstractAxis*> axes = chart->axes(orientation);
  return axes.isEmpty() ? QString() : axes[0]->titleText();
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

// hvdsim --seeds 3 with published points: a min-max band per series, star markers with
// a legend entry per model; drawn in the charts panel (grab() lays out and paints).
TEST(Charts, EfficiencyDrawsSeedBandsAndPublishedMarkers) {
  const Report report = ReportFile("report_seeds.json");
  ChartsPanel panel;
  panel.resize(1200, 800);
  panel.show();
  panel.setReport(report);
  const QPixmap shot = panel.grab();
  EXPECT_FALSE(shot.isNull());
  QChart* chart = panel.chartView(ChartKind::kEfficiency)->chart();
  EXPECT_TRUE(chart->title().contains("min-max over 3 seeds")) << chart->title().toStdString();
  QAreaSeries* band = nullptr;
  QScatterSeries* published = nullptr;
  int bands = 0;
  for (QAbstractSeries* series : chart->series()) {
    if (auto* area = qobject_cast<QAreaSeries*>(series)) {
      ++bands;
      if (area->name() == "resnet101 min-max") band = area;
    }
    if (series->name() == "published resnet101") published = qobject_cast<QScatterSeries*>(series);
  }
  EXPECT_EQ(bands, 2);  // resnet101 and vgg16
  ASSERT_NE(band, nullptr);
  ASSERT_NE(band->upperSeries(), nullptr);
  ASSERT_NE(band->lowerSeries(), nullptr);
  ASSERT_EQ(band->upperSeries()->count(), 3);
  ASSERT_EQ(band->lowerSeries()->count(), 3);
  for (int i = 0; i < 3; ++i) {
    const ReportRun& run = report.runs[static_cast<size_t>(i)];  // resnet101 at np 1, 8, 16
    EXPECT_DOUBLE_EQ(band->upperSeries()->at(i).x(), run.np);
    EXPECT_DOUBLE_EQ(band->upperSeries()->at(i).y(), run.scaling_efficiency_hi * 100);
    EXPECT_DOUBLE_EQ(band->lowerSeries()->at(i).y(), run.scaling_efficiency_lo * 100);
  }
  EXPECT_LT(band->lowerSeries()->at(2).y(), band->upperSeries()->at(2).y());
  EXPECT_EQ(band->brush().color().alpha(), 60);
  // The line keeps the mean.
  QLineSeries* resnet = SeriesNamed(chart, "resnet101");
  ASSERT_NE(resnet, nullptr);
  EXPECT_DOUBLE_EQ(resnet->at(2).y(), report.runs[2].scaling_efficiency * 100);
  EXPECT_EQ(band->brush().color().rgb(), resnet->color().rgb());
  // Published: np 128 and 512 for each model with runs (inception3 has none: not drawn).
  ASSERT_NE(published, nullptr);
  ASSERT_EQ(published->count(), 2);
  EXPECT_DOUBLE_EQ(published->at(0).x(), 512);
  EXPECT_DOUBLE_EQ(published->at(0).y(), 90);
  EXPECT_DOUBLE_EQ(published->at(1).x(), 128);
  EXPECT_EQ(published->color().rgb(), resnet->color().rgb());
  EXPECT_FALSE(chart_names(chart).contains("published inception3"));
  QStringList legend;
  for (QLegendMarker* marker : chart->legend()->markers()) {
    if (marker->isVisible()) legend << marker->label();
  }
  EXPECT_TRUE(legend.contains("published resnet101")) << legend.join(", ").toStdString();
  EXPECT_TRUE(legend.contains("published vgg16")) << legend.join(", ").toStdString();
  EXPECT_FALSE(legend.contains("resnet101 min-max")) << "the title says what bands are";
  // The np axis reaches the published 512 GPUs.
  auto* x = qobject_cast<QLogValueAxis*>(chart->axes(Qt::Horizontal).at(0));
  ASSERT_NE(x, nullptr);
  EXPECT_GE(x->max(), 512);
}

TEST(Charts, EfficiencyWithoutSeedsHasNoBand) {
  std::unique_ptr<QChart> chart(MakeEfficiencyChart(SmallReport()));
  for (QAbstractSeries* series : chart->series()) {
    EXPECT_EQ(qobject_cast<QAreaSeries*>(series), nullptr) << series->name().toStdString();
    EXPECT_EQ(qobject_cast<QScatterSeries*>(series), nullptr) << series->name().toStdString();
  }
  EXPECT_EQ(chart->title(), "Scaling efficiency (% of ideal)");
}

TEST(Charts, StepTimeIsStackedPerRun) {
  const Report report = SmallReport();
  std::unique_ptr<QChart> chart(MakeStepTimeChart(report));
  ASSERT_EQ(chart->series().size(), 1);
  auto* series = qobject_cast<QHorizontalStackedBarSeries*>(chart->series()[0]);
  ASSERT_NE(series, nullptr);
  ASSERT_EQ(series->barSets().size(), 4);
  const ReportRun& run = report.runs[5];  // the last run is the first (bottom) category
  EXPECT_NEAR(series->barSets()[0]->at(0), run.compute_s * 1e3, 1e-9);
  EXPECT_NEAR(series->barSets()[1]->at(0), (run.exposed_comm_s - run.negotiation_s) * 1e3, 1e-9);
  EXPECT_NEAR(series->barSets()[2]->at(0), run.negotiation_s * 1e3, 1e-9);
  double sum = 0;
  for (QBarSet* set : series->barSets()) sum += set->at(0);
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

TEST(ChartLabels, StepSplitNamesModelAndNpOfEveryRun) {
  const Report report = SweepReport();
  ASSERT_EQ(report.runs.size(), 30u);
  std::unique_ptr<QChart> chart(MakeStepTimeChart(report));
  auto* axis = qobject_cast<QBarCategoryAxis*>(chart->axes(Qt::Vertical).at(0));
  ASSERT_NE(axis, nullptr);
  const QStringList categories = axis->categories();
  ASSERT_EQ(categories.size(), 30);
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const ReportRun& run = report.runs[i];
    const QString& category = categories[static_cast<int>(report.runs.size() - 1 - i)];
    EXPECT_EQ(category, QString::fromStdString(run.model) + ", np " + QString::number(run.np));
  }
  EXPECT_EQ(axis->labelsAngle(), 0);  // level text: rotated labels were cut to "resne..."
}

TEST(ChartLabels, EveryChartNamesItsUnitsAndHasALegend) {
  const Report report = SweepReport();
  LoadResult timeline = LoadTimelines({testing::DataFile("runtime_small.json")});
  std::unique_ptr<QChart> throughput(MakeThroughputChart(report));
  std::unique_ptr<QChart> efficiency(MakeEfficiencyChart(report));
  std::unique_ptr<QChart> steps(MakeStepTimeChart(report));
  std::unique_ptr<QChart> ranks(MakeCollectiveTimeChart(timeline.trace));
  EXPECT_EQ(AxisTitle(throughput.get(), Qt::Horizontal), "np (GPUs)");
  EXPECT_EQ(AxisTitle(throughput.get(), Qt::Vertical), "images/s");
  EXPECT_EQ(AxisTitle(efficiency.get(), Qt::Horizontal), "np (GPUs)");
  EXPECT_TRUE(AxisTitle(efficiency.get(), Qt::Vertical).contains("%"));
  EXPECT_EQ(AxisTitle(steps.get(), Qt::Horizontal), "ms per step");
  EXPECT_EQ(AxisTitle(steps.get(), Qt::Vertical), "run (model, np)");
  EXPECT_EQ(AxisTitle(ranks.get(), Qt::Horizontal), "process");
  EXPECT_TRUE(AxisTitle(ranks.get(), Qt::Vertical).startsWith("ms"));
  for (QChart* chart : {throughput.get(), efficiency.get(), steps.get(), ranks.get()}) {
    SCOPED_TRACE(chart->title().toStdString());
    EXPECT_TRUE(chart->legend()->isVisible());
    EXPECT_GE(chart->legend()->markers().size(), 2);
  }
  EXPECT_EQ(chart_names(throughput.get()), QStringList({"inception3", "resnet101", "vgg16",
                                                       "ideal inception3", "ideal resnet101",
                                                       "ideal vgg16"}));
}

// In the window at its default size (what a new user sees first), no axis label of the
// charts tab is cut and the 30 run labels have a line each (they do not overlap).
TEST(ChartLabels, AllRunLabelsFitAtTheDefaultWindowSize) {
  MainWindow window;
  window.show();
  window.openFiles({QString::fromStdString(testing::DataFile("report_30runs.json"))});
  QApplication::processEvents();
  window.grab();  // lays out and paints, as a screenshot does
  ChartsPanel* panel = window.chartsPanel();
  for (ChartKind kind : {ChartKind::kThroughput, ChartKind::kEfficiency, ChartKind::kStepTime}) {
    QChart* chart = panel->chartView(kind)->chart();
    for (QAbstractAxis* axis : chart->axes()) {
      EXPECT_FALSE(axis->labelsTruncated())
          << chart->title().toStdString() << ", axis " << axis->titleText().toStdString();
    }
  }
  QChart* steps = panel->chartView(ChartKind::kStepTime)->chart();
  auto* runs = qobject_cast<QBarCategoryAxis*>(steps->axes(Qt::Vertical).at(0));
  ASSERT_NE(runs, nullptr);
  const QFontMetricsF metrics(runs->labelsFont());
  const double row = steps->plotArea().height() / runs->count();
  EXPECT_GE(row, metrics.height()) << "plot " << steps->plotArea().height();
  // Each run label whole, between the axis title and the plot (labels are drawn uncut).
  const double title = QFontMetricsF(runs->titleFont()).height();
  for (const QString& label : runs->categories()) {
    EXPECT_LE(title + metrics.horizontalAdvance(label), steps->plotArea().left())
        << label.toStdString();
  }
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

namespace hvdview {
namespace {

// A report of `n` runs, each its own series (a sweep label per run), one with a 100 KB label.
Report ManySeriesReport(int n) {
  Report r = ReportFile("report_small.json");
  const ReportRun base = r.runs.front();
  r.runs.clear();
  for (int i = 0; i < n; ++i) {
    ReportRun run = base;
    run.np = 2 + 2 * (i % 50);
    run.label = i == 0 ? std::string(100000, 'L') : "x" + std::to_string(i);
    r.runs.push_back(run);
  }
  return r;
}

// Thousands of series: the line charts draw the first 64 and the step split the first 200
// runs, and their titles say so (5,000 series took 24 s to lay out); a 100 KB label is drawn
// cut to 120 characters (48 as a bar's row label) and still groups its runs alone.
TEST(Charts, ThousandsOfSeriesAreCappedAndLongLabelsCut) {
  const Report report = ManySeriesReport(5000);
  std::unique_ptr<QChart> throughput(MakeThroughputChart(report));
  std::unique_ptr<QChart> efficiency(MakeEfficiencyChart(report));
  std::unique_ptr<QChart> split(MakeStepTimeChart(report));
  int lines = 0;
  int longest = 0;
  for (QAbstractSeries* s : throughput->series()) {
    lines += s->name().startsWith("resnet") || s->name().startsWith("vgg") || s->name().startsWith("inception");
    longest = std::max(longest, static_cast<int>(s->name().size()));
  }
  EXPECT_EQ(lines, 64);
  EXPECT_LE(longest, 120);
  EXPECT_TRUE(throughput->title().contains("the first 64 of 5000 series")) << throughput->title().toStdString();
  EXPECT_TRUE(efficiency->title().contains("the first 64 of 5000 series")) << efficiency->title().toStdString();
  EXPECT_TRUE(split->title().contains("the first 200 of 5000 runs")) << split->title().toStdString();
  auto* rows = qobject_cast<QBarCategoryAxis*>(split->axes(Qt::Vertical).value(0));
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->count(), 200);
  int longest_row = 0;
  for (const QString& c : rows->categories()) longest_row = std::max(longest_row, static_cast<int>(c.size()));
  EXPECT_LT(longest_row, 80);
}

// The tick values a dynamic-tick value axis draws.
std::vector<double> Ticks(const QValueAxis* axis) {
  std::vector<double> ticks;
  for (double t = axis->tickAnchor(); t <= axis->max() + 1e-9; t += axis->tickInterval()) {
    if (t >= axis->min() - 1e-9) ticks.push_back(t);
  }
  return ticks;
}

Report Runs(const std::vector<std::pair<std::string, int>>& model_np) {
  Report report;
  for (const auto& [model, np] : model_np) {
    ReportRun run;
    run.model = model;
    run.np = np;
    run.images_per_sec = 100.0 * np;
    run.images_per_sec_single = 100;
    run.scaling_efficiency = 1;
    report.runs.push_back(run);
  }
  return report;
}

// np 1 and 2 were labelled "0 0 1 1 2" (five ticks over 0 .. 2.2): ticks sit on whole np.
TEST(Charts, NpAxisTicksOnWholeNp) {
  for (const auto& [nps, expected_step] : std::vector<std::pair<std::vector<int>, double>>{
           {{1, 2}, 1}, {{1, 2, 4}, 1}, {{2, 4, 8, 12}, 2}, {{40, 48, 64}, 10}, {{1000, 4000}, 500}}) {
    std::vector<std::pair<std::string, int>> runs;
    for (int np : nps) runs.push_back({"m", np});
    std::unique_ptr<QChart> chart(MakeThroughputChart(Runs(runs)));
    auto* x = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).at(0));
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->tickType(), QValueAxis::TicksDynamic);
    EXPECT_EQ(x->labelFormat(), "%d");
    EXPECT_EQ(x->tickInterval(), expected_step) << nps.back();
    const std::vector<double> ticks = Ticks(x);
    for (double tick : ticks) EXPECT_EQ(tick, std::round(tick));
    EXPECT_LE(ticks.size(), 9u);
    EXPECT_GE(x->max(), nps.back());
  }
  std::unique_ptr<QChart> chart(MakeEfficiencyChart(Runs({{"m", 1}, {"m", 2}})));
  auto* x = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).at(0));
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(Ticks(x), (std::vector<double>{0, 1, 2}));
}

// A report of one run: the ideal lines are drawn (two points), not a lone legend entry.
TEST(Charts, OneRunStillDrawsItsIdealLines) {
  const Report report = Runs({{"resnet50", 2}});
  std::unique_ptr<QChart> throughput(MakeThroughputChart(report));
  QLineSeries* ideal = SeriesNamed(throughput.get(), "ideal resnet50");
  ASSERT_NE(ideal, nullptr);
  ASSERT_EQ(ideal->count(), 2);
  EXPECT_EQ(ideal->at(0), QPointF(1, 100));
  EXPECT_EQ(ideal->at(1), QPointF(2, 200));
  std::unique_ptr<QChart> efficiency(MakeEfficiencyChart(report));
  QLineSeries* flat = SeriesNamed(efficiency.get(), "ideal");
  ASSERT_NE(flat, nullptr);
  ASSERT_EQ(flat->count(), 2);
  EXPECT_LT(flat->at(0).x(), flat->at(1).x());
  // np 1 only: one point draws no line, so the legend does not list it.
  std::unique_ptr<QChart> single(MakeThroughputChart(Runs({{"resnet50", 1}})));
  QLineSeries* dot = SeriesNamed(single.get(), "ideal resnet50");
  ASSERT_NE(dot, nullptr);
  for (QLegendMarker* marker : single->legend()->markers(dot)) EXPECT_FALSE(marker->isVisible());
}

// Ten models: ten different colours (Qt's theme repeats after five); each ideal line in its
// model's colour.
TEST(Charts, SeriesColoursDifferBeyondFive) {
  std::vector<std::pair<std::string, int>> runs;
  for (int m = 0; m < 12; ++m) {
    const std::string name = (m < 10 ? "model0" : "model") + std::to_string(m);  // in series order
    runs.push_back({name, 1});
    runs.push_back({name, 2});
  }
  std::unique_ptr<QChart> chart(MakeThroughputChart(Runs(runs)));
  std::set<std::pair<QRgb, int>> styles;
  for (int m = 0; m < 12; ++m) {
    QLineSeries* series = SeriesNamed(chart.get(), QStringLiteral("model%1").arg(m, 2, 10, QChar('0')));
    ASSERT_NE(series, nullptr);
    styles.insert({series->pen().color().rgb(), static_cast<int>(series->pen().style())});
    if (m < 10) {
      for (int other = 0; other < m; ++other) {
        EXPECT_NE(series->pen().color(), SeriesNamed(chart.get(), QStringLiteral("model%1").arg(other, 2, 10, QChar('0')))->pen().color());
      }
    }
    QLineSeries* ideal = SeriesNamed(chart.get(), QStringLiteral("ideal model%1").arg(m, 2, 10, QChar('0')));
    ASSERT_NE(ideal, nullptr);
    EXPECT_EQ(ideal->pen().color(), series->pen().color());
  }
  EXPECT_EQ(styles.size(), 12u);  // past ten, the colours come back with another line style
}

// The names the legend lists (entries hidden by the chart left out), in order.
QStringList LegendEntries(QChart* chart) {
  QStringList names;
  for (QAbstractSeries* series : chart->series()) {
    if (series->property("hvdviewNoLegend").toBool()) continue;
    const QList<QLegendMarker*> markers = chart->legend()->markers(series);
    if (!markers.isEmpty()) names << markers[0]->label();
  }
  return names;
}

// Ten models: the throughput legend was 20 swatches without text and the efficiency one read
// "mod..." (one row at the bottom). Crowded legends go to the right, one entry a line; the
// ideal lines leave the throughput legend (the title says what dashed is); past 12 entries
// only the first 12 are listed, and the title says so. Three models stay at the bottom.
TEST(ChartLabels, CrowdedLegendsGoRightAndKeepTheirText) {
  std::vector<std::pair<std::string, int>> ten, twenty;
  for (int m = 0; m < 20; ++m) {
    const std::string name = QStringLiteral("model%1").arg(m, 2, 10, QChar('0')).toStdString();
    for (int np : {1, 2, 4}) {
      if (m < 10) ten.push_back({name, np});
      twenty.push_back({name, np});
    }
  }
  QStringList models;
  for (int m = 0; m < 10; ++m) models << QStringLiteral("model%1").arg(m, 2, 10, QChar('0'));
  std::unique_ptr<QChart> throughput(MakeThroughputChart(Runs(ten)));
  EXPECT_EQ(throughput->legend()->alignment(), Qt::AlignRight);
  EXPECT_EQ(LegendEntries(throughput.get()), models);
  EXPECT_EQ(throughput->title(), "Throughput (images/s); dashed: ideal scaling of each model");
  EXPECT_NE(SeriesNamed(throughput.get(), "ideal model03"), nullptr);  // still drawn
  std::unique_ptr<QChart> efficiency(MakeEfficiencyChart(Runs(ten)));
  EXPECT_EQ(efficiency->legend()->alignment(), Qt::AlignRight);
  EXPECT_EQ(LegendEntries(efficiency.get()), models + QStringList{"ideal"});
  EXPECT_EQ(efficiency->title(), "Scaling efficiency (% of ideal)");

  std::unique_ptr<QChart> crowded(MakeEfficiencyChart(Runs(twenty)));
  EXPECT_EQ(LegendEntries(crowded.get()).size(), 12);
  EXPECT_TRUE(crowded->title().endsWith("; legend: the first 12 of 21")) << crowded->title().toStdString();
  // Shown in a view, the markers Qt lists are those entries.
  QChartView view(crowded.release());
  view.resize(700, 450);
  view.show();
  QApplication::processEvents();
  view.grab();
  QStringList visible;
  for (QLegendMarker* marker : view.chart()->legend()->markers()) {
    if (marker->isVisible()) visible << marker->label();
  }
  EXPECT_EQ(visible, LegendEntries(view.chart()));

  std::unique_ptr<QChart> sweep(MakeThroughputChart(SweepReport()));
  EXPECT_EQ(sweep->legend()->alignment(), Qt::AlignBottom);
  EXPECT_EQ(LegendEntries(sweep.get()).size(), 6);
}

// hvdsim --collective allreduce (fixture): busbw of raw and hvd against a log2 size axis.
TEST(Charts, CollectiveSweepDrawsBusBandwidthAgainstSize) {
  std::string error;
  const auto sweep = LoadCollectiveReport(testing::DataFile("collective_allreduce.json"), &error);
  ASSERT_TRUE(sweep) << error;
  std::unique_ptr<QChart> chart(MakeBusBandwidthChart(*sweep));
  EXPECT_EQ(chart->title(), "allreduce bus bandwidth (GB/s), np 16 on 2 nodes");
  EXPECT_EQ(chart_names(chart.get()), (QStringList{"NCCL (raw) busbw", "Horovod (hvd) busbw"}));
  QLineSeries* raw = SeriesNamed(chart.get(), "NCCL (raw) busbw");
  ASSERT_EQ(raw->count(), 6);
  EXPECT_DOUBLE_EQ(raw->at(0).x(), 20);  // log2(1M)
  EXPECT_DOUBLE_EQ(raw->at(5).x(), 30);  // log2(1G)
  EXPECT_DOUBLE_EQ(raw->at(2).y(), sweep->rows[2].raw_busbw_gbps);
  EXPECT_DOUBLE_EQ(SeriesNamed(chart.get(), "Horovod (hvd) busbw")->at(4).y(), sweep->rows[4].hvd_busbw_gbps);
  auto* size = qobject_cast<QCategoryAxis*>(chart->axes(Qt::Horizontal).at(0));
  ASSERT_NE(size, nullptr);
  const QStringList labels = size->categoriesLabels();
  EXPECT_EQ(labels.front(), "1M");
  EXPECT_EQ(labels.back(), "1G");
  EXPECT_TRUE(labels.contains("64M"));
  EXPECT_EQ(size->endValue("64M"), 26);
  EXPECT_EQ(AxisTitle(chart.get(), Qt::Vertical), "busbw (GB/s)");
  EXPECT_EQ(SizeLabel(0), "1");
  EXPECT_EQ(SizeLabel(9), "512");
  EXPECT_EQ(SizeLabel(12), "4K");
  EXPECT_EQ(SizeLabel(40), "1T");
  // The panel shows it in its own row.
  ChartsPanel panel;
  panel.resize(1200, 800);
  panel.show();
  panel.setCollectiveReport(*sweep);
  EXPECT_TRUE(panel.hasCollectiveReport());
  EXPECT_TRUE(panel.chartView(ChartKind::kBusBandwidth)->isVisible());
  EXPECT_FALSE(panel.chartView(ChartKind::kThroughput)->isVisible());
  panel.setReport(SmallReport());
  EXPECT_TRUE(panel.chartView(ChartKind::kThroughput)->isVisible());
}

}  // namespace
}  // namespace hvdview
