// hvdview: viewer of hvdsim/Horovod timelines and hvdbench/hvdsim reports.
//   hvdview [FILE ...]                          open files in the window
//   hvdview --screenshot out.png TIMELINE...    render offscreen and exit
//   hvdview --export-chart out.svg REPORT       render charts offscreen and exit
#include <QApplication>
#include <QCommandLineParser>
#include <cmath>
#include <cstdio>

#include "app/headless.h"
#include "app/main_window.h"

namespace {

int Fail(const QString& message) {
  std::fprintf(stderr, "hvdview: %s\n", message.toLocal8Bit().constData());
  return 2;
}

// Fills `options` from the parsed command line; returns an error message or empty.
QString ReadOptions(const QCommandLineParser& parser, hvdview::HeadlessOptions* options) {
  options->files = parser.positionalArguments();
  options->compare_files = parser.values(QStringLiteral("compare"));
  if (parser.isSet(QStringLiteral("align"))) {
    const QString spec = parser.value(QStringLiteral("align"));
    const int colon = spec.lastIndexOf(':');
    options->align_name = colon < 0 ? spec : spec.left(colon);
    bool ok = true;
    if (colon >= 0) options->align_occurrence = spec.mid(colon + 1).toInt(&ok);
    if (!ok || options->align_occurrence < 1 || options->align_name.isEmpty()) {
      return QStringLiteral("--align %1: expected NAME or NAME:N with N >= 1").arg(spec);
    }
  }
  if (parser.isSet(QStringLiteral("offset"))) {
    bool ok = false;
    options->align_offset_us = parser.value(QStringLiteral("offset")).toDouble(&ok);
    if (!ok) return QStringLiteral("--offset: expected a number of microseconds");
  }
  if (parser.isSet(QStringLiteral("size"))) {
    const QStringList parts = parser.value(QStringLiteral("size")).split('x');
    bool ok_w = false, ok_h = false;
    const int w = parts.size() == 2 ? parts[0].toInt(&ok_w) : 0;
    const int h = parts.size() == 2 ? parts[1].toInt(&ok_h) : 0;
    if (!ok_w || !ok_h || w < 200 || h < 150 || w > 20000 || h > 20000) {
      return QStringLiteral("--size: expected WIDTHxHEIGHT, e.g. 1600x900");
    }
    options->size = QSize(w, h);
  }
  if (parser.isSet(QStringLiteral("range"))) {
    const QStringList parts = parser.value(QStringLiteral("range")).split(':');
    bool ok_a = false, ok_b = false;
    const double a = parts.size() == 2 ? parts[0].toDouble(&ok_a) : 0;
    const double b = parts.size() == 2 ? parts[1].toDouble(&ok_b) : 0;
    const QString spec = parser.value(QStringLiteral("range"));
    if (!ok_a || !ok_b || !std::isfinite(a) || !std::isfinite(b)) {
      return QStringLiteral("--range %1: expected START:END, finite numbers of ms").arg(spec);
    }
    if (!(b > a)) return QStringLiteral("--range %1: END must be after START").arg(spec);
    options->range_ms = std::make_pair(a, b);
  }
  if (parser.isSet(QStringLiteral("chart"))) options->chart = parser.value(QStringLiteral("chart"));
  static const QStringList kCharts = {"all", "throughput", "efficiency", "steptime", "busbw", "collectives"};
  if (!kCharts.contains(options->chart)) {
    return QStringLiteral("--chart %1: expected one of %2")
        .arg(options->chart, kCharts.join(QStringLiteral(", ")));
  }
  return {};
}

void AddOptions(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      "Viewer of hvdsim / Horovod timelines (Chrome Trace Event JSON) and of hvdbench / "
      "hvdsim reports. Files are recognised by content; several timelines open as one view.");
  parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("FILE", "Timelines (*.json) and/or a report (*.json, *.csv; a training or a collective sweep report).",
                               "[FILE...]");
  parser.addOptions({
      {"screenshot", "Render the timeline(s) offscreen to OUT (.png or .svg) and exit.", "OUT"},
      {"export-chart",
       "Render report charts (or per-rank collective time of a timeline) to "
       "OUT (.png or .svg) and exit.",
       "OUT"},
      {"chart", "Chart for --export-chart: all, throughput, efficiency, steptime, busbw, collectives.",
       "NAME"},
      {"compare", "Timeline shown below the FILEs in compare mode (repeatable).", "FILE"},
      {"align", "Compare mode: align at the N-th occurrence of event NAME (default N=1).",
       "NAME[:N]"},
      {"offset", "Compare mode: extra shift of the lower timeline, microseconds.", "US"},
      {"size", "Image size for headless rendering (default 1600x900).", "WxH"},
      {"range", "Screenshot time range in ms from the trace start.", "START:END"},
  });
  // Qt's own options, consumed by QApplication; accepted here so that parsing succeeds.
  for (const char* qt_option : {"platform", "style", "qwindowgeometry", "qwindowtitle"}) {
    QCommandLineOption option(QString::fromLatin1(qt_option), QString(), QStringLiteral("VALUE"));
    option.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(option);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Parse before any QApplication exists: a wrong flag or --help must work without a display.
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  QCommandLineParser parser;
  AddOptions(parser);
  if (!parser.parse(arguments)) return Fail(parser.errorText());
  if (parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("version"))) {
    QCoreApplication core(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("hvdview"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HVDVIEW_VERSION));
    if (parser.isSet(QStringLiteral("help"))) parser.showHelp(0);
    parser.showVersion();
  }
  hvdview::HeadlessOptions options;
  const QString error = ReadOptions(parser, &options);
  if (!error.isEmpty()) return Fail(error);
  const QString screenshot = parser.value(QStringLiteral("screenshot"));
  const QString chart_out = parser.value(QStringLiteral("export-chart"));
  const bool headless = !screenshot.isEmpty() || !chart_out.isEmpty();
  if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("hvdview"));
  QApplication::setApplicationVersion(QStringLiteral(HVDVIEW_VERSION));
  if (headless) {
    int code = 0;
    if (!screenshot.isEmpty()) code = std::max(code, hvdview::RunScreenshot(screenshot, options));
    if (!chart_out.isEmpty()) code = std::max(code, hvdview::RunExportChart(chart_out, options));
    return code;
  }
  hvdview::MainWindow window;
  window.show();
  if (!options.files.isEmpty()) window.openFiles(options.files);
  return QApplication::exec();
}
