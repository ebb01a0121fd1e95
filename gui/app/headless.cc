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

// Prints "FILE: PROBLEM" for each line of `problems` (a report's bad fields, one a line).
void PrintFileProblems(const QString& file, const std::string& problems) {
  for (const QString& line : QString::fromStdString(problems).split('\n')) PrintLine(file + ": " + line);
}

struct ClassifiedFiles {
  QStringList timelines;
  QStringList reports;             // training reports (runs)
  QStringList collective_reports;  // hvdsim --collective sweeps
};

// Splits files by kind; unusable files are reported and set `bad_input`.
ClassifiedFiles ClassifyFiles(const QStringList& files, bool* bad_input) {
  ClassifiedFiles classified;
  for (const QString& file : files) {
    const FileKind kind = DetectFileKind(file.toStdString());
    switch (kind) {
      case FileKind::kTimeline:
        classified.timelines << file;
        break;
      case FileKind::kReport:
        classified.reports << file;
        break;
      case FileKind::kCollectiveReport:
        classified.collective_reports << file;
        break;
      default:
        PrintLine(file + ": " + QString::fromStdString(DescribeFileProblem(file.toStdString(), kind)));
        *bad_input = true;
        break;
    }
  }
  return classified;
}

// Timelines only (--screenshot, --compare): a report of either kind is named as such.
QStringList TimelinesOnly(const ClassifiedFiles& classified, bool* bad_input) {
  for (const QString& report : classified.reports + classified.collective_reports) {
    PrintLine(report + ": is a report, not a timeline (use --export-chart)");
    *bad_input = true;
  }
  return classified.timelines;
}

// The one report of a kind that is drawn: the first; each further one is an error (charts
// show one report at a time, and the first is not silently preferred).
QString OneReport(const QStringList& reports, bool* bad_input) {
  for (qsizetype i = 1; i < reports.size(); ++i) {
    PrintLine(reports[i] + ": a second report (" + reports.front() +
              " is drawn); hvdview draws one report at a time, open the others separately");
    *bad_input = true;
  }
  return reports.isEmpty() ? QString() : reports.front();
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
                                   .arg(trace->events_kept)
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
  const QStringList timelines = TimelinesOnly(ClassifyFiles(options.files, &bad_input), &bad_input);
  if (timelines.isEmpty()) {
    if (options.files.isEmpty()) PrintLine(QStringLiteral("--screenshot needs a timeline FILE"));
    return 2;
  }
  std::shared_ptr<Trace> trace = LoadTimelinesForCli(timelines, &bad_input);
  if (trace->empty()) return 2;
  std::unique_ptr<QWidget> screen;
  TimelineView* view = nullptr;
  if (!options.compare_files.isEmpty()) {
    // Judged like the positional files: the same words for a report or a missing file.
    const QStringList compare_files = TimelinesOnly(ClassifyFiles(options.compare_files, &bad_input), &bad_input);
    if (compare_files.isEmpty()) return 2;
    std::shared_ptr<Trace> other = LoadTimelinesForCli(compare_files, &bad_input);
    if (other->empty()) return 2;
    auto compare = std::make_unique<CompareView>();
    compare->resize(options.size);
    compare->show();
    QApplication::processEvents();
    compare->setTraces(trace, QFileInfo(timelines.front()).fileName(), other,
                       QFileInfo(compare_files.front()).fileName());
    if (!compare->align(options.align_name, options.align_occurrence, options.align_offset_us)) {
      PrintLine(QStringLiteral("--align %1:%2: ").arg(options.align_name).arg(options.align_occurrence) +
                compare->statusText());
      bad_input = true;
    }
    view = compare->topView();
    screen = std::move(compare);
  } else {
    screen.reset(MakeTimelineScreen(trace, options));
    view = screen->findChild<TimelineView*>(QStringLiteral("timeline"));
  }
  if (options.range_ms) {
    // START:END from the trace start: entirely outside the trace is an error; a part
    // outside is cut off, with a note of what is drawn.
    const double length_ms = (trace->max_time - trace->min_time) / 1e3;
    auto [start, end] = *options.range_ms;
    const QString given = QStringLiteral("--range %1:%2").arg(start).arg(end);
    if (end <= 0 || start >= length_ms) {
      PrintLine(QStringLiteral("%1: outside the trace, which spans 0 to %2 ms").arg(given).arg(length_ms));
      return 2;
    }
    if (start < 0 || end > length_ms) {
      start = std::max(start, 0.0);
      end = std::min(end, length_ms);
      PrintLine(QStringLiteral("note: %1 reaches past the trace (0 to %2 ms); drawn %3 to %4 ms")
                    .arg(given).arg(length_ms).arg(start).arg(end));
    }
    const double origin = trace->min_time + view->timeShift();
    view->setViewRange(origin + start * 1e3, origin + end * 1e3);
  }
  const int written = Export(screen.get(), out_path, options.size);
  return written != 0 ? written : (bad_input ? 2 : 0);
}

int RunExportChart(const QString& out_path, const HeadlessOptions& options) {
  bool bad_input = false;
  const ClassifiedFiles classified = ClassifyFiles(options.files, &bad_input);
  const QStringList& timelines = classified.timelines;
  if (timelines.isEmpty() && classified.reports.isEmpty() && classified.collective_reports.isEmpty()) {
    if (options.files.isEmpty()) PrintLine(QStringLiteral("--export-chart needs a REPORT file"));
    return 2;
  }
  std::optional<Report> report;
  const QString report_file = OneReport(classified.reports, &bad_input);
  if (!report_file.isEmpty()) {
    std::string error;
    report = LoadReport(report_file.toStdString(), &error);
    if (!report) {
      PrintFileProblems(report_file, error);
      return 2;
    }
  }
  std::optional<CollectiveReport> sweep;
  const QString sweep_file = OneReport(classified.collective_reports, &bad_input);
  if (!sweep_file.isEmpty()) {
    std::string error;
    sweep = LoadCollectiveReport(sweep_file.toStdString(), &error);
    if (!sweep) {
      PrintFileProblems(sweep_file, error);
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
  if (sweep && (chart == "all" || chart == "busbw")) charts.emplace_back(MakeBusBandwidthChart(*sweep), false);
  if (has_trace && (chart == "all" || chart == "collectives")) {
    charts.emplace_back(MakeCollectiveTimeChart(*trace), false);
  }
  if (charts.empty()) {
    PrintLine(QStringLiteral("--chart %1: nothing to draw (throughput, efficiency and steptime "
                             "need a report; busbw a collective sweep report; collectives a timeline)")
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
