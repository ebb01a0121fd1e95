// Charts tab: report charts (throughput, efficiency, step time) and the per-rank time in
// collectives of the open timeline, each exportable.
#pragma once

#include <QChartView>
#include <QWidget>
#include <memory>

#include "core/report_model.h"
#include "core/trace_model.h"

namespace hvdview {

enum class ChartKind { kThroughput, kEfficiency, kStepTime, kCollectives };

class ChartsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ChartsPanel(QWidget* parent = nullptr);

  void setReport(const Report& report);
  void setTrace(const Trace& trace);
  QChartView* chartView(ChartKind kind) const;
  // Which charts have content (a report, a timeline).
  bool hasReport() const { return has_report_; }
  bool hasTrace() const { return has_trace_; }

 private:
  void replaceChart(ChartKind kind, QChart* chart);
  void updateVisibility();

  QChartView* views_[4];
  bool has_report_ = false;
  bool has_trace_ = false;
};

}  // namespace hvdview
