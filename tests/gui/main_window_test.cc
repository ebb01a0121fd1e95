// The window: files opened by content on a worker thread, and cancellable loading.
#include "app/main_window.h"

#include <gtest/gtest.h>

#include <QMessageBox>
#include <QSignalSpy>
#include <QStatusBar>
#include <QToolButton>
#include <filesystem>

#include "core/synthetic_trace.h"
#include "test_files.h"

namespace hvdview {
namespace {

TEST(MainWindow, OpensTimelinesAndReportsByContent) {
  MainWindow window;
  window.show();
  auto* loader = window.findChild<TraceLoader*>();
  ASSERT_NE(loader, nullptr);
  QSignalSpy finished(loader, &TraceLoader::finished);
  window.openFiles({QString::fromStdString(testing::DataFile("report_small.csv")),
                    QString::fromStdString(testing::DataFile("runtime_small.json"))});
  EXPECT_TRUE(window.chartsPanel()->hasReport());
  ASSERT_TRUE(finished.wait(10000));
  const Trace* trace = window.timelinePanel()->view()->trace();
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->processes.size(), 2u);
  EXPECT_TRUE(window.chartsPanel()->hasTrace());
  EXPECT_EQ(window.compareView()->topView()->trace(), trace);
}

TEST(TraceLoader, LoadsOnAWorkerThreadAndCanBeCancelled) {
  SyntheticTimelineSpec spec;
  spec.events = 300000;
  spec.ranks = 8;
  const std::string path = testing::TempPath("loader.json");
  WriteSyntheticTimeline(path, spec);
  TraceLoader loader;
  std::shared_ptr<LoadResult> result;
  QObject::connect(&loader, &TraceLoader::finished,
                   [&result](std::shared_ptr<LoadResult> r) { result = std::move(r); });
  QSignalSpy finished(&loader, &TraceLoader::finished);
  loader.start({QString::fromStdString(path)});
  EXPECT_TRUE(loader.busy());
  ASSERT_TRUE(finished.wait(20000));
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->cancelled);
  EXPECT_GT(result->trace.event_count(), 250000u);
  loader.start({QString::fromStdString(path)});
  loader.cancel();
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_TRUE(result->cancelled);
  EXPECT_FALSE(loader.busy());
}


// The window shows the same one-line messages as the command line (in a message box).
QString ProblemsShown(const MainWindow& window) {
  auto* box = window.findChild<QMessageBox*>(QStringLiteral("problems"));
  return box ? box->text() : QString();
}

TEST(MainWindow, NamesADirectoryAsSuch) {
  MainWindow window;
  window.show();
  const std::string dir = testing::TempPath("window_dir");
  std::filesystem::create_directories(dir);
  window.openFiles({QString::fromStdString(dir)});
  EXPECT_EQ(ProblemsShown(window).toStdString(),
            dir + ": is a directory, expected a timeline or report file");
}

TEST(MainWindow, ShowsCutNamesLikeTheCommandLine) {
  MainWindow window;
  window.show();
  auto* loader = window.findChild<TraceLoader*>();
  QSignalSpy finished(loader, &TraceLoader::finished);
  const std::string path = testing::WriteTempFile(
      "window_long.json",
      R"([{"ph":"X","name":")" + std::string(100000, 'z') + R"(","pid":0,"ts":0,"dur":1}])");
  window.openFiles({QString::fromStdString(path)});
  ASSERT_TRUE(finished.wait(10000));
  const QString text = ProblemsShown(window);
  EXPECT_TRUE(text.startsWith(QString::fromStdString(path) +
                              ": event 0 (byte 1): \"name\" is 'zzz"))
      << text.toStdString();
  EXPECT_TRUE(text.contains("expected at most 4096 bytes; cut to 4096")) << text.toStdString();
  ASSERT_NE(window.timelinePanel()->view()->trace(), nullptr);  // still drawn
}

// Two reports at once: the first is shown, the second named in the problems box; a
// collective sweep opens in its own chart.
TEST(MainWindow, ASecondReportIsNamedAndASweepIsDrawn) {
  MainWindow window;
  window.show();
  const QString first = QString::fromStdString(testing::DataFile("report_small.json"));
  const QString second = QString::fromStdString(testing::DataFile("report_seeds.json"));
  const QString sweep = QString::fromStdString(testing::DataFile("collective_allreduce.json"));
  window.openFiles({first, second, sweep});
  EXPECT_TRUE(window.chartsPanel()->hasReport());
  EXPECT_TRUE(window.chartsPanel()->hasCollectiveReport());
  EXPECT_EQ(ProblemsShown(window), second + ": a second report (" + first +
                                       " is shown); hvdview shows one report at a time, open the others separately");
}

// Warnings alone (skipped or repaired events) stay in the bar above the tabs, not in a
// status-bar message that times out; the next load replaces them, and closing hides them.
TEST(MainWindow, WarningsStayInABarUntilTheNextLoad) {
  MainWindow window;
  window.show();
  auto* loader = window.findChild<TraceLoader*>();
  QSignalSpy finished(loader, &TraceLoader::finished);
  const std::string path = testing::WriteTempFile(
      "window_skipped.json", R"([{"ph":"X","name":"A","pid":0,"tid":0,"ts":0,"dur":1},
{"ph":"X","name":"B","pid":0,"tid":0,"ts":"2","dur":1},
{"ph":"E","pid":0,"tid":0,"ts":3}])");
  window.openFiles({QString::fromStdString(path)});
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(window.findChild<QMessageBox*>(QStringLiteral("problems")), nullptr);
  auto* bar = window.findChild<QWidget*>(QStringLiteral("warnings"));
  ASSERT_NE(bar, nullptr);
  EXPECT_TRUE(bar->isVisible());
  EXPECT_EQ(window.warningsShown().toStdString(),
            path + ": 1 ignored 'E' events without a matching 'B' (first at byte 111)\n" + path +
                ": 1 skipped events: events whose \"ts\" is not a number (first at byte 55)");
  EXPECT_TRUE(window.statusBar()->currentMessage().contains("1 events"));

  window.openFiles({QString::fromStdString(testing::DataFile("runtime_small.json"))});
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_FALSE(bar->isVisible());
  EXPECT_TRUE(window.warningsShown().isEmpty());

  window.openFiles({QString::fromStdString(path)});
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_TRUE(bar->isVisible());
  auto* close = bar->findChild<QToolButton*>();
  ASSERT_NE(close, nullptr);
  close->click();
  EXPECT_FALSE(bar->isVisible());
}

// A truncated file: the status bar's "N events" and the "kept the N complete events" line
// count the same events (metadata records not counted).
TEST(MainWindow, TruncatedFileHasOneEventCount) {
  MainWindow window;
  window.show();
  auto* loader = window.findChild<TraceLoader*>();
  QSignalSpy finished(loader, &TraceLoader::finished);
  const std::string path = testing::WriteTempFile(
      "window_trunc.json", R"([{"ph":"M","name":"process_name","pid":0,"args":{"name":"r0"}},
{"ph":"X","name":"A","pid":0,"tid":0,"ts":0,"dur":1},
{"ph":"X","name":"B","pid":0,"tid":0,"ts":2,"dur":1},
{"ph":"X","name":"C","pid":0,"tid":0,"ts":4,"du)");
  window.openFiles({QString::fromStdString(path)});
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_TRUE(ProblemsShown(window).contains(
      "kept the 2 complete events (metadata records and skipped events not counted)"))
      << ProblemsShown(window).toStdString();
  EXPECT_EQ(window.statusBar()->currentMessage(), "window_trunc.json: 2 events, 1 processes");
}

}  // namespace
}  // namespace hvdview
