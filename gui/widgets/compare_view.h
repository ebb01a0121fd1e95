// Compare mode: two timelines (e.g. measured and simulated) one above the other on one time
// scale, aligned at the n-th occurrence of a named event and/or by an offset.
#pragma once

#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QWidget>

#include "widgets/timeline_view.h"

namespace hvdview {

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

  void setTraces(std::shared_ptr<Trace> top, const QString& top_label,
                 std::shared_ptr<Trace> bottom, const QString& bottom_label);
  void setTopTrace(std::shared_ptr<Trace> trace, const QString& label);
  void setBottomTrace(std::shared_ptr<Trace> trace, const QString& label);
  TimelineView* topView() const { return top_; }
  TimelineView* bottomView() const { return bottom_; }

  // Shifts the bottom trace so that the n-th `name` of both traces (first process having it)
  // start at the same time, plus `offset_us`. An empty name aligns trace starts. Returns
  // false (and says why in the status line) when an event is missing.
  bool align(const QString& name, int occurrence, double offset_us);
  QString statusText() const { return status_->text(); }

 private:
  void applyFromControls();
  void showDetails(TimelineView* view, const SliceRef& ref);

  TimelineView* top_;
  TimelineView* bottom_;
  QLabel* top_label_;
  QLabel* bottom_label_;
  QString top_name_, bottom_name_;  // the files shown, for messages
  QLineEdit* name_edit_;
  QSpinBox* occurrence_;
  QDoubleSpinBox* offset_;
  QLabel* status_;
  QLabel* details_;
};

}  // namespace hvdview
