// Drawing of a timeline: ruler, lane headers and the visible slices only. Slices narrower
// than a pixel are merged into blocks, so the cost follows the pixels, not the events.
#pragma once

#include <QColor>
#include <QPainter>
#include <QRect>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/trace_model.h"

namespace hvdview {

// Sizes in pixels.
struct TimelineGeometry {
  int header_width = 170;
  int ruler_height = 26;
  int row_height = 16;
  int process_height = 18;
  int counter_height = 28;
};

// One horizontal band of the layout: a process header, a slice row of a lane, or a counter.
struct DisplayRow {
  enum class Kind { kProcess, kSlices, kCounter };
  Kind kind = Kind::kSlices;
  uint32_t process = 0;  // index into Trace::processes
  uint32_t lane = 0;
  int32_t row = 0;  // sub-row (depth) of the lane
  int y = 0;        // top, relative to the first row (before scrolling)
  int height = 0;
};

// Lays out processes in display order; collapsed processes show their header only.
std::vector<DisplayRow> BuildDisplayRows(const Trace& trace, const std::set<int64_t>& collapsed,
                                         const TimelineGeometry& geometry);

// What part of the trace is visible and what is highlighted.
struct TimelineViewState {
  double start = 0;  // display time at the left of the time area (us)
  double us_per_px = 1;
  double shift = 0;   // display time = trace time + shift
  double origin = 0;  // display time labelled 0 on the ruler
  int scroll_y = 0;
  std::optional<std::pair<double, double>> selection;  // display times
  std::optional<SliceRef> selected;
  bool show_labels = true;
  double TraceTimeAt(double x_in_area) const { return start + x_in_area * us_per_px - shift; }
  double XOfTraceTime(double t) const { return (t + shift - start) / us_per_px; }
};

QColor ColorOf(Category category);

// Left x of a ruler label `width` px wide for the tick at `tick_x`: just right of the tick,
// or just left of it where it would run past `right_edge` (the last label is not cut);
// nullopt where it would then overlap the label before, which ends at `previous_right`.
std::optional<double> RulerLabelLeft(double tick_x, double width, double right_edge,
                                     double previous_right);

// Paints everything into `widget_rect` (the whole widget, scrollbar excluded).
void PaintTimeline(QPainter& painter, const QRect& widget_rect, const Trace& trace,
                   const std::vector<DisplayRow>& rows, const TimelineViewState& view,
                   const TimelineGeometry& geometry, const std::set<int64_t>& collapsed);

}  // namespace hvdview
