#include "widgets/chart_factory.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QHorizontalStackedBarSeries>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <map>

namespace hvdview {
namespace {

using SeriesRuns = std::map<std::string, std::vector<const ReportRun*>>;

// A name as a chart shows it: at most kShownChars characters, the rest elided. Runs group by
// their whole name; only the text drawn is cut (laying out a 100 KB sweep label took 30 s).
// A bar's row label gets less: it shares the chart's width with the bars.
constexpr int kShownChars = 120, kShownRowLabelChars = 48;
QString Shown(const std::string& name, int chars = kShownChars) {
  const QString s = QString::fromStdString(name);
  return s.size() <= chars ? s : s.left(chars - 1) + QChar(0x2026);
}

SeriesRuns GroupBySeries(const Report& report) {
  SeriesRuns groups;
  for (const ReportRun& run : report.runs) groups[run.SeriesName()].push_back(&run);
  for (auto& [name, runs] : groups) {
    std::sort(runs.begin(), runs.end(),
              [](const ReportRun* a, const ReportRun* b) { return a->np < b->np; });
  }
  return groups;
}

// A chart draws at most kMaxSeries lines and kMaxBars bars: past a few dozen the lines cannot be
// told apart, and Qt Charts lays each new series out against all the others (5,000 series took
// 24 s). The title says what is shown; the report itself is whole.
constexpr size_t kMaxSeries = 64, kMaxBars = 200;
void CapSeries(SeriesRuns* groups, QChart* chart) {
  const size_t total = groups->size();
  if (total <= kMaxSeries) return;
  groups->erase(std::next(groups->begin(), kMaxSeries), groups->end());
  chart->setTitle(chart->title() + QObject::tr(": the first %1 of %2 series").arg(kMaxSeries).arg(total));
}

// Hides the legend entry of `series`. QLegendMarker::isVisible() reads false until the chart
// is shown, so the series remembers it (FitLegend counts the entries still listed).
void HideFromLegend(QChart* chart, QAbstractSeries* series) {
  for (QLegendMarker* marker : chart->legend()->markers(series)) marker->setVisible(false);
  series->setProperty("hvdviewNoLegend", true);
}

// A legend of more than kLegendAtBottom entries goes to the right of the chart, one entry a
// line: in one row at the bottom, ten models were elided to "mod..." or lost their text.
// When crowded, the entries of `optional` go first (the title gets `optional_note` instead),
// and past kMaxLegendEntries only the first are listed (the title says so).
constexpr qsizetype kLegendAtBottom = 6, kMaxLegendEntries = 12;
void FitLegend(QChart* chart, const QList<QAbstractSeries*>& optional = {},
               const QString& optional_note = {}) {
  auto listed = [chart] {
    QList<QAbstractSeries*> series;
    for (QAbstractSeries* s : chart->series()) {
      if (!s->property("hvdviewNoLegend").toBool()) series << s;
    }
    return series;
  };
  QList<QAbstractSeries*> entries = listed();
  if (entries.size() <= kLegendAtBottom) return;
  if (!optional.isEmpty()) {
    for (QAbstractSeries* series : optional) HideFromLegend(chart, series);
    chart->setTitle(chart->title() + "; " + optional_note);
    entries = listed();
  }
  if (entries.size() > kLegendAtBottom) chart->legend()->setAlignment(Qt::AlignRight);
  if (entries.size() > kMaxLegendEntries) {
    for (qsizetype i = kMaxLegendEntries; i < entries.size(); ++i) HideFromLegend(chart, entries[i]);
    chart->setTitle(chart->title() + QObject::tr("; legend: the first %1 of %2")
                                         .arg(kMaxLegendEntries)
                                         .arg(entries.size()));
  }
}

QChart* NewChart(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);
  return chart;
}

// np on a log2 axis when it spans more than a factor 8, else linear; `extra`: more np to
// include (published points). The linear axis has its ticks on whole np only, a step of 1,
// 2, 5, 10, ... np (five ticks over 0 .. 2.2 read "0 0 1 1 2").
QAbstractAxis* MakeNpAxis(const Report& report, const std::vector<int>& extra = {}) {
  int low = 1 << 30, high = 1;
  for (const ReportRun& run : report.runs) {
    low = std::min(low, std::max(1, run.np));
    high = std::max(high, run.np);
  }
  for (int np : extra) {
    low = std::min(low, std::max(1, np));
    high = std::max(high, np);
  }
  if (high >= 8 * low) {
    auto* axis = new QLogValueAxis;
    axis->setBase(2);
    axis->setLabelFormat("%d");
    axis->setRange(low / 1.3, high * 1.3);
    axis->setTitleText("np (GPUs)");
    return axis;
  }
  double step = 1;
  for (double decade = 1; high / step > 8; decade *= 10) {
    for (double factor : {1, 2, 5}) {
      step = factor * decade;
      if (high / step <= 8) break;
    }
  }
  auto* axis = new QValueAxis;
  axis->setRange(0, high + step / 2);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
  axis->setMinorTickCount(0);
  axis->setLabelFormat("%d");
  axis->setTitleText("np (GPUs)");
  return axis;
}

// The x range an axis shows (value or log axis).
std::pair<double, double> AxisRange(const QAbstractAxis* axis) {
  if (const auto* log_axis = qobject_cast<const QLogValueAxis*>(axis)) return {log_axis->min(), log_axis->max()};
  const auto* value_axis = static_cast<const QValueAxis*>(axis);
  return {value_axis->min(), value_axis->max()};
}

// Series colours: Tableau 10 (Qt's theme repeats after 5, so model0 and model5 looked the
// same); past 10 series the colours come round again with a dash-dot, then dotted line.
QColor SeriesColor(size_t index) {
  static const QColor kColors[] = {{0x4E, 0x79, 0xA7}, {0xF2, 0x8E, 0x2B}, {0xE1, 0x57, 0x59}, {0x76, 0xB7, 0xB2},
                                   {0x59, 0xA1, 0x4F}, {0xED, 0xC9, 0x48}, {0xB0, 0x7A, 0xA1}, {0xFF, 0x9D, 0xA7},
                                   {0x9C, 0x75, 0x5F}, {0x79, 0x70, 0x6E}};
  return kColors[index % std::size(kColors)];
}

void StyleSeries(QLineSeries* series, size_t index) {
  static const Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashDotLine, Qt::DotLine};
  QPen pen(SeriesColor(index));
  pen.setWidth(2);
  pen.setStyle(kStyles[(index / 10) % std::size(kStyles)]);
  series->setPen(pen);
}

void Attach(QChart* chart, QAbstractSeries* series, QAbstractAxis* x, QAbstractAxis* y) {
  chart->addSeries(series);
  series->attachAxis(x);
  series->attachAxis(y);
}

QLineSeries* DashedSeries(const QString& name, QColor color) {
  auto* series = new QLineSeries;
  series->setName(name);
  QPen pen(color);
  pen.setStyle(Qt::DashLine);
  pen.setWidth(1);
  series->setPen(pen);
  return series;
}

}  // namespace

QChart* MakeThroughputChart(const Report& report) {
  QChart* chart = NewChart(QObject::tr("Throughput (images/s)"));
  QAbstractAxis* x = MakeNpAxis(report);
  // Log-log when np is on a log axis: ideal scaling is then a straight diagonal.
  const bool log_scale = qobject_cast<QLogValueAxis*>(x) != nullptr;
  QAbstractAxis* y = log_scale ? static_cast<QAbstractAxis*>(new QLogValueAxis)
                               : static_cast<QAbstractAxis*>(new QValueAxis);
  y->setTitleText(QObject::tr("images/s"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double top = 1;
  double bottom = 1e300;
  std::map<std::string, std::pair<const std::vector<const ReportRun*>*, QColor>> ideal_by_model;
  SeriesRuns groups = GroupBySeries(report);
  CapSeries(&groups, chart);
  size_t index = 0;
  for (const auto& [name, runs] : groups) {
    auto* series = new QLineSeries;
    series->setName(Shown(name));
    StyleSeries(series, index++);
    series->setPointsVisible(true);
    for (const ReportRun* run : runs) {
      series->append(run->np, run->images_per_sec);
      top = std::max(top, run->images_per_sec);
      bottom = std::min(bottom, std::max(1e-3, run->images_per_sec));
    }
    Attach(chart, series, x, y);
    ideal_by_model.emplace(runs.front()->model, std::make_pair(&runs, series->pen().color()));
  }
  // Ideal scaling of each model, dashed in the model's colour (one grey for all could not be
  // told apart), from np 1 where the axis shows it: a report of one run still gets a line.
  const double x_min = AxisRange(x).first;
  QList<QAbstractSeries*> ideals;
  for (const auto& [model, ideal_runs] : ideal_by_model) {
    const auto& [runs, color] = ideal_runs;
    const double single = runs->front()->images_per_sec_single;
    if (single <= 0) continue;
    auto* ideal = DashedSeries(QObject::tr("ideal %1").arg(QString::fromStdString(model)), color);
    if (runs->front()->np > 1 && x_min <= 1) ideal->append(1, single);
    for (const ReportRun* run : *runs) {
      ideal->append(run->np, run->np * single);
      top = std::max(top, run->np * single);
    }
    Attach(chart, ideal, x, y);
    ideals << ideal;
    // One point draws no line: then no legend entry either.
    if (ideal->count() < 2 || ideal->at(0) == ideal->at(ideal->count() - 1)) {
      HideFromLegend(chart, ideal);
    }
  }
  FitLegend(chart, ideals, QObject::tr("dashed: ideal scaling of each model"));
  if (auto* log_axis = qobject_cast<QLogValueAxis*>(y)) {
    log_axis->setBase(10);
    log_axis->setLabelFormat("%.0f");
    log_axis->setMinorTickCount(8);
    log_axis->setRange(std::pow(10, std::floor(std::log10(bottom))),
                       std::pow(10, std::ceil(std::log10(top))));
  } else {
    auto* value_axis = static_cast<QValueAxis*>(y);
    value_axis->setRange(0, top * 1.08);
    value_axis->applyNiceNumbers();
    value_axis->setLabelFormat("%.0f");
  }
  return chart;
}

// The published points to draw: those of models the report has runs of.
std::vector<const ReportReference*> DrawnReferences(const Report& report) {
  std::vector<const ReportReference*> drawn;
  for (const ReportReference& ref : report.reference) {
    const bool has_model = std::any_of(report.runs.begin(), report.runs.end(),
                                       [&](const ReportRun& run) { return run.model == ref.model; });
    if (has_model && ref.np > 0) drawn.push_back(&ref);
  }
  return drawn;
}

QChart* MakeEfficiencyChart(const Report& report) {
  SeriesRuns groups = GroupBySeries(report);
  const std::vector<const ReportReference*> references = DrawnReferences(report);
  int seeds = 0;  // hvdsim --seeds K: the runs' K (the largest), 0 without bands
  for (const ReportRun& run : report.runs) {
    if (run.HasBand()) seeds = std::max(seeds, run.seeds);
  }
  QChart* chart = NewChart(
      seeds > 0 ? QObject::tr("Scaling efficiency (% of ideal; bands: min-max over %1 seeds)").arg(seeds)
                : QObject::tr("Scaling efficiency (% of ideal)"));
  CapSeries(&groups, chart);
  std::vector<int> reference_np;
  for (const ReportReference* ref : references) reference_np.push_back(ref->np);
  QAbstractAxis* x = MakeNpAxis(report, reference_np);
  auto* y = new QValueAxis;
  y->setTitleText(QObject::tr("% of ideal"));
  y->setLabelFormat("%d");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double top = 100;
  std::map<std::string, QColor> model_color;  // the first series of each model
  size_t index = 0;
  for (const auto& [name, runs] : groups) {
    auto* series = new QLineSeries;
    series->setName(Shown(name));
    StyleSeries(series, index++);
    series->setPointsVisible(true);
    for (const ReportRun* run : runs) {
      series->append(run->np, run->scaling_efficiency * 100);
      top = std::max(top, run->scaling_efficiency * 100);
    }
    Attach(chart, series, x, y);
    model_color.emplace(runs.front()->model, series->pen().color());
    // The min-max band of the runs that have one, in the line's colour, see-through; no
    // legend entry of its own (the title says what bands are).
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    for (const ReportRun* run : runs) {
      if (!run->HasBand()) continue;
      upper->append(run->np, run->scaling_efficiency_hi * 100);
      lower->append(run->np, run->scaling_efficiency_lo * 100);
      top = std::max(top, run->scaling_efficiency_hi * 100);
    }
    if (upper->count() == 0) {
      delete upper;
      delete lower;
      continue;
    }
    auto* band = new QAreaSeries(upper, lower);
    band->setName(Shown(name) + QObject::tr(" min-max"));
    QColor fill = series->pen().color();
    fill.setAlpha(60);
    band->setBrush(fill);
    band->setPen(QPen(fill, 1));
    Attach(chart, band, x, y);
    HideFromLegend(chart, band);
  }
  // 100 % across the whole np axis (also under the published points): a report of one run,
  // or of one np, still gets a line.
  const auto [x_min, x_max] = AxisRange(x);
  auto* ideal = DashedSeries(QObject::tr("ideal"), QColor(0x70, 0x70, 0x70));
  ideal->append(x_min, 100);
  ideal->append(x_max, 100);
  Attach(chart, ideal, x, y);
  // Published points: one marker series per model, in the model's colour, with a legend entry.
  std::map<std::string, QScatterSeries*> published;
  for (const ReportReference* ref : references) {
    QScatterSeries*& markers = published[ref->model];
    if (!markers) {
      markers = new QScatterSeries;
      markers->setName(QObject::tr("published %1").arg(QString::fromStdString(ref->model)));
      markers->setMarkerShape(QScatterSeries::MarkerShapeStar);
      markers->setMarkerSize(14);
      markers->setColor(model_color.count(ref->model) ? model_color[ref->model] : QColor(Qt::black));
      markers->setBorderColor(QColor(Qt::black));
    }
    markers->append(ref->np, ref->scaling_efficiency * 100);
    top = std::max(top, ref->scaling_efficiency * 100);
  }
  for (const auto& [model, markers] : published) Attach(chart, markers, x, y);
  FitLegend(chart);
  y->setRange(0, std::ceil((top + 5) / 20) * 20);
  y->setTickCount(static_cast<int>(std::ceil((top + 5) / 20)) + 1);
  return chart;
}

// "resnet101, np 64" (plus the sweep label): the category of one run in the step split.
QString RunCategory(const ReportRun& run) {
  return QStringLiteral("%1, np %2%3")
      .arg(QString::fromStdString(run.model))
      .arg(run.np)
      .arg(run.label.empty() ? QString() : " (" + Shown(run.label, kShownRowLabelChars) + ")");
}

// Horizontal bars, one row per run: the run labels are written level and in full, so that
// a sweep of 3 models x 10 np (30 bars) stays readable; rotated labels were cut to "resne...".
QChart* MakeStepTimeChart(const Report& report) {
  QChart* chart = NewChart(QObject::tr("Step time split (ms per step)"));
  auto* compute = new QBarSet(QObject::tr("compute"));
  auto* exposed = new QBarSet(QObject::tr("exposed communication"));
  auto* negotiation = new QBarSet(QObject::tr("negotiation"));
  auto* other = new QBarSet(QObject::tr("other"));
  compute->setColor(QColor(0x59, 0xA1, 0x4F));
  exposed->setColor(QColor(0x4E, 0x79, 0xA7));
  negotiation->setColor(QColor(0xF2, 0x8E, 0x2B));
  other->setColor(QColor(0xBA, 0xB0, 0xAC));
  QStringList categories;
  double top = 0;
  // Report order top to bottom (Qt draws the first category at the bottom): the first kMaxBars.
  const size_t shown = std::min(report.runs.size(), kMaxBars);
  if (shown < report.runs.size())
    chart->setTitle(chart->title() + QObject::tr(": the first %1 of %2 runs").arg(shown).arg(report.runs.size()));
  for (auto it = report.runs.rend() - static_cast<std::ptrdiff_t>(shown); it != report.runs.rend(); ++it) {
    const ReportRun& run = *it;
    categories << RunCategory(run);
    const double exposed_only = std::max(0.0, run.exposed_comm_s - run.negotiation_s);
    const double rest = std::max(0.0, run.step_time_s - run.compute_s - run.exposed_comm_s);
    *compute << run.compute_s * 1e3;
    *exposed << exposed_only * 1e3;
    *negotiation << run.negotiation_s * 1e3;
    *other << rest * 1e3;
    top = std::max(top, std::max(run.step_time_s, run.compute_s + run.exposed_comm_s) * 1e3);
  }
  auto* series = new QHorizontalStackedBarSeries;
  series->append({compute, exposed, negotiation, other});
  series->setBarWidth(0.75);
  chart->addSeries(series);
  auto* runs = new QBarCategoryAxis;
  runs->append(categories);
  runs->setTitleText(QObject::tr("run (model, np)"));
  // Qt Charts cuts labels laid out while the view is still small (a hidden tab) and then
  // keeps asking for the cut width; the labels are level, so draw them whole.
  runs->setTruncateLabels(false);
  auto* ms = new QValueAxis;
  ms->setTitleText(QObject::tr("ms per step"));
  ms->setRange(0, top * 1.1 + 1e-9);
  ms->applyNiceNumbers();
  ms->setLabelFormat("%.0f");
  chart->addAxis(ms, Qt::AlignBottom);
  chart->addAxis(runs, Qt::AlignLeft);
  series->attachAxis(ms);
  series->attachAxis(runs);
  return chart;
}

QString SizeLabel(int log2_bytes) {
  static const char kUnits[] = {'K', 'M', 'G', 'T', 'P', 'E'};
  if (log2_bytes < 10) return QString::number(1 << std::max(0, log2_bytes));
  const int unit = std::min<int>(log2_bytes / 10, std::size(kUnits));
  return QString::number(1LL << (log2_bytes - 10 * unit)) + QChar(kUnits[unit - 1]);
}

QChart* MakeBusBandwidthChart(const CollectiveReport& report) {
  QString title = QObject::tr("Bus bandwidth (GB/s)");
  if (!report.collective.empty()) {
    title = QObject::tr("%1 bus bandwidth (GB/s)").arg(QString::fromStdString(report.collective));
    if (report.np > 0) title += QObject::tr(", np %1").arg(report.np);
    if (report.nodes > 0) title += (report.nodes == 1 ? QObject::tr(" on 1 node") : QObject::tr(" on %1 nodes").arg(report.nodes));
  }
  QChart* chart = NewChart(title);
  auto* raw = new QLineSeries;
  raw->setName(QObject::tr("NCCL (raw) busbw"));
  StyleSeries(raw, 0);
  raw->setPointsVisible(true);
  auto* hvd = new QLineSeries;
  hvd->setName(QObject::tr("Horovod (hvd) busbw"));
  StyleSeries(hvd, 1);
  hvd->setPointsVisible(true);
  double low = 1e300, high = 0, top = 0;
  for (const CollectiveRow& row : report.rows) {
    const double at = std::log2(row.bytes);
    low = std::min(low, at);
    high = std::max(high, at);
    raw->append(at, row.raw_busbw_gbps);
    top = std::max(top, row.raw_busbw_gbps);
    if (row.has_hvd) {
      hvd->append(at, row.hvd_busbw_gbps);
      top = std::max(top, row.hvd_busbw_gbps);
    }
  }
  if (report.rows.empty()) low = high = 0;
  // Size on log2(bytes), labelled at whole powers of two: at most about 12 labels.
  auto* size = new QCategoryAxis;
  const int first = static_cast<int>(std::floor(low)), last = static_cast<int>(std::ceil(high));
  const int step = std::max(1, (last - first + 11) / 12);
  size->setMin(first - 0.5);
  size->setMax(last + 0.5);
  size->setStartValue(first - 0.5);
  for (int k = first; k <= last; k += step) size->append(SizeLabel(k), k);
  size->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  size->setTitleText(QObject::tr("message size (bytes, log2)"));
  auto* gbps = new QValueAxis;
  gbps->setTitleText(QObject::tr("busbw (GB/s)"));
  gbps->setRange(0, top * 1.1 + 1e-9);
  gbps->applyNiceNumbers();
  gbps->setLabelFormat("%.0f");
  chart->addAxis(size, Qt::AlignBottom);
  chart->addAxis(gbps, Qt::AlignLeft);
  Attach(chart, raw, size, gbps);
  if (hvd->count() > 0)
    Attach(chart, hvd, size, gbps);
  else
    delete hvd;
  return chart;
}

QChart* MakeCollectiveTimeChart(const Trace& trace) {
  QChart* chart = NewChart(QObject::tr("Time in collectives per rank (ms)"));
  auto* communication = new QBarSet(QObject::tr("in collectives"));
  auto* negotiation = new QBarSet(QObject::tr("negotiation"));
  communication->setColor(QColor(0x4E, 0x79, 0xA7));
  negotiation->setColor(QColor(0xF2, 0x8E, 0x2B));
  QStringList categories;
  double top = 0;
  for (const ProcessBusyTime& busy : CollectiveTimePerProcess(trace)) {
    categories << QString::fromStdString(busy.process);
    *communication << busy.communication_us / 1e3;
    *negotiation << busy.negotiation_us / 1e3;
    top = std::max({top, busy.communication_us / 1e3, busy.negotiation_us / 1e3});
  }
  auto* series = new QBarSeries;
  series->append({communication, negotiation});
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setLabelsAngle(categories.size() > 12 ? -90 : 0);
  x->setTitleText(QObject::tr("process"));
  auto* y = new QValueAxis;
  y->setTitleText(QObject::tr("ms in the trace"));
  y->setRange(0, top * 1.1 + 1e-9);
  y->applyNiceNumbers();
  y->setLabelFormat("%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  return chart;
}

}  // namespace hvdview
