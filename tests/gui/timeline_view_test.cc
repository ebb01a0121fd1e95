// Timeline widget: zoom, pan, selection, click and search driven by simulated input, and
// rendering checked at known pixels (colours of known slices, not golden images).
#include <gtest/gtest.h>

#include <cstdio>

#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include "core/synthetic_trace.h"
#include "core/trace_parser.h"
#include "test_files.h"
#include "widgets/compare_view.h"
#include "widgets/image_export.h"
#include "widgets/timeline_painter.h"
#include "widgets/timeline_panel.h"

namespace hvdview {
namespace {

constexpr int kAreaWidth = 1000;  // time area of the test views, in pixels

std::shared_ptr<Trace> LoadShared(const std::string& path) {
  LoadResult result = LoadTimelines({path});
  EXPECT_TRUE(result.errors.empty());
  return std::make_shared<Trace>(std::move(result.trace));
}

std::shared_ptr<Trace> Fixture(const std::string& name) {
  return LoadShared(testing::DataFile(name));
}

// Sizes `view` so that its time area is kAreaWidth pixels wide, and shows `trace`.
void Prepare(TimelineView& view, std::shared_ptr<Trace> trace) {
  view.resize(view.timeAreaLeft() + kAreaWidth + 12, 600);
  view.show();
  view.setShowLabels(false);
  view.setTrace(std::move(trace));
}

void SendWheel(QWidget* widget, QPointF pos, int delta) {
  QWheelEvent event(pos, widget->mapToGlobal(pos), QPoint(), QPoint(0, delta), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(widget, &event);
}

SliceRef FindSlice(const Trace& trace, const std::string& name, int64_t pid, int nth = 0) {
  for (const SliceRef& ref : FindByName(trace, name)) {
    if (trace.names[ViewOf(trace, ref).name] == name && trace.lanes[ref.lane].pid == pid &&
        nth-- == 0) {
      return ref;
    }
  }
  ADD_FAILURE() << "no slice " << name;
  return {};
}

QColor PixelAt(QWidget& widget, QPoint pos) {
  return widget.grab().toImage().pixelColor(pos);
}

TEST(TimelineView, FitShowsTheWholeTrace) {
  TimelineView view;
  auto trace = Fixture("runtime_small.json");
  Prepare(view, trace);
  EXPECT_LT(view.viewStart(), trace->min_time);
  EXPECT_GT(view.viewEnd(), trace->max_time);
  EXPECT_LT(view.viewEnd() - view.viewStart(), (trace->max_time - trace->min_time) * 1.1);
}

TEST(TimelineView, WheelZoomsTimeTowardTheCursor) {
  TimelineView view;
  Prepare(view, Fixture("runtime_small.json"));
  view.setViewRange(0, 10000);  // 10 us per pixel
  const QPointF cursor(view.timeAreaLeft() + 250, 120);
  EXPECT_DOUBLE_EQ(view.traceTimeAtX(cursor.x()), 2500);
  SendWheel(&view, cursor, 120);
  EXPECT_NEAR(view.usPerPixel(), 8, 1e-9);
  EXPECT_NEAR(view.traceTimeAtX(cursor.x()), 2500, 1e-6);
  EXPECT_NEAR(view.viewStart(), 500, 1e-6);
  SendWheel(&view, cursor, -240);  // zoom out twice
  EXPECT_NEAR(view.usPerPixel(), 8 / 0.64, 1e-9);
  EXPECT_NEAR(view.traceTimeAtX(cursor.x()), 2500, 1e-6);
}

TEST(TimelineView, DragPansTime) {
  TimelineView view;
  Prepare(view, Fixture("runtime_small.json"));
  view.setViewRange(0, 10000);
  QSignalSpy range_spy(&view, &TimelineView::viewRangeChanged);
  const int y = 200;
  QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, QPoint(view.timeAreaLeft() + 500, y));
  QTest::mouseMove(&view, QPoint(view.timeAreaLeft() + 400, y));
  QTest::mouseMove(&view, QPoint(view.timeAreaLeft() + 300, y));
  QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, QPoint(view.timeAreaLeft() + 300, y));
  EXPECT_NEAR(view.viewStart(), 2000, 1e-6);
  EXPECT_NEAR(view.viewEnd(), 12000, 1e-6);
  EXPECT_GE(range_spy.count(), 1);
  EXPECT_FALSE(view.selectedSlice().has_value());  // a drag is not a click
}

TEST(TimelineView, ShiftDragSelectsARangeWithStatistics) {
  TimelinePanel panel;
  panel.resize(1600, 700);
  panel.show();
  panel.setTrace(Fixture("runtime_small.json"));
  TimelineView* view = panel.view();
  view->setViewRange(0, 20000);
  QSignalSpy spy(view, &TimelineView::rangeSelected);
  const double x0 = view->xForTraceTime(0);
  const double x1 = view->xForTraceTime(9990);
  QTest::mousePress(view, Qt::LeftButton, Qt::ShiftModifier, QPoint(int(x0) + 1, 150));
  QTest::mouseMove(view, QPoint(int(x1), 150));
  QTest::mouseRelease(view, Qt::LeftButton, Qt::ShiftModifier, QPoint(int(x1), 150));
  ASSERT_EQ(spy.count(), 1);
  const auto selection = view->selection();
  ASSERT_TRUE(selection.has_value());
  EXPECT_NEAR(selection->first, 0, view->usPerPixel() * 2);
  EXPECT_NEAR(selection->second, 9990, view->usPerPixel() * 2);
  QTableWidget* table = panel.statsTable();
  ASSERT_GT(table->rowCount(), 5);
  EXPECT_EQ(table->item(0, 0)->text(), "STEP");
  bool found = false;
  for (int row = 0; row < table->rowCount(); ++row) {
    if (table->item(row, 0)->text() != "ALLREDUCE") continue;
    found = true;
    EXPECT_EQ(table->item(row, 1)->text(), "2");     // count
    EXPECT_EQ(table->item(row, 2)->text(), "4 ms");  // total
    EXPECT_EQ(table->item(row, 3)->text(), "2 ms");  // mean
    EXPECT_EQ(table->item(row, 4)->text(), "2 ms");  // max
  }
  EXPECT_TRUE(found);
}

TEST(TimelineView, DragOnTheRulerMeasures) {
  TimelineView view;
  Prepare(view, Fixture("runtime_small.json"));
  view.setViewRange(0, 10000);
  QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, QPoint(view.timeAreaLeft() + 100, 10));
  QTest::mouseMove(&view, QPoint(view.timeAreaLeft() + 350, 10));
  QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, QPoint(view.timeAreaLeft() + 350, 10));
  ASSERT_TRUE(view.selection().has_value());
  EXPECT_NEAR(view.selection()->second - view.selection()->first, 2500, 1e-6);
  EXPECT_NEAR(view.viewStart(), 0, 1e-9);  // no pan
}

TEST(TimelineView, ClickShowsSliceDetails) {
  TimelinePanel panel;
  panel.resize(1600, 700);
  panel.show();
  auto trace = Fixture("runtime_small.json");
  panel.setTrace(trace);
  TimelineView* view = panel.view();
  view->setViewRange(0, 20000);
  const SliceRef allreduce = FindSlice(*trace, "ALLREDUCE", 1);
  const QRect rect = view->sliceRect(allreduce);
  ASSERT_FALSE(rect.isEmpty());
  QTest::mouseClick(view, Qt::LeftButton, Qt::NoModifier, rect.center());
  ASSERT_TRUE(view->selectedSlice().has_value());
  EXPECT_EQ(*view->selectedSlice(), allreduce);
  const QString details = panel.detailsText();
  EXPECT_TRUE(details.contains("Name: ALLREDUCE")) << details.toStdString();
  EXPECT_TRUE(details.contains("Process: rank 1 (pid 1)"));
  EXPECT_TRUE(details.contains("Duration: 2 ms"));
  EXPECT_TRUE(details.contains("\"bytes\": 4194304"));
  // Clicking empty space clears the selection.
  QTest::mouseClick(view, Qt::LeftButton, Qt::NoModifier,
                    QPoint(int(view->xForTraceTime(19900)), rect.center().y()));
  EXPECT_FALSE(view->selectedSlice().has_value());
}

TEST(TimelineView, ClickOnAProcessHeaderCollapsesIt) {
  TimelineView view;
  Prepare(view, Fixture("runtime_small.json"));
  const int before = view.contentHeight();
  QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, QPoint(60, 26 + 5));
  EXPECT_LT(view.contentHeight(), before);
  QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, QPoint(60, 26 + 5));
  EXPECT_EQ(view.contentHeight(), before);
}

TEST(TimelineView, KeysZoomPanAndFit) {
  TimelineView view;
  Prepare(view, Fixture("runtime_small.json"));
  const double fitted = view.usPerPixel();
  QTest::keyClick(&view, Qt::Key_W);
  EXPECT_NEAR(view.usPerPixel(), fitted * 0.7, 1e-9);
  const double start = view.viewStart();
  QTest::keyClick(&view, Qt::Key_D);
  EXPECT_GT(view.viewStart(), start);
  QTest::keyClick(&view, Qt::Key_F);
  EXPECT_NEAR(view.usPerPixel(), fitted, 1e-9);
}

TEST(TimelinePanel, SearchNextAndPrevious) {
  TimelinePanel panel;
  panel.resize(1600, 700);
  panel.show();
  auto trace = Fixture("runtime_small.json");
  panel.setTrace(trace);
  panel.search("ring_allreduce");
  EXPECT_EQ(panel.searchStatus(), "1 of 4");
  const auto first = panel.view()->selectedSlice();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(trace->names[ViewOf(*trace, *first).name], "RING_ALLREDUCE");
  panel.findNext();
  EXPECT_EQ(panel.searchStatus(), "2 of 4");
  EXPECT_GE(ViewOf(*trace, *panel.view()->selectedSlice()).start, ViewOf(*trace, *first).start);
  panel.findPrevious();
  panel.findPrevious();
  EXPECT_EQ(panel.searchStatus(), "4 of 4");
  panel.search("no such thing");
  EXPECT_EQ(panel.searchStatus(), "no match");
}

TEST(TimelineRendering, KnownSlicesHaveTheirCategoryColour) {
  TimelineView view;
  auto trace = Fixture("runtime_small.json");
  Prepare(view, trace);
  view.setViewRange(0, 20000);
  const QImage image = view.grab().toImage();
  auto center_colour = [&](const std::string& name, int64_t pid) {
    return image.pixelColor(view.sliceRect(FindSlice(*trace, name, pid)).center());
  };
  EXPECT_EQ(center_colour("ALLREDUCE", 0), QColor(0x4E79A7));
  EXPECT_EQ(center_colour("QUEUE", 1), QColor(0xEDC948));
  EXPECT_EQ(center_colour("MEMCPY_IN_FUSION_BUFFER", 0), QColor(0xB07AA1));
  EXPECT_EQ(center_colour("NEGOTIATE_ALLREDUCE", 1), QColor(0xF28E2B));
  EXPECT_EQ(center_colour("BACKWARD", 1), QColor(0x59A14F));
  // The CYCLE_START instant is a vertical line in the cycle colour.
  const SliceRef cycle = FindSlice(*trace, "CYCLE_START", 0);
  const QRect cycle_rect = view.sliceRect(cycle);
  EXPECT_EQ(image.pixelColor(cycle_rect.left(), cycle_rect.bottom() - 1), QColor(0xE15759));
  // Structure: lane header column, ruler band, white space after the end of the trace.
  EXPECT_EQ(image.pixelColor(5, view.sliceRect(cycle).center().y()), QColor(0xEEEEEE));
  EXPECT_EQ(image.pixelColor(view.timeAreaLeft() + 40, 2), QColor(0xF6F6F6));
  EXPECT_EQ(image.pixelColor(int(view.xForTraceTime(19800)), 500), QColor(Qt::white));
}

// The last ruler label was drawn right of its tick and cut at the right edge ("2.5", "50 u"):
// near the edge it goes left of its tick, whole (and is left out if it would then overlap).
TEST(TimelineRendering, LastRulerLabelIsNotCut) {
  EXPECT_EQ(RulerLabelLeft(100, 40, 1000, -1e9), 103);
  EXPECT_EQ(RulerLabelLeft(980, 40, 1000, 900), 937);
  EXPECT_EQ(RulerLabelLeft(980, 40, 1000, 950), std::nullopt);
  TimelineView view;
  auto trace = Fixture("runtime_small.json");
  Prepare(view, trace);
  const int right = view.timeAreaLeft() + view.timeAreaWidth();  // first column past the area
  auto dark = [](const QImage& image, int x0, int x1) {
    for (int x = x0; x < x1; ++x) {
      for (int y = 0; y < 17; ++y) {
        if (image.pixelColor(x, y).lightness() < 160) return true;
      }
    }
    return false;
  };
  int labels_near_the_edge = 0;
  // 1 us a pixel, ticks every 100 us: the view slides by 9 px, so ticks pass 0..100 px
  // before the right edge.
  for (int shift = 0; shift < 100; shift += 9) {
    SCOPED_TRACE(shift);
    view.setViewRange(trace->min_time + shift, trace->min_time + shift + view.timeAreaWidth());
    const QImage image = view.grab().toImage();
    EXPECT_FALSE(dark(image, right - 2, right));
    labels_near_the_edge += dark(image, right - 30, right - 2);
  }
  EXPECT_GE(labels_near_the_edge, 3);
}

TEST(TimelineRendering, SelectionAndHighlightAreDrawn) {
  TimelineView view;
  auto trace = Fixture("runtime_small.json");
  Prepare(view, trace);
  view.setViewRange(0, 20000);
  const SliceRef step = FindSlice(*trace, "STEP", 0);
  const QRect rect = view.sliceRect(step);
  view.selectSlice(step, false);
  EXPECT_EQ(PixelAt(view, QPoint(rect.center().x(), rect.top())), QColor(Qt::black));
  view.setSelection(12000, 14000);
  const QColor tinted = PixelAt(view, QPoint(int(view.xForTraceTime(13000)), 590));
  EXPECT_NE(tinted, QColor(Qt::white));
  EXPECT_GT(tinted.blue(), tinted.red());
}

TEST(TimelineRendering, SubPixelSlicesMergeIntoBlocks) {
  std::string json = "[";
  for (int i = 0; i < 20000; ++i) {
    json += (i ? ",\n" : "\n") +
            std::string(
                "{\"ph\":\"X\",\"name\":\"MPI_ALLREDUCE\",\"pid\":0,"
                "\"tid\":0,\"ts\":") +
            std::to_string(i * 2) + ",\"dur\":1}";
  }
  json += "]";
  TimelineView view;
  Prepare(view, LoadShared(testing::WriteTempFile("dense.json", json)));
  view.setViewRange(0, 40000);  // 40 us per pixel: 20 slices per pixel
  const QImage image = view.grab().toImage();
  const int y = view.sliceRect(SliceRef{0, 0, 0}).center().y();
  int coloured = 0;
  for (int x = view.timeAreaLeft() + 1; x < view.timeAreaLeft() + kAreaWidth - 1; ++x) {
    if (image.pixelColor(x, y) == QColor(0x4E79A7)) ++coloured;
  }
  EXPECT_GE(coloured, kAreaWidth - 4);
}

// A 200,000-event trace pans and repaints; the time per frame is printed (a figure, not a
// bound: the suite runs on loaded machines; hvdview's own timing is a benchmark's job).
TEST(TimelineRendering, LargeTraceDrawsAndPans) {
  SyntheticTimelineSpec spec;
  spec.ranks = 16;
  spec.events = 200000;
  const std::string path = testing::TempPath("large.json");
  WriteSyntheticTimeline(path, spec);
  TimelineView view;
  Prepare(view, LoadShared(path));
  QElapsedTimer timer;
  timer.start();
  const double start = view.viewStart();
  for (int i = 0; i < 5; ++i) {
    view.setViewRange(view.viewStart() + 1000, view.viewEnd() + 1000);
    EXPECT_FALSE(view.grab().isNull());
  }
  EXPECT_NEAR(view.viewStart(), start + 5000, 1e-6);
  std::printf("large trace (16 ranks, 200k events): %.1f ms per pan and repaint\n", timer.elapsed() / 5.0);
}

TEST(CompareView, AlignsAtTheNthStepAndSharesTheTimeScale) {
  CompareView compare;
  compare.resize(1400, 800);
  compare.show();
  auto measured = Fixture("runtime_small.json");
  auto simulated = Fixture("simulated_small.json");
  compare.setTraces(measured, "measured", simulated, "simulated");
  ASSERT_TRUE(compare.align("STEP", 2, 0)) << compare.statusText().toStdString();
  EXPECT_DOUBLE_EQ(compare.bottomView()->timeShift(), 10000.0 - 11000.0);
  SendWheel(compare.topView(), QPointF(compare.topView()->timeAreaLeft() + 300, 100), 240);
  EXPECT_DOUBLE_EQ(compare.bottomView()->viewStart(), compare.topView()->viewStart());
  EXPECT_DOUBLE_EQ(compare.bottomView()->usPerPixel(), compare.topView()->usPerPixel());
  // The second STEP of rank 0 starts at the same x in both views.
  const QRect top = compare.topView()->sliceRect(FindSlice(*measured, "STEP", 0, 1));
  const QRect bottom = compare.bottomView()->sliceRect(FindSlice(*simulated, "STEP", 0, 1));
  EXPECT_EQ(top.left(), bottom.left());
  EXPECT_FALSE(compare.align("NO_SUCH_EVENT", 1, 0));
  EXPECT_TRUE(compare.statusText().contains("no occurrence"));
  ASSERT_TRUE(compare.align("", 1, 250));  // trace starts plus an offset
  EXPECT_DOUBLE_EQ(compare.bottomView()->timeShift(), 0.0 - 1000.0 + 250.0);
}

TEST(Export, PngAndSvg) {
  TimelineView view;
  Prepare(view, Fixture("runtime_small.json"));
  QString error;
  const QString png = QString::fromStdString(testing::TempPath("view.png"));
  const QString svg = QString::fromStdString(testing::TempPath("view.svg"));
  ASSERT_TRUE(ExportWidget(&view, png, &error)) << error.toStdString();
  ASSERT_TRUE(ExportWidget(&view, svg, &error)) << error.toStdString();
  EXPECT_EQ(QImage(png).size(), view.size());
  QFile file(svg);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(file.readAll().contains("<svg"));
  EXPECT_FALSE(ExportWidget(&view, QStringLiteral("/tmp/x.bmp"), &error));
  EXPECT_TRUE(error.contains("unsupported"));
}

}  // namespace
}  // namespace hvdview
