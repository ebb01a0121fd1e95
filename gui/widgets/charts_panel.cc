#include "widgets/charts_panel.h"

#include <QAction>
#include <QFileDialog>
#include <QGridLayout>
#include <QMessageBox>

#include "widgets/chart_factory.h"
#include "widgets/image_export.h"

namespace hvdview {

ChartsPanel::ChartsPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  const char* placeholders[5] = {
      "Throughput: open a report (File > Open)", "Scaling efficiency: open a report",
      "Step time split: open a report", "Time in collectives per rank: open a timeline",
      "Bus bandwidth: open a collective sweep report"};
  layout->setColumnStretch(0, 1);
  layout->setColumnStretch(1, 1);
  for (int i = 0; i < 5; ++i) {
    auto* chart = new QChart;
    chart->setTitle(tr(placeholders[i]));
    views_[i] = new QChartView(chart, this);
    views_[i]->setRenderHint(QPainter::Antialiasing);
    views_[i]->setMinimumSize(320, 240);
    // Throughput, efficiency and per-rank time stacked on the left; the step split (one row
    // per run: 30 for 3 models x 10 np) gets the full height on the right.
    const ChartKind kind = static_cast<ChartKind>(i);
    if (kind == ChartKind::kStepTime)
      layout->addWidget(views_[i], 0, 1, 3, 1);
    else if (kind == ChartKind::kBusBandwidth)
      layout->addWidget(views_[i], 3, 0, 1, 2);
    else
      layout->addWidget(views_[i], kind == ChartKind::kCollectives ? 2 : i, 0);
    auto* export_action = new QAction(tr("Export chart (PNG/SVG)..."), views_[i]);
    views_[i]->setContextMenuPolicy(Qt::ActionsContextMenu);
    views_[i]->addAction(export_action);
    connect(export_action, &QAction::triggered, this, [this, i] {
      const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), tr("chart.png"),
                                                        tr("Images (*.png *.svg)"));
      QString error;
      if (!path.isEmpty() && !ExportWidget(views_[i], path, &error)) {
        QMessageBox::warning(this, tr("hvdview"), error);
      }
    });
  }
  updateVisibility();
}

QChartView* ChartsPanel::chartView(ChartKind kind) const {
  return views_[static_cast<int>(kind)];
}

void ChartsPanel::replaceChart(ChartKind kind, QChart* chart) {
  QChartView* view = chartView(kind);
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

void ChartsPanel::setReport(const Report& report) {
  replaceChart(ChartKind::kThroughput, MakeThroughputChart(report));
  replaceChart(ChartKind::kEfficiency, MakeEfficiencyChart(report));
  replaceChart(ChartKind::kStepTime, MakeStepTimeChart(report));
  has_report_ = true;
  updateVisibility();
}

void ChartsPanel::setTrace(const Trace& trace) {
  replaceChart(ChartKind::kCollectives, MakeCollectiveTimeChart(trace));
  has_trace_ = true;
  updateVisibility();
}

void ChartsPanel::setCollectiveReport(const CollectiveReport& report) {
  replaceChart(ChartKind::kBusBandwidth, MakeBusBandwidthChart(report));
  has_sweep_ = true;
  updateVisibility();
}

// The per-rank placeholder ("open a timeline") gives its room to the report charts once a
// report is open without a timeline; the bus bandwidth row shows only with a collective
// sweep, and then the training report placeholders give it theirs.
void ChartsPanel::updateVisibility() {
  const bool only_sweep = has_sweep_ && !has_report_;
  chartView(ChartKind::kCollectives)->setVisible(has_trace_ || (!has_report_ && !has_sweep_));
  for (ChartKind kind : {ChartKind::kThroughput, ChartKind::kEfficiency, ChartKind::kStepTime})
    chartView(kind)->setVisible(!only_sweep);
  chartView(ChartKind::kBusBandwidth)->setVisible(has_sweep_);
}

}  // namespace hvdview
