// The timeline widget: every lane of every rank, zoom (wheel, toward the cursor), pan (drag),
// range selection / ruler (shift-drag or drag on the ruler), click for slice details.
#pragma once

#include <QScrollBar>
#include <QWidget>
#include <memory>
#include <optional>
#include <set>

#include "core/trace_model.h"
#include "widgets/timeline_painter.h"

namespace hvdview {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // Shows `trace` (shared with other views); fits the whole trace.
  void setTrace(std::shared_ptr<Trace> trace);
  const Trace* trace() const { return trace_.get(); }

  // Display time = trace time + shift (compare mode aligns two traces with it).
  void setTimeShift(double shift_us);
  double timeShift() const { return view_.shift; }
  // Display time labelled 0 on the ruler.
  void setTimeOrigin(double origin_us);

  // Visible range in display time (us).
  void setViewRange(double start_us, double end_us);
  double viewStart() const { return view_.start; }
  double viewEnd() const { return view_.start + timeAreaWidth() * view_.us_per_px; }
  double usPerPixel() const { return view_.us_per_px; }
  void fitAll();
  void zoomAround(double factor, double anchor_x);

  // Selected range in trace time.
  std::optional<std::pair<double, double>> selection() const;
  void setSelection(double start_trace_us, double end_trace_us);
  void clearSelection();

  std::optional<SliceRef> selectedSlice() const { return view_.selected; }
  // Selects a slice; with `reveal`, scrolls and pans so that it is visible.
  void selectSlice(const SliceRef& ref, bool reveal);

  void setProcessOrder(ProcessOrder order);
  void setProcessCollapsed(int64_t pid, bool collapsed);
  void setShowLabels(bool show);

  // Geometry helpers (also used by tests).
  int timeAreaLeft() const { return geometry_.header_width; }
  int timeAreaWidth() const;
  double xForTraceTime(double t) const { return timeAreaLeft() + view_.XOfTraceTime(t); }
  double traceTimeAtX(double x) const { return view_.TraceTimeAt(x - timeAreaLeft()); }
  // Rectangle of a slice's row band at the slice's time; empty when scrolled out of view.
  QRect sliceRect(const SliceRef& ref) const;
  std::optional<SliceRef> sliceAt(const QPoint& pos) const;
  int contentHeight() const;

 signals:
  void viewRangeChanged(double start_us, double end_us);
  void sliceSelected(const hvdview::SliceRef& ref);
  void sliceCleared();
  void rangeSelected(double start_trace_us, double end_trace_us);
  void rangeCleared();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  enum class Drag { kNone, kPan, kSelect };

  void relayout();
  void updateScrollBar();
  void setScrollY(int y);
  void emitRange();
  const DisplayRow* rowAtY(int y) const;
  void handleClick(const QPoint& pos);

  std::shared_ptr<Trace> trace_;
  TimelineGeometry geometry_;
  TimelineViewState view_;
  std::vector<DisplayRow> rows_;
  std::set<int64_t> collapsed_;
  QScrollBar* scroll_bar_;
  Drag drag_ = Drag::kNone;
  QPoint press_pos_;
  double press_start_ = 0;
  int press_scroll_ = 0;
  bool moved_ = false;
  int last_area_width_ = 0;
};

}  // namespace hvdview
