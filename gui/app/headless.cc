#include "app/headless.h"

#include <QApplication>
#include <QChartView>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdio>
#include <memory>

#include "core/report_model.h"
#include "core/trace_parser.h"
#include "widgets/chart_factory.h"
#include "widgets/compare_view.h"
#include "widgets/image_export.h"
#include "widgets/legend_bar.h"
#include "widgets/timeline_view.h"

namespace hvdview {
namespace {

void PrintLine(const QString& line) {
  std::fprintf(stderr, "hvdview: %s\n", line.toLocal8Bit().constData());
}

// Reads timelines; prints one line per error or warning; `bad_input` is set on errors.
std::shared_ptr<Trace> LoadTimelinesForCli(const QStringList& files, bool* bad_input) {
  std::vector<std::string> paths;
  for (const QString& file : files) paths.push_back(file.toStdString());
  LoadResult result = LoadTimelines(paths);
  for (const LoadError& error : result.errors) PrintLine(QString::fromStdString(error.ToString()));
  for (const std::string& warning : result.warnings) {
    PrintLine(QStringLiteral("warning: ") + QString::fromStdString(warning));
  }
  if (!result.errors.empty()) *bad_input = true;
  return std::make_shared<Trace>(std::move(result.trace));
}

// Splits files into timelines and reports; unusable files are reported and set `bad_input`.
void ClassifyFiles(const QStringList& files, QStringList* timelines, QStringList* reports,
                   bool* bad_input) {
  for (const QString& file : files) {
    const FileKind kind = DetectFileKind(file.toStdString());
    switch (kind) {
      case FileKind::kTimeline:
        *timelines << file;
        break;
      case FileKind::kReport:
        *reports << file;
        break;
      default:
        PrintLine(file + ": " + QString::fromStdString(DescribeFileKindProblem(kind)));
        *bad_input = true;
        break;
    }
  }
}

int Export(QWidget* widget, const QString& out_path, QSize size) {
  widget->resize(size);
  widget->show();
  QApplication::processEvents();
  QString error;
  if (!ExportWidget(widget, out_path, &error)) {
    PrintLine(error);
    return error.contains(QLatin1String("unsupported")) ? 2 : 1;
  }
  return 0;
}

QWidget* MakeTimelineScreen(std::shared_ptr<Trace> trace, const HeadlessOptions& options) {
  auto* screen = new QWidget;
  auto* layout = new QVBoxLayout(screen);
  layout->setContentsMargins(4, 4, 4, 4);
  QStringList names;
  for (const QString& file : options.files) names << QFileInfo(file).fileName();
  layout->addWidget(new QLabel(QStringLiteral("%1: %2 events, %3 processes")
                                   .arg(names.join(QStringLiteral(", ")))
                                   .arg(trace->event_count())
                                   .arg(trace->processes.size()),
                               screen));
  layout->addWidget(new LegendBar(screen));
  auto* view = new TimelineView(screen);
  view->setObjectName(QStringLiteral("timeline"));
  layout->addWidget(view, 1);
  screen->resize(options.size);
  screen->show();
  QApplication::processEvents();
  view->setTrace(std::move(trace));
  return screen;
}

}  // namespace

int RunScreenshot(const QString& out_path, const HeadlessOptions& options) {
  bool bad_input = false;
  QStringList timelines, reports;
  ClassifyFiles(options.files, &timelines, &reports, &bad_input);
  for (const QString& report : reports) {
    PrintLine(report + ": is a report, not a timeline (use --export-chart)");
    bad_input = true;
  }
  if (timelines.isEmpty()) {
    if (options.files.isEmpty()) PrintLine(QStringLiteral("--screenshot needs a timeline FILE"));
    return 2;
  }
  std::shared_ptr<Trace> trace = LoadTimelinesForCli(timelines, &bad_input);
  if (trace->empty()) return 2;
  std::unique_ptr<QWidget> screen;
  TimelineView* view = nullptr;
  if (!options.compare_files.isEmpty()) {
    std::shared_ptr<Trace> other = LoadTimelinesForCli(options.compare_files, &bad_input);
    if (other->empty()) return 2;
    auto compare = std::make_unique<CompareView>();
    compare->resize(options.size);
    compare->show();
    QApplication::processEvents();
    compare->setTraces(trace, QFileInfo(timelines.front()).fileName(), other,
                       QFileInfo(options.compare_files.front()).fileName());
    if (!compare->align(options.align_name, options.align_occurrence, options.align_offset_us)) {
      PrintLine(compare->statusText());
      bad_input = true;
    }
    view = compare->topView();
    screen = std::move(compare);
  } else {
    screen.reset(MakeTimelineScreen(trace, options));
    view = screen->findChild<TimelineView*>(QStringLiteral("timeline"));
  }
  if (options.range_ms) {
    const double origin = trace->min_time + view->timeShift();
    view->setViewRange(origin + options.range_ms->first * 1e3,
                       origin + options.range_ms->second * 1e3);
  }
  const int written = Export(screen.get(), out_path, options.size);
  return written != 0 ? written : (bad_input ? 2 : 0);
}

int RunExportChart(const QString& out_path, const HeadlessOptions& options) {
  bool bad_input = false;
  QStringList timelines, reports;
  ClassifyFiles(options.files, &timelines, &reports, &bad_input);
  if (timelines.isEmpty() && reports.isEmpty()) {
    if (options.files.isEmpty()) PrintLine(QStringLiteral("--export-chart needs a REPORT file"));
    return 2;
  }
  std::optional<Report> report;
  if (!reports.isEmpty()) {
    std::string error;
    report = LoadReport(reports.front().toStdString(), &error);
    if (!report) {
      PrintLine(reports.front() + ": " + QString::fromStdString(error));
      return 2;
    }
  }
  std::shared_ptr<Trace> trace;
  if (!timelines.isEmpty()) trace = LoadTimelinesForCli(timelines, &bad_input);
  const bool has_trace = trace && !trace->empty();
  const QString& chart = options.chart;
  // As in the Charts tab: throughput, efficiency and per-rank time stacked in the first
  // column; the step split (one row per run) gets the full height of the second.
  std::vector<std::pair<QChart*, bool>> charts;  // chart, wants a full-height column
  if (report && (chart == "all" || chart == "throughput"))
    charts.emplace_back(MakeThroughputChart(*report), false);
  if (report && (chart == "all" || chart == "efficiency"))
    charts.emplace_back(MakeEfficiencyChart(*report), false);
  if (report && (chart == "all" || chart == "steptime"))
    charts.emplace_back(MakeStepTimeChart(*report), true);
  if (has_trace && (chart == "all" || chart == "collectives")) {
    charts.emplace_back(MakeCollectiveTimeChart(*trace), false);
  }
  if (charts.empty()) {
    PrintLine(QStringLiteral("--chart %1: nothing to draw (throughput, efficiency and steptime "
                             "need a report; collectives needs a timeline)")
                  .arg(chart));
    return 2;
  }
  QWidget screen;
  auto* grid = new QGridLayout(&screen);
  const int stacked = static_cast<int>(
      std::count_if(charts.begin(), charts.end(), [](const auto& c) { return !c.second; }));
  int row = 0;
  int column = stacked > 0 ? 1 : 0;
  for (const auto& [chart_item, tall] : charts) {
    auto* view = new QChartView(chart_item, &screen);
    view->setRenderHint(QPainter::Antialiasing);
    if (tall)
      grid->addWidget(view, 0, column++, std::max(1, stacked), 1);
    else
      grid->addWidget(view, row++, 0);
  }
  const int written = Export(&screen, out_path, options.size);
  return written != 0 ? written : (bad_input ? 2 : 0);
}

}  // namespace hvdview
