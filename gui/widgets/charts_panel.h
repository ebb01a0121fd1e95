// Charts tab: report charts (throughput, efficiency, step time) and the per-rank time in
// collectives of the open timeline, each exportable.
#pragma once

#include <QChartView>
#include <QWidget>
#include <memory>

#include "core/report_model.h"
#include "core/trace_model.h"

namespace hvdview {

// kBusBandwidth: a collective sweep report (hvdsim --collective), over the whole width.
enum class ChartKind { kThroughput, kEfficiency, kStepTime, kCollectives, kBusBandwidth };

class ChartsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ChartsPanel(QWidget* parent = nullptr);

  void setReport(const Report& report);
  void setTrace(const Trace& trace);
  void setCollectiveReport(const CollectiveReport& report);
  QChartView* chartView(ChartKind kind) const;
  // Which charts have content (a report, a timeline).
  bool hasReport() const { return has_report_; }
  bool hasTrace() const { return has_trace_; }
  bool hasCollectiveReport() const { return has_sweep_; }

 private:
  void replaceChart(ChartKind kind, QChart* chart);
  void updateVisibility();

  QChartView* views_[5];
  bool has_report_ = false;
  bool has_trace_ = false;
  bool has_sweep_ = false;
};

}  // namespace hvdview
