#include "widgets/timeline_painter.h"

#include <QFontMetrics>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/time_format.h"

namespace hvdview {
namespace {

const QColor kHeaderBackground(0xEE, 0xEE, 0xEE);
const QColor kProcessBackground(0xD8, 0xDC, 0xE2);
const QColor kRulerBackground(0xF6, 0xF6, 0xF6);
const QColor kSelectionFill(30, 120, 255, 45);
const QColor kSelectionEdge(30, 90, 220);

// Screen geometry of the time area.
struct Area {
  double left = 0;
  double right = 0;
  int top = 0;  // below the ruler
  int bottom = 0;
};

QColor TextColorOn(const QColor& fill) {
  return fill.lightness() > 140 ? Qt::black : Qt::white;
}

void PaintSlice(QPainter& painter, const Trace& trace, const Slice& slice, double x0, double x1,
                int y, int h, const TimelineViewState& view, const Area& area) {
  const QColor fill = ColorOf(slice.category);
  const double left = std::max(x0, area.left - 2);
  const double right = std::min(x1, area.right + 2);
  const QRectF rect(left, y, right - left, h);
  painter.fillRect(rect, fill);
  if (slice.flags & kSliceUnfinished)
    painter.fillRect(rect, QBrush(fill.darker(160), Qt::BDiagPattern));
  if (x1 - x0 >= 4) {
    painter.setPen(fill.darker(135));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(rect.adjusted(0, 0, -1, -1));
  }
  const double visible = right - left;
  if (view.show_labels && visible > 24) {
    painter.setPen(TextColorOn(fill));
    const QString name = QString::fromStdString(trace.names[slice.name]);
    const QFontMetrics metrics = painter.fontMetrics();
    const QString text = metrics.elidedText(name, Qt::ElideRight, static_cast<int>(visible) - 6);
    if (!text.isEmpty() && text != QStringLiteral("…")) {
      painter.drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
    }
  }
}

// Draws one row; runs of slices narrower than a pixel become one block coloured by the
// longest slice seen in it, and slices hidden inside a block are skipped by binary search.
void PaintSliceRow(QPainter& painter, const Trace& trace, const Row& row, int y, int h,
                   const TimelineViewState& view, const Area& area) {
  const double t_left = view.TraceTimeAt(0);
  const double t_right = view.TraceTimeAt(area.right - area.left);
  const auto& slices = row.slices;
  auto it = std::partition_point(slices.begin(), slices.end(),
                                 [t_left](const Slice& s) { return s.end() < t_left; });
  while (it != slices.end() && it->start <= t_right) {
    const double x0 = area.left + view.XOfTraceTime(it->start);
    const double x1 = area.left + view.XOfTraceTime(it->end());
    if (x1 - x0 >= 1.0) {
      PaintSlice(painter, trace, *it, x0, x1, y, h, view, area);
      ++it;
      continue;
    }
    const double block_left = std::floor(x0);
    double block_right = std::floor(x1) + 1;
    Category dominant = it->category;
    double longest = it->dur;
    ++it;
    while (it != slices.end()) {
      const double boundary = view.TraceTimeAt(block_right - area.left);
      it = std::partition_point(it, slices.end(),
                                [boundary](const Slice& s) { return s.end() <= boundary; });
      if (it == slices.end() || it->start > t_right) break;
      const double nx0 = area.left + view.XOfTraceTime(it->start);
      const double nx1 = area.left + view.XOfTraceTime(it->end());
      if (nx0 >= block_right || nx1 - nx0 >= 1.0) break;
      block_right = std::floor(nx1) + 1;
      if (it->dur > longest) {
        longest = it->dur;
        dominant = it->category;
      }
      ++it;
    }
    painter.fillRect(QRectF(block_left, y, block_right - block_left, h), ColorOf(dominant));
  }
}

void PaintInstants(QPainter& painter, const Lane& lane, int y, int h, const TimelineViewState& view,
                   const Area& area) {
  const double t_left = view.TraceTimeAt(0);
  const double t_right = view.TraceTimeAt(area.right - area.left);
  auto it = std::partition_point(lane.instants.begin(), lane.instants.end(),
                                 [t_left](const Instant& i) { return i.time < t_left; });
  int last_x = -1;
  for (; it != lane.instants.end() && it->time <= t_right; ++it) {
    const int x = static_cast<int>(area.left + view.XOfTraceTime(it->time));
    if (x == last_x) continue;
    last_x = x;
    const QColor color = ColorOf(it->category);
    painter.fillRect(QRect(x, y, 1, h), color);
    const QPointF triangle[3] = {QPointF(x - 3, y), QPointF(x + 4, y), QPointF(x + 0.5, y + 5)};
    painter.setPen(Qt::NoPen);
    painter.setBrush(color);
    painter.drawPolygon(triangle, 3);
  }
}

void PaintCounter(QPainter& painter, const Lane& lane, int y, int h, const TimelineViewState& view,
                  const Area& area) {
  if (lane.counter.empty() || lane.counter_max <= 0) return;
  const double t_left = view.TraceTimeAt(0);
  const double t_right = view.TraceTimeAt(area.right - area.left);
  auto it = std::partition_point(lane.counter.begin(), lane.counter.end(),
                                 [t_left](const CounterPoint& p) { return p.time < t_left; });
  if (it != lane.counter.begin()) --it;
  QPolygonF shape;
  const double base = y + h - 1;
  double previous_y = base;
  shape << QPointF(std::max(area.left, area.left + view.XOfTraceTime(it->time)), base);
  for (; it != lane.counter.end(); ++it) {
    const double x = std::clamp(area.left + view.XOfTraceTime(it->time), area.left, area.right);
    const double value_y = base - (h - 3) * it->value / lane.counter_max;
    shape << QPointF(x, previous_y) << QPointF(x, value_y);
    previous_y = value_y;
    if (it->time > t_right) break;
  }
  shape << QPointF(area.right, previous_y) << QPointF(area.right, base);
  painter.setPen(QColor(0x2F, 0x6F, 0x9F));
  painter.setBrush(QColor(0x4E, 0x79, 0xA7, 90));
  painter.drawPolygon(shape);
}

void PaintRuler(QPainter& painter, const QRect& rect, const TimelineViewState& view,
                const TimelineGeometry& geometry, const Area& area) {
  painter.fillRect(QRect(rect.left(), rect.top(), rect.width(), geometry.ruler_height),
                   kRulerBackground);
  painter.setPen(QColor(0x88, 0x88, 0x88));
  painter.drawLine(QPointF(rect.left(), geometry.ruler_height - 0.5),
                   QPointF(rect.right(), geometry.ruler_height - 0.5));
  const double step = NiceTickStep(view.us_per_px, 90);
  const double right_time = view.start + (area.right - area.left) * view.us_per_px;
  double tick = std::ceil((view.start - view.origin) / step) * step + view.origin;
  double previous_right = -std::numeric_limits<double>::infinity();
  for (int guard = 0; tick <= right_time && guard < 1000; tick += step, ++guard) {
    const double x = area.left + (tick - view.start) / view.us_per_px;
    painter.setPen(QColor(0x88, 0x88, 0x88));
    painter.drawLine(QPointF(x, geometry.ruler_height - 7), QPointF(x, geometry.ruler_height));
    painter.setPen(Qt::black);
    const double label = std::fabs(tick - view.origin) < step * 1e-6 ? 0 : tick - view.origin;
    const QString text = QString::fromStdString(FormatDuration(label, 3));
    const double width = painter.fontMetrics().horizontalAdvance(text);
    if (auto left = RulerLabelLeft(x, width, area.right, previous_right)) {
      painter.drawText(QPointF(*left, 13), text);
      previous_right = *left + width;
    }
  }
}

// Vertical lines at the ruler ticks, under the slices.
void PaintGrid(QPainter& painter, const TimelineViewState& view, const Area& area) {
  const double step = NiceTickStep(view.us_per_px, 90);
  const double right_time = view.start + (area.right - area.left) * view.us_per_px;
  double tick = std::ceil((view.start - view.origin) / step) * step + view.origin;
  painter.setPen(QColor(0xE4, 0xE4, 0xE4));
  for (int guard = 0; tick <= right_time && guard < 1000; tick += step, ++guard) {
    const double x = area.left + (tick - view.start) / view.us_per_px;
    painter.drawLine(QPointF(x, area.top), QPointF(x, area.bottom));
  }
}

void PaintSelection(QPainter& painter, const TimelineViewState& view, const Area& area,
                    const TimelineGeometry& geometry) {
  if (!view.selection) return;
  auto [a, b] = *view.selection;
  if (b < a) std::swap(a, b);
  const double x0 = std::max(area.left, area.left + (a - view.start) / view.us_per_px);
  const double x1 = std::min(area.right, area.left + (b - view.start) / view.us_per_px);
  if (x1 < area.left || x0 > area.right) return;
  painter.fillRect(QRectF(x0, 0, std::max(1.0, x1 - x0), area.bottom), kSelectionFill);
  painter.setPen(kSelectionEdge);
  painter.drawLine(QPointF(x0, 0), QPointF(x0, area.bottom));
  painter.drawLine(QPointF(x1, 0), QPointF(x1, area.bottom));
  const QString label = QString::fromStdString("\u0394 " + FormatDuration(b - a, 4));
  const QRectF box(x0 + 2, geometry.ruler_height - 13,
                   painter.fontMetrics().horizontalAdvance(label) + 8, 13);
  painter.fillRect(box, kSelectionEdge);
  painter.setPen(Qt::white);
  painter.drawText(box, Qt::AlignCenter, label);
}

void PaintHeader(QPainter& painter, const Trace& trace, const DisplayRow& row, int y,
                 const TimelineGeometry& geometry, bool collapsed, int width) {
  if (row.kind == DisplayRow::Kind::kProcess) {
    painter.fillRect(QRect(0, y, width, row.height), kProcessBackground);
    QFont font = painter.font();
    font.setBold(true);
    painter.setFont(font);
    painter.setPen(Qt::black);
    const QString name = QString::fromStdString(trace.processes[row.process].name);
    painter.drawText(QRect(4, y, width - 8, row.height), Qt::AlignVCenter | Qt::AlignLeft,
                     (collapsed ? QStringLiteral("\u25B8 ") : QStringLiteral("\u25BE ")) + name);
    font.setBold(false);
    painter.setFont(font);
    return;
  }
  painter.fillRect(QRect(0, y, geometry.header_width, row.height), kHeaderBackground);
  if (row.row != 0) return;
  painter.setPen(QColor(0x33, 0x33, 0x33));
  const QString name = QString::fromStdString(trace.lanes[row.lane].name);
  const QString text =
      painter.fontMetrics().elidedText(name, Qt::ElideRight, geometry.header_width - 20);
  painter.drawText(QRect(14, y, geometry.header_width - 16, geometry.row_height),
                   Qt::AlignVCenter | Qt::AlignLeft, text);
}

void PaintHighlight(QPainter& painter, const Trace& trace, const SliceRef& ref, int y, int h,
                    const TimelineViewState& view, const Area& area) {
  const EventView event = ViewOf(trace, ref);
  double x0 = area.left + view.XOfTraceTime(event.start);
  double x1 = area.left + view.XOfTraceTime(event.start + event.dur);
  if (x1 - x0 < 3) {
    x0 -= 1.5;
    x1 += 1.5;
  }
  x0 = std::max(x0, area.left - 3);
  x1 = std::min(x1, area.right + 3);
  painter.setBrush(Qt::NoBrush);
  painter.setPen(QPen(Qt::black, 2));
  painter.drawRect(QRectF(x0, y + 1, x1 - x0, h - 2));
}

}  // namespace

std::optional<double> RulerLabelLeft(double tick_x, double width, double right_edge,
                                     double previous_right) {
  constexpr double kGap = 3;
  double left = tick_x + kGap;
  if (left + width > right_edge - 1) left = tick_x - kGap - width;
  if (left < previous_right + kGap) return std::nullopt;
  return left;
}

QColor ColorOf(Category category) {
  return QColor::fromRgb(CategoryColor(category));
}

std::vector<DisplayRow> BuildDisplayRows(const Trace& trace, const std::set<int64_t>& collapsed,
                                         const TimelineGeometry& geometry) {
  std::vector<DisplayRow> rows;
  int y = 0;
  auto add = [&](DisplayRow row) {
    row.y = y;
    y += row.height;
    rows.push_back(row);
  };
  for (uint32_t p = 0; p < trace.processes.size(); ++p) {
    const Process& process = trace.processes[p];
    add({DisplayRow::Kind::kProcess, p, 0, 0, 0, geometry.process_height});
    if (collapsed.count(process.pid)) continue;
    for (uint32_t lane_index : process.lanes) {
      const Lane& lane = trace.lanes[lane_index];
      if (lane.kind == LaneKind::kCounter) {
        add({DisplayRow::Kind::kCounter, p, lane_index, 0, 0, geometry.counter_height});
        continue;
      }
      const int32_t row_count = std::max<int32_t>(1, static_cast<int32_t>(lane.rows.size()));
      for (int32_t r = 0; r < row_count; ++r) {
        add({DisplayRow::Kind::kSlices, p, lane_index, r, 0, geometry.row_height});
      }
    }
  }
  return rows;
}

void PaintTimeline(QPainter& painter, const QRect& widget_rect, const Trace& trace,
                   const std::vector<DisplayRow>& rows, const TimelineViewState& view,
                   const TimelineGeometry& geometry, const std::set<int64_t>& collapsed) {
  painter.fillRect(widget_rect, Qt::white);
  const Area area{static_cast<double>(geometry.header_width),
                  static_cast<double>(widget_rect.right() + 1), geometry.ruler_height,
                  widget_rect.bottom() + 1};
  const int top = geometry.ruler_height - view.scroll_y;
  auto first = std::partition_point(rows.begin(), rows.end(), [&](const DisplayRow& row) {
    return top + row.y + row.height <= area.top;
  });
  PaintGrid(painter, view, area);
  painter.setClipRect(QRect(0, area.top, widget_rect.width(), area.bottom - area.top));
  for (auto it = first; it != rows.end() && top + it->y < area.bottom; ++it) {
    const int y = top + it->y;
    const bool is_collapsed = collapsed.count(trace.processes[it->process].pid) > 0;
    PaintHeader(painter, trace, *it, y, geometry, is_collapsed, widget_rect.width());
    if (it->kind == DisplayRow::Kind::kProcess) continue;
    painter.setClipRect(QRect(geometry.header_width, area.top,
                              widget_rect.width() - geometry.header_width, area.bottom - area.top));
    const Lane& lane = trace.lanes[it->lane];
    if (it->kind == DisplayRow::Kind::kCounter) {
      PaintCounter(painter, lane, y, it->height, view, area);
    } else {
      if (static_cast<size_t>(it->row) < lane.rows.size()) {
        PaintSliceRow(painter, trace, lane.rows[static_cast<size_t>(it->row)], y + 1,
                      it->height - 2, view, area);
      }
      if (it->row == 0) PaintInstants(painter, lane, y, it->height, view, area);
      const auto& selected = view.selected;
      if (selected && selected->lane == it->lane &&
          (selected->row == it->row || (selected->row < 0 && it->row == 0))) {
        PaintHighlight(painter, trace, *selected, y, it->height, view, area);
      }
    }
    painter.setClipRect(QRect(0, area.top, widget_rect.width(), area.bottom - area.top));
  }
  painter.setClipping(false);
  PaintRuler(painter, widget_rect, view, geometry, area);
  PaintSelection(painter, view, area, geometry);
}

}  // namespace hvdview
