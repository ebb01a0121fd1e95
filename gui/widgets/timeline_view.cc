#include "widgets/timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace hvdview {
namespace {

constexpr int kScrollBarWidth = 12;
constexpr double kMinUsPerPixel = 1e-4;  // 0.1 ns per pixel
constexpr int kClickSlop = 4;

}  // namespace

TimelineView::TimelineView(QWidget* parent)
    : QWidget(parent), scroll_bar_(new QScrollBar(Qt::Vertical, this)) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(false);
  setMinimumSize(400, 120);
  setAttribute(Qt::WA_OpaquePaintEvent);
  connect(scroll_bar_, &QScrollBar::valueChanged, this, [this](int value) {
    view_.scroll_y = value;
    update();
  });
}

void TimelineView::setTrace(std::shared_ptr<Trace> trace) {
  trace_ = std::move(trace);
  collapsed_.clear();
  view_.selected.reset();
  view_.selection.reset();
  if (trace_) view_.origin = trace_->min_time + view_.shift;
  relayout();
  fitAll();
}

void TimelineView::setTimeShift(double shift_us) {
  const double delta = shift_us - view_.shift;
  view_.shift = shift_us;
  view_.origin += delta;
  update();
}

void TimelineView::setTimeOrigin(double origin_us) {
  view_.origin = origin_us;
  update();
}

int TimelineView::timeAreaWidth() const {
  return std::max(1, width() - geometry_.header_width - kScrollBarWidth);
}

void TimelineView::setViewRange(double start_us, double end_us) {
  if (!(end_us > start_us)) end_us = start_us + 1;
  const double us_per_px = std::max(kMinUsPerPixel, (end_us - start_us) / timeAreaWidth());
  if (start_us == view_.start && us_per_px == view_.us_per_px) return;
  view_.start = start_us;
  view_.us_per_px = us_per_px;
  emitRange();
  update();
}

void TimelineView::fitAll() {
  if (!trace_ || trace_->empty()) return setViewRange(0, 1000);
  const double span = std::max(1.0, trace_->max_time - trace_->min_time);
  setViewRange(trace_->min_time + view_.shift - span * 0.01,
               trace_->max_time + view_.shift + span * 0.01);
}

void TimelineView::zoomAround(double factor, double anchor_x) {
  const double anchor_time = view_.start + (anchor_x - timeAreaLeft()) * view_.us_per_px;
  const double us_per_px = std::max(kMinUsPerPixel, view_.us_per_px * factor);
  const double start = anchor_time - (anchor_x - timeAreaLeft()) * us_per_px;
  setViewRange(start, start + us_per_px * timeAreaWidth());
}

std::optional<std::pair<double, double>> TimelineView::selection() const {
  if (!view_.selection) return std::nullopt;
  auto [a, b] = *view_.selection;
  if (b < a) std::swap(a, b);
  return std::make_pair(a - view_.shift, b - view_.shift);
}

void TimelineView::setSelection(double start_trace_us, double end_trace_us) {
  if (end_trace_us < start_trace_us) std::swap(start_trace_us, end_trace_us);
  view_.selection = std::make_pair(start_trace_us + view_.shift, end_trace_us + view_.shift);
  update();
  emit rangeSelected(start_trace_us, end_trace_us);
}

void TimelineView::clearSelection() {
  view_.selection.reset();
  update();
  emit rangeCleared();
}

void TimelineView::selectSlice(const SliceRef& ref, bool reveal) {
  if (!trace_) return;
  view_.selected = ref;
  if (reveal) {
    const EventView event = ViewOf(*trace_, ref);
    const double span = viewEnd() - viewStart();
    const double start = event.start + view_.shift;
    if (event.dur > span * 0.9) {
      setViewRange(start - event.dur * 0.05, start + event.dur * 1.05);
    } else if (start < viewStart() || start + event.dur > viewEnd()) {
      const double middle = start + event.dur / 2;
      setViewRange(middle - span / 2, middle + span / 2);
    }
    for (const DisplayRow& row : rows_) {
      if (row.kind == DisplayRow::Kind::kSlices && row.lane == ref.lane &&
          row.row == std::max(0, ref.row)) {
        const int visible = height() - geometry_.ruler_height;
        if (row.y < view_.scroll_y || row.y + row.height > view_.scroll_y + visible) {
          setScrollY(row.y - visible / 2);
        }
        break;
      }
    }
  }
  update();
  emit sliceSelected(ref);
}

void TimelineView::setProcessOrder(ProcessOrder order) {
  if (!trace_) return;
  SortProcesses(*trace_, order);
  relayout();
}

void TimelineView::setProcessCollapsed(int64_t pid, bool collapsed) {
  if (collapsed) {
    collapsed_.insert(pid);
  } else {
    collapsed_.erase(pid);
  }
  relayout();
}

void TimelineView::setShowLabels(bool show) {
  view_.show_labels = show;
  update();
}

int TimelineView::contentHeight() const {
  return rows_.empty() ? 0 : rows_.back().y + rows_.back().height;
}

void TimelineView::relayout() {
  rows_ = trace_ ? BuildDisplayRows(*trace_, collapsed_, geometry_) : std::vector<DisplayRow>{};
  updateScrollBar();
  update();
}

void TimelineView::updateScrollBar() {
  const int visible = std::max(0, height() - geometry_.ruler_height);
  scroll_bar_->setGeometry(width() - kScrollBarWidth, geometry_.ruler_height, kScrollBarWidth,
                           visible);
  scroll_bar_->setPageStep(visible);
  scroll_bar_->setSingleStep(geometry_.row_height);
  scroll_bar_->setRange(0, std::max(0, contentHeight() - visible));
  view_.scroll_y = scroll_bar_->value();
}

void TimelineView::setScrollY(int y) {
  scroll_bar_->setValue(std::clamp(y, 0, scroll_bar_->maximum()));
}

void TimelineView::emitRange() {
  emit viewRangeChanged(viewStart(), viewEnd());
}

const DisplayRow* TimelineView::rowAtY(int y) const {
  if (y < geometry_.ruler_height) return nullptr;
  const int content_y = y - geometry_.ruler_height + view_.scroll_y;
  auto it = std::partition_point(rows_.begin(), rows_.end(), [content_y](const DisplayRow& row) {
    return row.y + row.height <= content_y;
  });
  return it == rows_.end() || it->y > content_y ? nullptr : &*it;
}

QRect TimelineView::sliceRect(const SliceRef& ref) const {
  if (!trace_) return {};
  for (const DisplayRow& row : rows_) {
    if (row.kind != DisplayRow::Kind::kSlices || row.lane != ref.lane ||
        row.row != std::max(0, ref.row)) {
      continue;
    }
    const EventView event = ViewOf(*trace_, ref);
    const int y = geometry_.ruler_height + row.y - view_.scroll_y;
    const double x0 = xForTraceTime(event.start);
    const double x1 = xForTraceTime(event.start + event.dur);
    return QRect(QPoint(static_cast<int>(std::floor(x0)), y + 1),
                 QPoint(static_cast<int>(std::ceil(x1)) - 1, y + row.height - 2));
  }
  return {};
}

std::optional<SliceRef> TimelineView::sliceAt(const QPoint& pos) const {
  const DisplayRow* row = rowAtY(pos.y());
  if (!trace_ || !row || row->kind != DisplayRow::Kind::kSlices || pos.x() < timeAreaLeft()) {
    return std::nullopt;
  }
  const Lane& lane = trace_->lanes[row->lane];
  const double t = traceTimeAtX(pos.x());
  const double slop = 2 * view_.us_per_px;
  if (static_cast<size_t>(row->row) < lane.rows.size()) {
    const auto& slices = lane.rows[static_cast<size_t>(row->row)].slices;
    auto it = std::partition_point(slices.begin(), slices.end(),
                                   [t, slop](const Slice& s) { return s.end() + slop < t; });
    if (it != slices.end() && it->start - slop <= t) {
      return SliceRef{row->lane, row->row, static_cast<uint32_t>(it - slices.begin())};
    }
  }
  if (row->row == 0) {
    auto it = std::partition_point(lane.instants.begin(), lane.instants.end(),
                                   [t, slop](const Instant& i) { return i.time + 2 * slop < t; });
    if (it != lane.instants.end() && it->time - 2 * slop <= t) {
      return SliceRef{row->lane, -1, static_cast<uint32_t>(it - lane.instants.begin())};
    }
  }
  return std::nullopt;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QRect area(0, 0, width() - kScrollBarWidth, height());
  if (!trace_) {
    painter.fillRect(rect(), Qt::white);
    painter.drawText(area, Qt::AlignCenter, tr("Open a timeline (File > Open)"));
    return;
  }
  painter.fillRect(QRect(area.right() + 1, 0, kScrollBarWidth, height()), palette().window());
  PaintTimeline(painter, area, *trace_, rows_, view_, geometry_, collapsed_);
}

void TimelineView::resizeEvent(QResizeEvent*) {
  // Keep the visible time span when the widget changes size.
  if (last_area_width_ > 0) view_.us_per_px *= double(last_area_width_) / timeAreaWidth();
  last_area_width_ = timeAreaWidth();
  updateScrollBar();
  emitRange();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const QPoint angle = event->angleDelta();
  if (angle.y() != 0) {
    const double factor = std::pow(0.8, angle.y() / 120.0);
    zoomAround(factor, std::max<double>(timeAreaLeft(), event->position().x()));
  } else if (angle.x() != 0) {
    const double shift = -angle.x() / 120.0 * timeAreaWidth() * 0.1 * view_.us_per_px;
    setViewRange(viewStart() + shift, viewEnd() + shift);
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  press_pos_ = event->position().toPoint();
  press_start_ = view_.start;
  press_scroll_ = view_.scroll_y;
  moved_ = false;
  const bool on_ruler = press_pos_.y() < geometry_.ruler_height;
  if ((event->modifiers() & Qt::ShiftModifier) || on_ruler) {
    drag_ = Drag::kSelect;
    const double t = view_.start + (press_pos_.x() - timeAreaLeft()) * view_.us_per_px;
    view_.selection = std::make_pair(t, t);
  } else {
    drag_ = Drag::kPan;
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if ((pos - press_pos_).manhattanLength() >= kClickSlop) moved_ = true;
  if (drag_ == Drag::kPan && moved_) {
    const double start = press_start_ - (pos.x() - press_pos_.x()) * view_.us_per_px;
    setViewRange(start, start + view_.us_per_px * timeAreaWidth());
    setScrollY(press_scroll_ - (pos.y() - press_pos_.y()));
  } else if (drag_ == Drag::kSelect && view_.selection) {
    view_.selection->second = view_.start + (pos.x() - timeAreaLeft()) * view_.us_per_px;
    update();
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const Drag drag = std::exchange(drag_, Drag::kNone);
  if (drag == Drag::kSelect) {
    if (!moved_) return clearSelection();
    mouseMoveEvent(event);
    const auto range = selection();
    if (range) emit rangeSelected(range->first, range->second);
  } else if (drag == Drag::kPan && !moved_) {
    handleClick(event->position().toPoint());
  }
}

void TimelineView::handleClick(const QPoint& pos) {
  const DisplayRow* row = rowAtY(pos.y());
  if (row && row->kind == DisplayRow::Kind::kProcess) {
    const int64_t pid = trace_->processes[row->process].pid;
    setProcessCollapsed(pid, collapsed_.count(pid) == 0);
    return;
  }
  if (const auto ref = sliceAt(pos)) return selectSlice(*ref, false);
  view_.selected.reset();
  update();
  emit sliceCleared();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const double center = timeAreaLeft() + timeAreaWidth() / 2.0;
  const double step = (viewEnd() - viewStart()) * 0.15;
  switch (event->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoomAround(0.7, center);
      break;
    case Qt::Key_S:
    case Qt::Key_Minus:
      zoomAround(1 / 0.7, center);
      break;
    case Qt::Key_A:
    case Qt::Key_Left:
      setViewRange(viewStart() - step, viewEnd() - step);
      break;
    case Qt::Key_D:
    case Qt::Key_Right:
      setViewRange(viewStart() + step, viewEnd() + step);
      break;
    case Qt::Key_Up:
      setScrollY(view_.scroll_y - geometry_.row_height * 3);
      break;
    case Qt::Key_Down:
      setScrollY(view_.scroll_y + geometry_.row_height * 3);
      break;
    case Qt::Key_F:
    case Qt::Key_0:
      fitAll();
      break;
    case Qt::Key_Escape:
      clearSelection();
      break;
    default:
      QWidget::keyPressEvent(event);
  }
}

}  // namespace hvdview
